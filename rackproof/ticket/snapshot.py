"""A snapshot: the facts of every node that a change can alter, read (never written) through
the probes, so that a change reviewer can see what a change did (rackproof.ticket.changes) and a
rollback can be proven exact.

Per node: hostname, interfaces (state, MTU, bond membership, addresses), lane links and
speeds, the routing table, /etc/hosts entries, netplan/NetworkManager/sshd configuration
files (mode, owner, group, sha256: never their content), bonds, forwarding, listening
sockets, package or driver versions, the fingerprints of the login's authorized keys, and on
a Spark the CX7 addresses no netplan file names (set with ip addr add: gone at a reboot).
No secret is stored. A fact a node would not give is kept as `unread` with the reason, so a
diff never takes "not read" for "removed"; an unreachable node is kept as such.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from pathlib import Path
from typing import Callable

from pydantic import BaseModel, ConfigDict, ValidationError

from rackproof.nodes.host import Host, ProbeFailed, connect
from rackproof.inventory.model import Inventory, Node, problem_lines
from rackproof.probes.bonding import BONDING
from rackproof.probes.ethtool import ETHTOOL
from rackproof.probes.files import CONFIG_FILES, HOSTS_FILE
from rackproof.probes.ip import ROUTES
from rackproof.probes.jetson import DPKG_VERSIONS
from rackproof.probes.nvidia_smi import NVIDIA_SMI
from rackproof.probes.sockets import LISTENING
from rackproof.probes.sshkeys import AUTHORIZED_KEYS
from rackproof.probes.sysctl import SYSCTL
from rackproof.probes.system import HOSTNAME
from rackproof.nodes.remote import EvidenceLog, NoAnswer, NodeUnreachable
from rackproof.probes.safetext import one_line
from rackproof.inventory.userinput import read_regular_file

SNAPSHOT_VERSION = "1.0"
PACKAGES = {"thor": ("nvidia-jetpack", "tensorrt")}   # the versions an engine build depends on
MAX_BYTES = 64 << 20   # a node's facts are kilobytes; a shelf of 256 nodes stays far below


class SnapshotError(Exception):
    """A file that is not a snapshot this version of rackproof reads."""


def take(inventory: Inventory, hosts: dict[str, Host]) -> dict:
    """Every node's facts, the nodes read side by side (each over its own connection)."""
    with ThreadPoolExecutor(max_workers=min(8, len(inventory.nodes))) as pool:
        facts = pool.map(lambda node: node_facts(inventory.cluster.platform, node, hosts[node.name]), inventory.nodes)
        nodes = {node.name: found for node, found in zip(inventory.nodes, facts)}
    return {
        "snapshot_version": SNAPSHOT_VERSION,
        "taken": dt.datetime.now().astimezone().isoformat(timespec="seconds"),
        "cluster": inventory.cluster.name,
        "nodes": nodes,
    }


def of_cluster(inventory: Inventory) -> dict:
    """A snapshot of every node, over connections of its own (closed after)."""
    hosts = connect(inventory, EvidenceLog())
    try:
        return take(inventory, hosts)
    finally:
        for host in hosts.values():
            host.remote.close()


def node_facts(platform: str, node: Node, host: Host) -> dict:
    """One node's entry of a snapshot."""
    facts: dict = {}
    unread: dict[str, str] = {}
    interfaces = functools.cache(host.interfaces)   # two facts read them: one `ip -j addr` a node
    readers: dict[str, Callable[[], object]] = {
        "hostname": lambda: host.read(HOSTNAME),
        "interfaces": lambda: _interfaces(interfaces()),
        "links": lambda: {lane: {"link": link.link_detected, "speed_mbps": link.speed_mbps} for lane, link in
                          host.read_each(ETHTOOL, [lane.name for lane in node.lanes if lane.connected]).items()},
        "routes": lambda: list(host.read(ROUTES)),
        "hosts": lambda: list(host.read(HOSTS_FILE)),
        "files": lambda: {path: asdict(f) for path, f in sorted(host.read(CONFIG_FILES).items())},
        "bonds": lambda: {node.bond.name: _bond(host, node.bond.name)} if node.bond else {},
        "sysctl": lambda: host.read(SYSCTL),
        "listening": lambda: sorted({f"{listener.local_address}:{listener.port}" for listener in host.read(LISTENING)}),
        "packages": lambda: _packages(platform, host),
        "authorized_keys": lambda: list(host.read(AUTHORIZED_KEYS)),
    }
    if node.cx7:   # the Spark guide's CX7 addresses: in netplan (persistent) or set with ip addr add
        readers["set_at_run_time"] = lambda: _set_at_run_time(host, [c.name for c in node.cx7], interfaces())
    for name, read in readers.items():
        try:
            facts[name] = read()
        except NodeUnreachable as e:
            return {"unreachable": one_line(e.reason)}
        except (ProbeFailed, NoAnswer, _Unknown) as e:
            unread[name] = one_line(str(e).splitlines()[0])
    return {**facts, "unread": unread}


class _Unknown(Exception):
    """A fact the node's answers leave open."""


def _set_at_run_time(host: Host, names: list[str], present: dict) -> list[str]:
    found, unreadable = host.set_at_run_time(names, present)
    if unreadable:
        raise _Unknown(f"{', '.join(unreadable)} cannot be read by the login (sudo -n grep)")
    return found


def _interfaces(present: dict) -> dict:
    # IPv6 link-local addresses follow from the MAC: not something a change configures
    return {i.name: {"state": i.state, "mtu": i.mtu, "master": i.master,
                     "addresses": [f"{a.local}/{a.prefixlen}" + (" dynamic" if a.dynamic else "")
                                   for a in i.addresses if not (a.family == "inet6" and a.scope == "link")]}
            for i in present.values()}


def _bond(host: Host, name: str) -> dict:
    bond = host.read(BONDING, bond=name)
    return {"mode": bond.mode, "xmit_hash_policy": bond.xmit_hash_policy, "miimon": bond.miimon,
            "lacp_rate": bond.lacp_rate, "members": [s.name for s in bond.slaves]}


def _packages(platform: str, host: Host) -> dict:
    if packages := PACKAGES.get(platform):
        return dict(sorted(host.read(DPKG_VERSIONS, packages=list(packages)).items()))
    banner = host.read(NVIDIA_SMI)
    return {"GPU driver": banner.driver_version, "CUDA": banner.cuda_version or "N/A"}


# The shape of a snapshot file, checked when it is read so that a diff never meets a value of
# another type. Facts left out are allowed (an older snapshot, a fact not read); facts and keys
# this version does not know are ignored (a later 1.x may add some).

class _Shape(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)


class _Interface(_Shape):
    state: str | None = None
    mtu: int | None = None
    master: str | None = None
    addresses: list[str] = []


class _Link(_Shape):
    link: bool | None = None
    speed_mbps: int | None = None


class _File(_Shape):
    mode: str
    owner: str
    group: str
    sha256: str | None


class _Bond(_Shape):
    mode: str | None = None
    xmit_hash_policy: str | None = None
    miimon: int | None = None
    lacp_rate: str | None = None
    members: list[str] = []


class _NodeFacts(_Shape):
    unreachable: str | None = None
    hostname: str | None = None
    interfaces: dict[str, _Interface] = {}
    links: dict[str, _Link] = {}
    routes: list[str] = []
    hosts: list[str] = []
    files: dict[str, _File] = {}
    bonds: dict[str, _Bond] = {}
    sysctl: dict[str, str] = {}
    listening: list[str] = []
    packages: dict[str, str] = {}
    authorized_keys: list[str] = []
    set_at_run_time: list[str] = []
    unread: dict[str, str] = {}


class _Snapshot(_Shape):
    snapshot_version: str
    taken: str | None = None
    cluster: str | None = None
    nodes: dict[str, _NodeFacts]


def write(snapshot: dict, path: str | Path) -> None:
    Path(path).write_text(json.dumps(snapshot, indent=1, sort_keys=True) + "\n")


def read(path: str | Path) -> dict:
    """A snapshot file, checked to be one: a SnapshotError names what is wrong."""
    shown = one_line(str(path))
    try:
        raw = read_regular_file(path, MAX_BYTES)
    except (OSError, ValueError) as e:   # ValueError: a NUL in the path
        reason = e.strerror if isinstance(e, OSError) and e.strerror else "not a usable path"
        raise SnapshotError(f"{shown}: cannot be read: {one_line(reason)}") from None
    if len(raw) > MAX_BYTES:
        raise SnapshotError(f"{shown}: not a rackproof snapshot (larger than {MAX_BYTES >> 20} MiB)")
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError) as e:   # a UnicodeDecodeError is a ValueError
        raise SnapshotError(f"{shown}: not a rackproof snapshot (not JSON: {one_line(str(e))})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("nodes"), dict):
        raise SnapshotError(f"{shown}: not a rackproof snapshot (no nodes)")
    version = doc.get("snapshot_version")
    if not isinstance(version, str) or version.split(".")[0] != SNAPSHOT_VERSION.split(".")[0]:
        raise SnapshotError(f"{shown}: snapshot version {one_line(repr(version))}; this rackproof reads "
                            f"{SNAPSHOT_VERSION.split('.')[0]}.x")
    try:
        _Snapshot.model_validate(doc)
    except ValidationError as e:
        problems = problem_lines(e, table="an object")
        more = f" (and {len(problems) - 1} more problems)" if len(problems) > 1 else ""
        raise SnapshotError(f"{shown}: not a rackproof snapshot: {one_line(problems[0])}{more}") from None
    return doc
