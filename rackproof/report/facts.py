"""What each node reported, for the Nodes and lanes tables.

Two sources: the evidence of commands whose answer is itself a fact (hostname, login,
addresses, L4T release, package versions, GPU driver; a lane's link, speed, FEC and LLDP
neighbour), read
through the probes; and facts that checks declare with the `facts` fixture
({node: {key: value}}), which win over the evidence.
"""

from __future__ import annotations

import datetime as dt

import shlex
from typing import Callable

from rackproof.probes.ethtool import parse_ethtool
from rackproof.probes.fec import parse_fec
from rackproof.probes.ip import parse_ip_addr
from rackproof.probes.lldp import newest_by_interface, parse_neighbours
from rackproof.probes.jetson import parse_dpkg_versions, parse_nv_tegra_release
from rackproof.probes.nvidia_smi import parse_nvidia_smi_banner

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


# a command's words -> reader of its stdout into node facts
NODE_READERS: list[tuple[Callable[[list[str]], bool], Callable[[str], dict]]] = [
    (lambda w: w == ["hostname"], lambda out: {"hostname": out.strip()}),
    (lambda w: w == ["id", "-un"], lambda out: {"login": out.strip()}),
    (lambda w: w == ["ip", "-j", "addr"], _addresses),
    (lambda w: w == ["cat", "/etc/nv_tegra_release"], _l4t),
    (lambda w: w[:2] == ["dpkg-query", "-W"], parse_dpkg_versions),
    (lambda w: w == ["nvidia-smi"], _gpu),
]


def _interface_facts(words: list[str], stdout: str) -> dict[str, dict]:
    """{interface: facts} from `ethtool IFACE`, `ethtool --show-fec IFACE` or lldpcli (every
    interface's newest LLDP neighbour: "sw-25g swp7", "spark-2 enp1s0f1np1")."""
    if len(words) == 2 and words[0] == "ethtool":
        info = parse_ethtool(stdout, words[1])
        link = {True: "yes", False: "no"}.get(info.link_detected)
        return {words[1]: {"link": link, "speed": f"{info.speed_mbps}Mb/s" if info.speed_mbps else None}}
    if len(words) == 3 and words[:2] == ["ethtool", "--show-fec"]:
        return {words[2]: {"fec": ", ".join(parse_fec(stdout, words[2]).active)}}
    if words[:1] == ["lldpcli"] and "neighbors" in words:
        return {iface: {"LLDP": " ".join(filter(None, (n.system, (n.port_names() or ("",))[0])))}
                for iface, n in newest_by_interface(parse_neighbours(stdout)).items()}
    return {}


def collect(tests: list[dict]) -> tuple[dict, dict]:
    """(node facts {node: {key: value}}, interface facts {(node, iface): {key: value}})."""
    nodes: dict[str, dict] = {}
    interfaces: dict[tuple[str, str], dict] = {}
    for test in tests:
        for ev in test["evidence"]:
            if ev["exit_status"] != 0:
                continue
            try:
                words = [w for w in shlex.split(ev["command"]) if w != "LC_ALL=C"]
                for matches, read in NODE_READERS:
                    if matches(words):
                        nodes.setdefault(ev["node"], {}).update(read(ev["stdout"]))
                found = _interface_facts(words, ev["stdout"])
            except ValueError:  # unsplittable, or unreadable (ParseError): the check reports it
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
