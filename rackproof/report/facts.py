"""What each node reported, for the Nodes and lanes tables.

Two sources: the evidence of commands whose answer is itself a fact (hostname, login,
addresses, L4T release, package versions, GPU driver; a lane's link, speed, FEC and LLDP
neighbour), found by the probe that made each (evidence[].probe and .values) and read with
its parser; and facts that checks declare with the `facts` fixture
({node: {key: value}}), which win over the evidence.
"""

from __future__ import annotations

import datetime as dt

from typing import Callable

from rackproof.probes.ethtool import ETHTOOL, parse_ethtool
from rackproof.probes.fec import FEC, parse_fec
from rackproof.probes.ip import ADDRESSES, parse_ip_addr
from rackproof.probes.jetson import DPKG_VERSIONS, NV_TEGRA_RELEASE, parse_dpkg_versions, parse_nv_tegra_release
from rackproof.probes.lldp import NEIGHBOURS, newest_by_interface, parse_neighbours
from rackproof.probes.nvidia_smi import NVIDIA_SMI, parse_nvidia_smi_banner
from rackproof.probes.system import HOSTNAME, LOGIN

REACHED, UNREACHABLE, NOT_CONTACTED = "reached", "unreachable", "not contacted"


def _addresses(stdout: str) -> dict:
    found = [f"{i.name} {a.local}/{a.prefixlen}" for i in parse_ip_addr(stdout) for a in i.addresses
             if a.family == "inet" and a.scope != "host"]
    return {"addresses": ", ".join(found)}


def _l4t(stdout: str) -> dict:
    release = parse_nv_tegra_release(stdout)
    return {"L4T": f"{release.release}.{release.revision}"}


def _gpu(stdout: str) -> dict:
    banner = parse_nvidia_smi_banner(stdout)
    return {"GPU driver": banner.driver_version, "CUDA": banner.cuda_version or "N/A"}


# the probe that made a command -> reader of its stdout into node facts
NODE_READERS: dict[str, Callable[[str], dict]] = {
    HOSTNAME.name: lambda out: {"hostname": out.strip()},
    LOGIN.name: lambda out: {"login": out.strip()},
    ADDRESSES.name: _addresses,
    NV_TEGRA_RELEASE.name: _l4t,
    DPKG_VERSIONS.name: parse_dpkg_versions,
    NVIDIA_SMI.name: _gpu,
}


def _interface_facts(probe: str, values: dict, stdout: str) -> dict[str, dict]:
    """{interface: facts} from `ethtool IFACE`, `ethtool --show-fec IFACE` or lldpcli (every
    interface's newest LLDP neighbour: "sw-25g swp7", "spark-2 enp1s0f1np1")."""
    if probe == ETHTOOL.name:
        info = parse_ethtool(stdout, values["interface"])
        link = {True: "yes", False: "no"}.get(info.link_detected)
        return {values["interface"]: {"link": link, "speed": f"{info.speed_mbps}Mb/s" if info.speed_mbps else None}}
    if probe == FEC.name:
        return {values["interface"]: {"fec": ", ".join(parse_fec(stdout, values["interface"]).active)}}
    if probe == NEIGHBOURS.name:
        return {iface: {"LLDP": " ".join(filter(None, (n.system, (n.port_names() or ("",))[0])))}
                for iface, n in newest_by_interface(parse_neighbours(stdout)).items()}
    return {}


def collect(tests: list[dict]) -> tuple[dict, dict]:
    """(node facts {node: {key: value}}, interface facts {(node, iface): {key: value}}), read
    from the evidence by the probe that made each command and its values."""
    nodes: dict[str, dict] = {}
    interfaces: dict[tuple[str, str], dict] = {}
    for test in tests:
        for ev in test["evidence"]:
            if ev["exit_status"] != 0:
                continue
            try:
                if ev["probe"] in NODE_READERS:
                    nodes.setdefault(ev["node"], {}).update(NODE_READERS[ev["probe"]](ev["stdout"]))
                found = _interface_facts(ev["probe"], ev["values"], ev["stdout"])
            except (ValueError, KeyError):  # unreadable (ParseError), or a value missing: the check reports it
                continue
            for iface, said in found.items():
                interfaces.setdefault((ev["node"], iface), {}).update({k: v for k, v in said.items() if v is not None})
    for test in tests:
        for node, declared in test["facts"].items():
            nodes.setdefault(node, {}).update(declared)
    return nodes, interfaces


def reachability(tests: list[dict]) -> dict[str, dict]:
    """{node: {"status": reached | unreachable, "reason": ..., ["since": ISO time]}} of the nodes
    any command was sent to: reached when the last command sent got through (a command that
    timed out got through too); unreachable since the first fresh connect that failed after it."""
    seen: dict[str, dict] = {}
    evidence = sorted((ev for test in tests for ev in test["evidence"]), key=lambda ev: ev.get("started") or 0.0)
    for ev in evidence:
        entry = seen.setdefault(ev["node"], {"status": REACHED, "reason": ""})
        if not ev["note"].startswith("unreachable"):
            seen[ev["node"]] = {"status": REACHED, "reason": ""}
        elif entry["status"] == REACHED:
            since = dt.datetime.fromtimestamp(ev.get("started") or 0.0, dt.timezone.utc).isoformat(timespec="seconds")
            seen[ev["node"]] = {"status": UNREACHABLE, "reason": ev["note"].removeprefix("unreachable: "), "since": since}
    return seen
