"""The golden-configuration table: node x setting (kernel, system firmware, L4T, packages, GPU
driver, CUDA, power mode, each NIC's driver and firmware, each RDMA device's PCIe link, the
head's container images, the NCCL each host loaded), so that a reviewer sees the whole cluster's configuration at once.

Each cell is read from the evidence of the run's checks, by the probe that made the command
(evidence[].probe and .values) and its own parser, as the Nodes table's facts are: nothing is
asked of a node for the table. A cell is:

- same: the value most nodes have (or the one the inventory pins);
- odd: another value than the pinned one, else than the majority's; with no majority (two
  nodes, two values) every value is odd: the table cannot say which one is right;
- unread: the node was asked and did not say (an exit status, a parse error, an unreachable
  node, a file it has not), with why: never taken for equal;
- not asked: no check of the run asked this node (an image is looked for on the head only).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Callable

from rackproof.probes.probe import IN_C_LOCALE, Probe
from rackproof.probes import ParseError
from rackproof.probes.counters import DRIVER
from rackproof.probes.docker import IMAGE_ID, Image
from rackproof.probes.ethtool import DRIVER_INFO
from rackproof.probes.jetson import DPKG_VERSIONS, NV_TEGRA_RELEASE, NVPMODEL
from rackproof.probes.nccl import NCCL_TEST
from rackproof.probes.nvidia_smi import NVIDIA_SMI
from rackproof.probes.rdmasysfs import RDMA_SYSFS
from rackproof.probes.release import BIOS, KERNEL, Firmware
from rackproof.judging.versions import JETPACK_PACKAGES, matches

SAME, ODD, UNREAD, NOT_ASKED = "same", "odd", "unread", "not asked"


class Unread(str):
    """Why a node's answer gives no value for a setting."""


class PerNode(dict):
    """What one command says of several nodes (mpirun's NCCL, of each rank's host): node -> value."""


@dataclass(frozen=True)
class Reader:
    probe: Probe
    settings: Callable[[dict], list[str]]          # the settings a command of these values answers
    read: Callable[[dict, object], dict]           # values, parsed answer -> {setting: value | Unread}


def _firmware(found: Firmware) -> str | Unread:
    return found.version if found.version else Unread(found.unread)


def _image(found: Image) -> str | Unread:
    return found.id if found.id else Unread(found.unusable or "not in the node's Docker")


def _nccl(found) -> PerNode:
    """The NCCL each host of the collective loaded, as its INFO lines say (a development build's
    git version beside it); a run without NCCL_DEBUG lines says of no host."""
    hosts = [h for h in (found.setup.hosts if found.setup else ()) if h.host]
    return PerNode({h.host: h.version + (f" (git {h.git})" if h.git else "") if h.version
                    else Unread("NCCL printed no version line") for h in hosts})


def _packages(values: dict, found: dict) -> dict:
    return {f"{name} (dpkg)": found.get(name) or Unread("not installed") for name in values["packages"]}


# in the table's order; the [expect] field that pins a setting (rackproof.judging.versions compares them alike)
READERS = [
    Reader(KERNEL, lambda v: ["kernel"], lambda v, found: {"kernel": found}),
    Reader(BIOS, lambda v: ["system firmware (BIOS/UEFI)"],
           lambda v, found: {"system firmware (BIOS/UEFI)": _firmware(found)}),
    Reader(NV_TEGRA_RELEASE, lambda v: ["L4T"], lambda v, found: {"L4T": f"{found.release}.{found.revision}"}),
    Reader(DPKG_VERSIONS, lambda v: [f"{name} (dpkg)" for name in v["packages"]], _packages),
    Reader(NVIDIA_SMI, lambda v: ["GPU driver", "CUDA"],
           lambda v, found: {"GPU driver": found.driver_version, "CUDA": found.cuda_version or Unread("N/A")}),
    Reader(NVPMODEL, lambda v: ["power mode (nvpmodel)"], lambda v, found: {"power mode (nvpmodel)": found.name}),
    # a NIC's driver and firmware (sparkhw's CX7 facts), a lane's driver (its error counters' reading)
    Reader(DRIVER_INFO, lambda v: [f"{v['interface']} driver", f"{v['interface']} firmware"],
           lambda v, found: {f"{v['interface']} driver": found.driver,
                             f"{v['interface']} firmware": found.firmware or Unread("no firmware-version line")}),
    Reader(DRIVER, lambda v: [f"{v['interface']} driver"], lambda v, found: {f"{v['interface']} driver": found}),
    Reader(RDMA_SYSFS, lambda v: [f"{v['device']} PCIe link"],
           lambda v, found: {f"{v['device']} PCIe link": str(found.pcie)}),
    Reader(IMAGE_ID, lambda v: [f"image {v['image']}"], lambda v, found: {f"image {v['image']}": _image(found)}),
    # each rank's host, from the collective's own debug lines (helper nccl's parse); by the host's name
    Reader(NCCL_TEST, lambda v: ["NCCL"], lambda v, found: {"NCCL": _nccl(found)}),
]
PINS = {"L4T": "l4t_release", "GPU driver": "driver_version", "CUDA": "cuda_version",
        "power mode (nvpmodel)": "power_mode", **{f"{name} (dpkg)": pin for name, pin in JETPACK_PACKAGES.items()}}


def _unread(ev: dict, probe: Probe) -> str | None:
    """Why a command gave no answer to read, or None when it did."""
    if ev["note"] and ev["exit_status"] is None:
        return ev["note"].splitlines()[0]
    if ev["exit_status"] not in probe.ok_exit:
        said = (ev["stderr"].strip() or ev["stdout"].strip()).splitlines()
        return f"exit status {ev['exit_status']}" + (f": {said[0][:200]}" if said else "")
    return None


def _source(probe: Probe) -> str:
    """What a setting is read by: its command, or the probe's name (`rackproof probes`) for a long one."""
    command = probe.shown.removeprefix(IN_C_LOCALE)
    return command if len(command) <= 60 else probe.name


def _cells(tests: list[dict]) -> tuple[dict[str, tuple[int, str]], dict[str, dict[str, str | Unread]]]:
    """({setting: (its reader's place, the command it is read from)}, {setting: {node: value |
    Unread}}), the newest answer of each node winning."""
    readers = {r.probe.name: r for r in READERS}
    place = {r.probe.name: i for i, r in enumerate(READERS)}
    sources: dict[str, tuple[int, str]] = {}
    found: dict[str, dict[str, str | Unread]] = {}
    evidence = sorted((ev for test in tests for ev in test["evidence"] if ev.get("probe") in readers),
                      key=lambda ev: ev.get("started") or 0.0)
    for ev in evidence:
        reader, values = readers[ev["probe"]], ev.get("values") or {}
        try:
            why = _unread(ev, reader.probe)
            said = ({name: Unread(why) for name in reader.settings(values)} if why else
                    reader.read(values, reader.probe.parse(ev["stdout"], values)))
        except ParseError as e:
            said = {name: Unread(f"not read: {e}") for name in reader.settings(values)}
        except (KeyError, TypeError):   # values a probe did not record: nothing to name the setting by
            continue
        for name, value in said.items():
            sources.setdefault(name, (place[ev["probe"]], _source(reader.probe)))
            cells = found.setdefault(name, {})
            for node, told in (value.items() if isinstance(value, PerNode) else [(ev["node"], value)]):
                if isinstance(told, Unread) and node in cells and not isinstance(cells[node], Unread):
                    continue   # a later command cut short does not hide what the node said
                cells[node] = told
    return sources, found


def build(nodes: list[str], tests: list[dict], expect) -> list[dict]:
    """Each setting some check read: its command, its pin, and every node's cell with its state."""
    sources, found = _cells(tests)
    rows = []
    # in the readers' order; a reader's settings as it names them (stable: the first answer's order)
    for name, cells in sorted(found.items(), key=lambda item: sources[item[0]][0]):
        pinned = getattr(expect, PINS[name], None) if name in PINS else None
        values = [v for v in cells.values() if not isinstance(v, Unread)]
        counts = Counter(values).most_common()
        if pinned:
            expected, basis = str(pinned), "pinned in the inventory"
        elif len(counts) > 1 and counts[0][1] == counts[1][1]:
            expected, basis = None, "no majority: the values differ"
        else:
            expected, basis = (counts[0][0], "most nodes") if counts else (None, "no node said")
        row = {}
        for node in nodes:
            if node not in cells:
                row[node] = {"value": None, "unread": "", "state": NOT_ASKED}
            elif isinstance(cells[node], Unread):
                row[node] = {"value": None, "unread": str(cells[node]), "state": UNREAD}
            else:
                same = expected is not None and (matches(cells[node], expected) if pinned else cells[node] == expected)
                row[node] = {"value": cells[node], "unread": "", "state": SAME if same else ODD}
        rows.append({"setting": name, "source": sources[name][1], "pinned": str(pinned) if pinned else None,
                     "expected": expected, "basis": basis, "cells": row})
    return rows
