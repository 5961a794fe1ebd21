"""The path MTU between cluster nodes, proven with don't-fragment pings (ping -M do): a packet of
exactly the MTU must cross whole, and one byte more must not.

Over a bond every member is proven on its own (Host.path_mtu steers one ping per member by its
echo identifier): an unsteered ping crosses the one member its hash gives, so a LAG member's
switch port left at a lower MTU passed it while the TCP streams hashed onto that member stalled.

A path that drops full-size frames lets a TCP connection through its handshake and then stalls
it, which a throughput check would otherwise blame on the lane, the cable or the hosts:
`blocked` is the evidence the plan's diagnosis phase finds for such a check before it names a
cause (rackproof.measuring.diagnosis).
"""

from __future__ import annotations

from dataclasses import dataclass

from rackproof.nodes.host import Host
from rackproof.inventory.model import ClusterAtStep, Node
from rackproof.probes.ping import PingResult

CHECK = "test_packets_of_the_mtu_cross_whole_and_no_larger"


def mtu_of(host: Host, cluster: ClusterAtStep) -> int:
    """The cluster's MTU: the inventory's, else the one the node's cluster interface has."""
    return cluster.expect.mtu or host.interfaces()[cluster.cluster_interface(host.spec)].mtu


def members(cluster: ClusterAtStep, node: Node) -> list[str]:
    """The bond members a node's cluster traffic is spread over, in bond order ([] unbonded)."""
    return list(node.bond.lanes) if cluster.bonded(node) else []


@dataclass(frozen=True)
class Blocked:
    """Packets of the MTU from `sender` that got no reply from `receiver`: over `lanes` of the
    sender's bond members (all of them: `every`), or with no bond."""
    sender: str
    receiver: str
    mtu: int
    lanes: tuple[str, ...]
    every: bool

    def __str__(self) -> str:
        over = "" if not self.lanes else " over any bond member" if self.every else \
            f" over {self.sender} {', '.join(self.lanes)} (over its other members they cross)"
        return (f"packets of the MTU ({self.mtu} bytes, don't-fragment) sent from {self.sender}{over} get no reply "
                f"from {self.receiver}: a path that drops full-size frames (a switch port or LAG, on either node's "
                f"side, with a lower MTU than the nodes': {CHECK} names it); TCP gets through its handshake there "
                "and then stalls")


def blocked(sender: Host, receiver: Node, cluster: ClusterAtStep) -> Blocked | None:
    """Whether packets of the MTU cross from `sender` to `receiver`'s cluster address, over
    each of the sender's bond members; None when they do."""
    lanes = members(cluster, sender.spec)
    mtu = mtu_of(sender, cluster)
    fits, _ = sender.path_mtu([receiver.ip], mtu, max(len(lanes), 1))
    lost = [k for k, result in enumerate(fits[receiver.ip]) if not result.received]
    if not lost:
        return None
    return Blocked(sender.name, receiver.name, mtu, tuple(lanes[k] for k in lost) if len(lanes) > 1 else (),
                   len(lost) == len(fits[receiver.ip]))


def problems_of(host: Host, cluster: ClusterAtStep, hosts: dict[str, Host]) -> list[str]:
    """What is wrong with the paths from a node to every other node, read with its pings."""
    peers = {n.ip: n for n in cluster.nodes if n.address and n.name != host.name}
    mtu = mtu_of(host, cluster)
    lanes = members(cluster, host.spec)
    fits, over = host.path_mtu(list(peers), mtu, max(len(lanes), 1))
    return problems(host.name, mtu, {ip: peer.name for ip, peer in peers.items()}, fits, over,
                    cluster.cluster_interface(host.spec),
                    [(lane, cluster.where(host.spec, host.spec.lane(lane))) for lane in lanes],
                    lambda ip: hosts[peers[ip].name].interfaces().get(cluster.cluster_interface(peers[ip])),
                    host.interfaces)


def problems(node: str, mtu: int, peers: dict[str, str], fits: dict[str, tuple[PingResult, ...]],
             over: dict[str, PingResult], iface: str, members: list[tuple[str, str]], theirs, mine) -> list[str]:
    """What is wrong with a node's paths, from its don't-fragment pings to each peer (address ->
    name): `fits`, a packet of the MTU over each of `members` ((lane, how a failure names it),
    bond order; one unsteered packet without a bond), `over`, one of mtu + 1. Packets lost
    towards every peer (two or more) are the node's own side's (`iface`, its switch port or
    LAG); a member that carries them to no peer while others do is its own path's (its MTU, its
    switch port); one that fails towards one peer only points at that peer's side.
    theirs(address) reads a peer's cluster interface, mine() the node's interfaces (only when
    needed)."""
    failed = {ip: {k for k, result in enumerate(fits[ip]) if not result.received} for ip in peers}
    steered = len(members) > 1
    if len(peers) > 1 and all(len(failed[ip]) == len(fits[ip]) for ip in peers):
        own = mine().get(iface)
        why = f"{iface} has MTU {own.mtu}" if own is not None and own.mtu != mtu else \
            f"own switch port{' or LAG' if steered else ''} drops them: its MTU is below {mtu}"
        return [f"{node} -> every peer: a {mtu}-byte packet got no reply"
                + (" over any bond member" if steered else "") + f" ({node}'s {why})"]
    own = [k for k in range(len(members)) if steered and all(k in failed[ip] for ip in peers)
           and any(len(failed[ip]) < len(members) for ip in peers)]
    found = [_own_member(mtu, *members[k], mine) for k in own]
    for ip, peer in peers.items():
        pair = f"{node} -> {peer}"
        rest = sorted(failed[ip] - set(own))
        if failed[ip] and len(failed[ip]) == len(fits[ip]):
            iface = theirs(ip)
            where = f"{iface.name} has MTU {iface.mtu}" if iface is not None and iface.mtu != mtu else \
                "something on the path (the switch ports' MTU) drops them"
            first = fits[ip][min(failed[ip])]
            found.append(f"{pair}: a {mtu}-byte packet got {first.error or 'no reply'}"
                         + (" over every bond member" if steered else "") + f" ({peer} {where})")
        elif rest:
            lanes = ", ".join(members[k][0] for k in rest)
            found.append(f"{pair}: a {mtu}-byte packet sent over {lanes} got no reply, while over {node}'s other "
                         f"members it crossed and {lanes} carried it to other peers: it is dropped on {peer}'s side "
                         f"(a port of its LAG; {peer}'s own check names the member)")
        if over[ip].received:
            found.append(f"{pair}: a {mtu + 1}-byte packet crossed whole (an MTU above {mtu} on the way)")
    return found


def _own_member(mtu: int, lane: str, where: str, mine) -> str:
    iface = mine().get(lane)
    why = f"{lane} has MTU {iface.mtu}" if iface is not None and iface.mtu != mtu else \
        f"its switch port drops them: the port's MTU is below {mtu}"
    return f"{where}: a {mtu}-byte packet sent over it got no reply from any peer, over the other members it crossed ({why})"
