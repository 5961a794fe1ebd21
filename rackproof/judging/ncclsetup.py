"""What NCCL's own debug lines and the nodes' NCCL settings say is wrong with its set-up on a
Spark pair (issue 43): the causes the NCCL check names, beside its bus bandwidth.

Sources: NVIDIA/dgx-spark-playbooks#102 and #103 (two Sparks on one QSFP cable at ~3 GB/s: one
HCA in NCCL_IB_HCA, MTU 1500, a development build of NCCL at 3.04 GB/s against 23.74 GB/s from
the v2.28.9-1 tag); NCCL's src/misc/param.cc (the environment, then NCCL_CONF_FILE or
~/.nccl.conf, then /etc/nccl.conf, a value set first kept).
"""

from __future__ import annotations

from dataclasses import dataclass

from rackproof.probes.nccl import NCCL_SETTINGS, NcclSettings, NcclSetup, development_build

# only where NCCL's log goes: never a cause of how it runs
_LOGGING = ("NCCL_DEBUG", "NCCL_DEBUG_SUBSYS", "NCCL_DEBUG_FILE", "NCCL_DEBUG_TIMESTAMP_FORMAT")
# NVIDIA's Spark guides set the CX7 interfaces to 9000; they come up at 1500 (dgx-spark-playbooks#102/#25)
JUMBO = 9000


@dataclass(frozen=True)
class NodeNccl:
    """What a node adds to NCCL's set-up beyond the run's own settings."""
    node: str
    settings: NcclSettings
    mtus: tuple[tuple[str, int | None], ...]    # (CX7 interface, its MTU; None: no such interface)


def read_node(host) -> NodeNccl:
    """The node's NCCL settings and the MTU of each of its inventory's CX7 interfaces."""
    found = host.interfaces()
    return NodeNccl(host.name, host.read(NCCL_SETTINGS),
                    tuple((c.name, found[c.name].mtu if c.name in found else None) for c in host.spec.cx7))


def inventory_settings(expect) -> dict[str, str]:
    """The NCCL_* variables the inventory sets for the cluster's jobs (passed to every rank)."""
    settings = {"NCCL_IB_HCA": expect.nccl_ib_hca, "NCCL_IB_GID_INDEX": expect.nccl_ib_gid_index}
    return {name: str(value) for name, value in settings.items() if value is not None}


def causes(setup: NcclSetup | None, facts: tuple[NodeNccl, ...], nodes, expect) -> list[str]:
    """Each cause found, one sentence each, node by node: a development build, a CX7 port
    whose two PCIe functions NCCL does not both use, and NCCL settings on the node beyond the
    inventory's (`nodes`: the inventory's CX7 nodes, the first one mpirun's)."""
    ours = {"NCCL_SOCKET_IFNAME": nodes[0].cx7[0].name, **inventory_settings(expect)}
    found: list[str] = []
    by_node = {f.node: f.settings for f in facts}
    for node in nodes:
        host = setup.of(node.name) if setup is not None else None
        if host is None:
            found.append(f"{node.name}: no NCCL debug line from its rank (NCCL's set-up there is unknown)")
        else:
            found += [f"{node.name}: {cause}" for cause in _build(host.version, host.git) + _functions(node, host)]
        if node.name in by_node:
            found += [f"{node.name}: {cause}" for cause in _leftovers(by_node[node.name], ours)]
    return found


def _build(version: str | None, git: str | None) -> list[str]:
    why = development_build(version, git)
    return [f"NCCL {version} is a development build ({why}), not a release tag: a development build moved "
            "3.04 GB/s where the v2.28.9-1 tag moved 23.74 GB/s on the same pair (dgx-spark-playbooks#102)"] \
        if why else []


def _functions(node, host) -> list[str]:
    """Both PCIe functions of the cabled port (the inventory's CX7 devices) in NET/IB's list."""
    hca = host.setting("NCCL_IB_HCA")
    named = f"NCCL_IB_HCA={hca}" if hca is not None else "NCCL_IB_HCA unset"
    if host.network == "Socket" or host.devices == ():
        return [f"NCCL used no RoCE device ({named}, network {host.network or 'none'}): its data went over TCP "
                "sockets (~3 GB/s)"]
    if host.devices is None:
        return ["no 'NET/IB : Using' line: which RoCE devices NCCL used is unknown"]
    unused = [c.rdma_device for c in node.cx7 if c.rdma_device not in host.devices]
    if not unused:
        return []
    return [f"NCCL uses {', '.join(host.devices)} and not {', '.join(unused)} ({named}): one PCIe function of the "
            "port carries NCCL, ~98 Gb/s instead of ~160+; NCCL_IB_HCA must name both functions of each cabled "
            "port"]


def _leftovers(settings: NcclSettings, ours: dict[str, str]) -> list[str]:
    """Every NCCL setting of the node that is not the inventory's, where it comes from."""
    found = []
    for where, name, value in settings.sources():
        if name in _LOGGING or ours.get(name) == value:
            continue
        theirs = f"the inventory's is {ours[name]}" if name in ours else "the inventory sets no such thing"
        jobs = "started from the login" if where == "the login's environment" else "on the node that does not set it"
        found.append(f"{where} sets {name}={value} ({theirs}): every NCCL job {jobs} gets it")
    return found


def slow_causes(facts: tuple[NodeNccl, ...]) -> list[str]:
    """What else holds a bus bandwidth down: CX7 interfaces under the jumbo MTU NVIDIA's guides set."""
    low = [f"{f.node} {name} {mtu}" for f in facts for name, mtu in f.mtus if mtu is not None and mtu < JUMBO]
    return [f"CX7 interfaces under MTU {JUMBO}: {', '.join(low)} (NVIDIA's Spark guides set {JUMBO}; the interfaces "
            "come up at 1500)"] if low else []
