"""An 802.3ad bond without the bonding module.

The node has a veth pair bond0 <-> bond0p. bond0 carries the cluster address. Whatever the node
sends on bond0 arrives on bond0p, whose tc ingress redirects it (act_mirred) out of one of the
lanes that are up; whatever arrives on a lane is redirected back out of bond0p, so it is
received on bond0. The switch does the same for its side of the LAG: each bonded node's ports
feed one bridge port (lag<i>), whose peer spreads the frames for that node over the node's up
ports. One TCP connection therefore stays on one lane.

Which lane a connection takes is the kernel's layer3+4 choice (rackproof.probes.bondhash, the module
the suite chooses its client ports with): the hash of the connection's addresses and ports,
modulo the members that are up, in bond order. The monitor (monitor.py; lanes every 100 ms like
miimon, connections every 200 ms) reads each bonded node's TCP connections on the cluster
subnet (sock_diag, as `ss` does) and pins each new one to that lane with one exact-match filter
(flow_line), on the node (bond0p) and on the switch (the LAG towards the node, hashed the same
way for frames in that direction: a switch set to balance on IP and L4 ports). Four connections
from ports connect() picks therefore share lanes about nine times in ten, as on a real bond.
When a lane goes down or comes back, every connection is hashed again over the lanes up, as
the kernel does. Until the monitor has seen a connection (its first 200 ms at most), and for
UDP, a static stand-in applies: two bits of each port ((port >> 1) & 3, XORed), which is the
kernel's choice only for some addresses and ports. ICMP echoes between the rack's cluster
addresses take the member the kernel's hash of their identifier gives (with 2 or 4 members
up), so that a ping steered with `ping -e` crosses the member it was meant for.
"""

from __future__ import annotations

from typing import Sequence

from rackproof.probes import bondhash
from rackproof.probes.bonding import LACP_MODE, BondInfo, BondSlave
from rackproof_sim.formats.bonding import render_bonding

HASH_BITS = 2          # the static stand-in's buckets: two bits of each port, 4 buckets
BOND_PEER = "bond0p"


def lane_for(src: str, dst: str, sport: int, dport: int, up: Sequence[str]) -> str:
    """The member (of `up`, in bond order) that carries src:sport -> dst:dport."""
    return up[bondhash.member(src, dst, sport, dport, len(up))]


def _hash_filters(dev: str, targets: list[str]) -> list[str]:
    lines = []
    for proto in (6, 17):
        for s in range(1 << HASH_BITS):
            for d in range(1 << HASH_BITS):
                bucket = s ^ d
                target = targets[bucket % len(targets)]
                lines.append(
                    f"filter add dev {dev} ingress protocol ip prio 10 u32 "
                    f"match ip protocol {proto} 0xff "
                    f"match u16 0x{s << 1:04x} 0x0006 at 20 match u16 0x{d << 1:04x} 0x0006 at 22 "
                    f"action mirred egress redirect dev {target}")
    lines.append(f"filter add dev {dev} ingress protocol all prio 100 u32 match u32 0 0 "
                 f"action mirred egress redirect dev {targets[0]}")
    return lines


def _echo_filters(dev: str, targets: list[str], echoes) -> list[str]:
    """ICMP echoes (requests and replies) between each (source, destination) of `echoes`, on the
    member the kernel's hash of their identifier gives (bondhash.echo_member). Over 2 or 4
    members that member depends on the identifier's bits 1, 2, 9 and 10 only, so 16 filters per
    address pair are exact; a hash modulo 3 depends on every bit, so with 3 members up echoes
    take the first (the catch-all filter), as with one."""
    if len(targets) not in (2, 4):
        return []
    lines = []
    for src, dst in echoes:
        for bits in range(16):
            ident = (bits & 3) << 1 | (bits >> 2) << 9
            target = targets[bondhash.echo_member(src, dst, ident, len(targets))]
            lines.append(f"filter add dev {dev} ingress protocol ip prio 10 u32 match ip protocol 1 0xff "
                         f"match ip src {src}/32 match ip dst {dst}/32 match u8 0 0xf7 at 20 "
                         f"match u16 0x{ident:04x} 0x0606 at 24 action mirred egress redirect dev {target}")
    return lines


def spread_lines(dev: str, targets: list[str], *, first: bool = False, echoes=()) -> list[str]:
    """tc batch lines: (re)classify what arrives on `dev` over `targets` (the up lanes/ports);
    `echoes`: the (source, destination) addresses of the pings that cross `dev`. The
    per-connection filters (prio 5, see flow_line) are left alone."""
    lines = [] if first else [f"filter del dev {dev} ingress prio 10", f"filter del dev {dev} ingress prio 100"]
    if targets:
        lines += _hash_filters(dev, targets) + _echo_filters(dev, targets, echoes)
    return lines


def anchor_line(dev: str) -> str:
    """The first u32 filter on `dev`: it makes prio 5's hash table 800: (so the per-connection
    filters can be named 800::N) and never matches (IP protocol 255 is reserved)."""
    return (f"filter add dev {dev} ingress protocol ip prio 5 handle 800::fff u32 "
            f"match ip protocol 255 0xff classid 1:1")


def flow_line(dev: str, handle: int, src: str, dst: str, sport: int, dport: int, target: str) -> str:
    """Pin one TCP connection (as seen arriving on `dev`) to `target`."""
    return (f"filter replace dev {dev} ingress protocol ip prio 5 handle 800::{handle:x} u32 "
            f"match ip src {src}/32 match ip dst {dst}/32 match ip sport {sport} 0xffff "
            f"match ip dport {dport} 0xffff action mirred egress redirect dev {target}")


def flow_del_line(dev: str, handle: int) -> str:
    return f"filter del dev {dev} ingress protocol ip prio 5 handle 800::{handle:x} u32"


def collect_lines(lanes: list[str], dev: str) -> list[str]:
    """tc batch lines: everything that arrives on a lane goes to `dev` (bond0p / the LAG peer)."""
    lines = []
    for lane in lanes:
        lines.append(f"qdisc add dev {lane} clsact")
        lines.append(f"filter add dev {lane} ingress protocol all prio 1 u32 match u32 0 0 "
                     f"action mirred egress redirect dev {dev}")
    return lines


# --- /proc/net/bonding/bond0 ------------------------------------------------------------------

SWITCH_SYSTEM_MAC = "b8:59:9f:2a:10:00"   # the LAG partner (the switch)


def bonding_view(node_index: int, bond: dict, lanes: list[dict], *, kernel: str = "6.8.12-tegra") -> str:
    """The kernel's /proc/net/bonding/bond0 text for a bond whose lanes are `lanes`:
    [{name, up, speed, mac, failures}], in bond order, printed by rackproof.probes.bonding's
    renderer, so the parser and the rack agree on one format."""
    up = any(lane["up"] for lane in lanes)
    slaves = []
    for k, lane in enumerate(lanes, start=1):
        on = lane["up"]
        slaves.append(BondSlave(
            name=lane["name"], mii_status="up" if on else "down",
            speed_mbps=lane["speed"] if on else None, duplex="full" if on else None,
            link_failure_count=lane.get("failures", 0), perm_hwaddr=lane["mac"],
            aggregator_id=1 if on else len(lanes) + k,
            actor_port_state=61 if on else 69,
            partner_mac=SWITCH_SYSTEM_MAC if on else "00:00:00:00:00:00",
            partner_oper_key=node_index if on else 1,
            partner_port_state=61 if on else 1))
    info = BondInfo(
        mode=LACP_MODE, mii_status="up" if up else "down", driver_version=f"v{kernel}",
        xmit_hash_policy=bond.get("xmit_hash_policy", "layer3+4"), miimon=bond.get("miimon", 100),
        lacp_rate="slow", system_mac=bond["mac"], active_aggregator_id=1 if up else None,
        partner_mac=SWITCH_SYSTEM_MAC if up else None, slaves=tuple(slaves))
    return render_bonding(info, bond.get("name", "bond0"))
