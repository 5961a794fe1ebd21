"""The rack's namespaces and links.

    rp-<name>-bench      the controller: eth0 192.168.77.1/24 on the house network
    rp-<name>-house      the house/management switch: bridge br0, one port per node + the bench
    rp-<name>-switch     (Thor) the 25 GbE switch: bridge br0, ports swp1..swp20 (thor-1 on 1-4,
                         thor-2 on 5-8, ...); a bonded node's ports form a LAG (lag<i> in br0)
    rp-<name>-cable      (Spark) the QSFP cable: one bridge per logical link (cxa, cxb)
    rp-<name>-<node>     a node: lo, its RJ45 (enP2p1s0 / enP7s7), lanes mgbe0_0.. or CX7
                         interfaces, bond0 (+ bond0p, the bond's plumbing)

No namespace has a default route, and nothing is put into the host's own namespace.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from . import bond, shaping
from .profiles import MGMT_NET, NodeSpec, Profile
from .state import ROOT, RackState
from .util import SimError, batch, in_netns, run

THOR_OUI = "3c:6d:66"
SPARK_OUI = "4c:bb:47"


def mac(profile: Profile, node: NodeSpec, ifname: str) -> str:
    oui = THOR_OUI if node.platform == "thor" else SPARK_OUI
    if ifname.startswith("mgbe"):
        kind, k = 0x10, int(ifname[4])
    elif ifname in ("enP2p1s0", "enP7s7"):
        kind, k = 0x20, 0
    else:  # cx7 interfaces, in profile order
        kind, k = 0x30, [c.name for c in node.cx7].index(ifname)
    return f"{oui}:{kind:02x}:{node.index:02x}:{k:02x}"


class Topology:
    def __init__(self, profile: Profile, state: RackState):
        self.p = profile
        self.s = state
        self.fabric = "switch" if profile.platform == "thor" else "cable"

    # names --------------------------------------------------------------------------------
    def node_ns(self, node: str) -> str:
        return self.s.ns(node)

    @property
    def bench(self) -> str:
        return self.s.ns("bench")

    @property
    def house(self) -> str:
        return self.s.ns("house")

    @property
    def fabric_ns(self) -> str:
        return self.s.ns(self.fabric)

    def namespaces(self) -> list[str]:
        return [self.bench, self.house, self.fabric_ns] + [self.node_ns(n.name) for n in self.p.nodes]

    @staticmethod
    def house_port(node: NodeSpec) -> str:
        return f"h-{node.name}"[:15]

    @staticmethod
    def lag(node: NodeSpec) -> tuple[str, str]:
        return f"lag{node.index}", f"lag{node.index}p"

    def far_end(self, node: NodeSpec, ifname: str) -> tuple[str, str]:
        """(namespace, device) at the other end of a node's interface: the switch port its cable
        is in now, the cable end, or the house switch port."""
        if ifname == node.mgmt_iface:
            return self.house, self.house_port(node)
        if any(lane.name == ifname and lane.connected for lane in node.lanes):
            return self.fabric_ns, self.port_of(node, ifname)
        for lane in node.lanes:
            if lane.name == ifname:
                return self.fabric_ns, self.planned_port(node, lane)
        for k, c in enumerate(node.cx7):
            if c.name == ifname:
                return self.fabric_ns, self.cable_port(node, c, k)
        raise SimError(f"{node.name} has no interface named {ifname}")

    @staticmethod
    def planned_port(node: NodeSpec, lane) -> str:
        """The switch's device of a lane's cable when the rack is built (its planned port)."""
        return f"swp{lane.switch_port}" if lane.connected else f"nc{node.index}-{lane.name[4]}"

    def port_of(self, node: NodeSpec, lane: str) -> str:
        """The switch port a lane's cable is in now: a plug moved to another port takes that
        port's name (faults.py), so the port is found as the other end of the lane's veth pair,
        by its index, which no rename changes."""
        link = json.loads(run(["ip", "-j", "-n", self.node_ns(node.name), "link", "show", "dev", lane]).stdout)[0]
        ports = json.loads(run(["ip", "-j", "-n", self.fabric_ns, "link", "show"]).stdout)
        return next(p["ifname"] for p in ports if p["ifindex"] == link["link_index"])

    def echoes(self, node: NodeSpec, inbound: bool) -> list[tuple[str, str]]:
        """(source, destination) of the pings between a node's cluster address and the others'
        (towards the node when `inbound`): the ones its bond or LAG spreads by identifier."""
        peers = [n.ip for n in self.p.nodes if n.ip and n.name != node.name]
        return [(peer, node.ip) if inbound else (node.ip, peer) for peer in peers]

    @staticmethod
    def cable_port(node: NodeSpec, c, k: int) -> str:
        return f"s{node.index}{c.link}" if c.link else f"s{node.index}-nc{k}"

    # building -----------------------------------------------------------------------------
    def create(self) -> None:
        existing = set(list_netns())
        clash = [ns for ns in self.namespaces() if ns in existing]
        if clash:
            raise SimError(f"network namespace {clash[0]} already exists: run `rackproof sim down "
                           f"--name {self.s.name}` first")
        batch("ip", None, [f"netns add {ns}" for ns in self.namespaces()])
        for ns in self.namespaces():
            in_netns(ns, _sysctls, ns in {self.node_ns(n.name) for n in self.p.nodes})
        ip: dict[str, list[str]] = {ns: ["link set lo up"] for ns in self.namespaces()}
        tc: dict[str, list[str]] = {ns: [] for ns in self.namespaces()}

        # house network
        h = ip[self.house]
        h += ["link add name br0 type bridge", "link set br0 up",
              f"link add name h-bench type veth peer name eth0 netns {self.bench}",
              "link set h-bench master br0", "link set h-bench up"]
        ip[self.bench] += [f"addr add {MGMT_NET}.1/24 dev eth0", "link set eth0 up"]
        for node in self.p.nodes:
            port = self.house_port(node)
            h += [f"link add name {port} type veth peer name {node.mgmt_iface} "
                  f"address {mac(self.p, node, node.mgmt_iface)} netns {self.node_ns(node.name)}",
                  f"link set {port} master br0", f"link set {port} up"]
            ip[self.node_ns(node.name)] += [f"addr add {node.mgmt_ip}/24 dev {node.mgmt_iface}",
                                            f"link set {node.mgmt_iface} up"]

        if self.p.platform == "thor":
            self._switch(ip, tc)
        else:
            self._cable(ip, tc)

        # the switches first: their batches create the veth pairs whose far ends the others configure
        order = [self.house, self.fabric_ns] + [ns for ns in self.namespaces() if ns not in (self.house, self.fabric_ns)]
        for ns in order:
            batch("ip", ns, ip[ns])
        for ns in order:
            batch("tc", ns, tc[ns])

    def _switch(self, ip: dict, tc: dict) -> None:
        sw = self.fabric_ns
        ip[sw] += ["link add name br0 type bridge", "link set br0 up",
                   f"link add name {DISCARD} type veth peer name {DISCARD}p",
                   f"link set {DISCARD} up", f"link set {DISCARD}p up"]
        rate = self.p.shaped_mbit
        for node in self.p.nodes:
            ns = self.node_ns(node.name)
            bonded = set(node.bond_lanes or [])
            for lane in node.lanes:
                far = self.planned_port(node, lane)
                ip[sw].append(f"link add name {far} type veth peer name {lane.name} "
                              f"address {mac(self.p, node, lane.name)} netns {ns}")
                ip[ns].append(f"link set {lane.name} up")
                if not lane.connected:
                    continue      # the plug is not in a port: the far end stays down, no carrier
                ip[sw].append(f"link set {far} up")
                tc[ns] += shaping.htb_lines(lane.name, rate)
                tc[sw] += shaping.htb_lines(far, rate)
                if lane.name not in bonded:
                    ip[sw].append(f"link set {far} master br0")
            if node.bond_lanes:
                lag, lagp = self.lag(node)
                ip[sw] += [f"link add name {lag} type veth peer name {lagp}",
                           f"link set {lag} master br0", f"link set {lag} up", f"link set {lagp} up"]
                ports = [f"swp{node.lane(n).switch_port}" for n in node.bond_lanes]
                tc[sw] += [f"qdisc add dev {lagp} clsact", bond.anchor_line(lagp)] + bond.collect_lines(ports, lagp)
                tc[sw] += bond.spread_lines(lagp, ports, first=True, echoes=self.echoes(node, inbound=True))
                bmac = mac(self.p, node, node.bond_lanes[0])
                ip[ns] += [f"link add name bond0 address {bmac} type veth peer name {bond.BOND_PEER}",
                           f"addr add {node.address} dev bond0",
                           f"link set {bond.BOND_PEER} up", "link set bond0 up"]
                tc[ns] += [f"qdisc add dev {bond.BOND_PEER} clsact", bond.anchor_line(bond.BOND_PEER)]
                tc[ns] += bond.collect_lines(node.bond_lanes, bond.BOND_PEER)
                tc[ns] += bond.spread_lines(bond.BOND_PEER, list(node.bond_lanes), first=True,
                                            echoes=self.echoes(node, inbound=False))
            elif node.address:
                ip[ns].append(f"addr add {node.address} dev {node.interface}")

    def _cable(self, ip: dict, tc: dict) -> None:
        cab = self.fabric_ns
        links = sorted({c.link for n in self.p.nodes for c in n.cx7 if c.link})
        for link in links:
            # a cable passes LLDP frames (01:80:c2:00:00:0e, bit 14 of the mask): each host hears the other
            ip[cab] += [f"link add name cx{link} type bridge group_fwd_mask 0x4000", f"link set cx{link} up"]
        rate = self.p.shaped_mbit
        for node in self.p.nodes:
            ns = self.node_ns(node.name)
            for k, c in enumerate(node.cx7):
                far = self.cable_port(node, c, k)
                ip[cab].append(f"link add name {far} type veth peer name {c.name} "
                               f"address {mac(self.p, node, c.name)} netns {ns}")
                ip[ns].append(f"link set {c.name} up")
                if not c.link:
                    continue
                ip[cab] += [f"link set {far} master cx{c.link}", f"link set {far} up"]
                ip[ns].append(f"addr add {c.address} dev {c.name}")
                tc[ns] += shaping.htb_lines(c.name, rate)
                tc[cab] += shaping.htb_lines(far, rate)

    # lane state ---------------------------------------------------------------------------
    def set_far_end(self, node: NodeSpec, ifname: str, up: bool) -> None:
        ns, dev = self.far_end(node, ifname)
        run(["ip", "-n", ns, "link", "set", "dev", dev, "up" if up else "down"])

    def set_rate(self, node: NodeSpec, ifname: str, mbit: float) -> None:
        ns, dev = self.far_end(node, ifname)
        batch("tc", self.node_ns(node.name), shaping.change_lines(ifname, mbit))
        batch("tc", ns, shaping.change_lines(dev, mbit))

    def limit_frames(self, dev: str, mtu: int) -> dict:
        """The switch's port `dev` set to MTU `mtu`: it drops larger frames both ways. What
        lift_frame_limit needs to put the port back."""
        before = json.loads(run(["ip", "-j", "-n", self.fabric_ns, "link", "show", "dev", dev]).stdout)[0]["mtu"]
        qdiscs = run(["tc", "-n", self.fabric_ns, "qdisc", "show", "dev", dev]).stdout
        added = "clsact" not in qdiscs
        lines = ([f"qdisc add dev {dev} clsact"] if added else []) + [
            line for way in ("ingress", "egress") for line in oversize_lines(dev, way, mtu)]
        batch("ip", self.fabric_ns, [f"link set dev {dev} mtu {mtu}"])
        batch("tc", self.fabric_ns, lines)
        return {"dev": dev, "mtu": before, "clsact": added, "limit": mtu}

    def lift_frame_limit(self, undo: dict) -> None:
        dev = undo["dev"]
        lines = [f"qdisc del dev {dev} clsact"] if undo["clsact"] else [
            f"filter del dev {dev} ingress protocol all prio 1 handle 800::{k:x} u32"
            for k in range(1, len(_above(undo["limit"])) + 1)] + [f"filter del dev {dev} egress protocol all prio 1"]
        batch("tc", self.fabric_ns, lines)
        batch("ip", self.fabric_ns, [f"link set dev {dev} mtu {undo['mtu']}"])


# The switch's discard: a frame a port drops is redirected here (this kernel has neither the
# gact nor the police action) and goes no further: drop0p delivers it to nobody.
DISCARD = "drop0"


def _above(limit: int) -> list[tuple[int, int]]:
    """(value, mask) pairs that together match exactly the 16-bit numbers above `limit`."""
    blocks, n = [], limit + 1
    while n < 1 << 16:
        size = n & -n
        while n + size > 1 << 16:
            size >>= 1
        blocks.append((n, 0xFFFF & ~(size - 1)))
        n += size
    return blocks


def oversize_lines(dev: str, way: str, mtu: int) -> list[str]:
    """tc lines: IPv4 packets longer than `mtu` crossing `dev` (way: ingress or egress) go to the
    discard, ahead of whatever else the port does with them (prio 1; on ingress, where a LAG
    member's own filter is, the lowest handles: u32's handles are shared by both ways, so
    egress, where the port has no other filter, takes whichever come). A GSO packet counts by
    its whole length: the model takes the nodes' segments to be of their own MTU, as a TCP
    sender's are."""
    return [f"filter add dev {dev} {way} protocol all prio 1"
            + (f" handle 800::{k:x}" if way == "ingress" else "")
            + f" u32 match u8 0x40 0xf0 at 0 match u16 0x{value:04x} 0x{mask:04x} at 2"
              f" action mirred egress redirect dev {DISCARD}"
            for k, (value, mask) in enumerate(_above(mtu), start=1)]


def _sysctls(is_node: bool) -> None:
    settings = {
        "net/ipv6/conf/all/disable_ipv6": "1",
        "net/ipv6/conf/default/disable_ipv6": "1",
    }
    if is_node:
        settings["net/ipv4/ping_group_range"] = "0 2147483647"
    for key, value in settings.items():
        with open(f"/proc/sys/{key}", "w") as f:
            f.write(value)


def list_netns() -> list[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def delete(names: list[str]) -> None:
    present = set(list_netns())
    lines = [f"netns del {ns}" for ns in names if ns in present]
    if lines:
        batch("ip", None, lines, check=False)


def has_default_route(ns: str) -> bool:
    for fam in ("-4", "-6"):
        out = run(["ip", fam, "-n", ns, "route", "show", "default"], check=False).stdout
        if out.strip():
            return True
    return False


# The kernel keeps one ARP table for every namespace, at most gc_thresh3 entries (1024 by
# default): 32 nodes that each know their 31 peers overflow it ("neighbor table overflow!") and
# connections time out at random. A rack that needs more room raises the limits while racks are
# up; the machine's own values are kept here and put back by the last rack to go down.
NEIGHBOUR_LIMITS = Path("/proc/sys/net/ipv4/neigh/default")
SAVED_LIMITS = ROOT / "host-neighbour-limits.json"


def neighbour_entries(profile: Profile) -> int:
    """ARP entries a rack may hold at once: every node knows every other on each network (house
    and cluster, a Spark on its two CX7 links too), the bench knows every node; twice that as room."""
    n = len(profile.nodes)
    networks = 2 + max((len([c for c in node.cx7 if c.link]) for node in profile.nodes), default=0)
    return 2 * (n + 1) * n * networks


def make_neighbour_room(entries: int) -> None:
    current = {k: int((NEIGHBOUR_LIMITS / k).read_text()) for k in ("gc_thresh2", "gc_thresh3")}
    if current["gc_thresh3"] >= entries:
        return
    if not SAVED_LIMITS.exists():
        SAVED_LIMITS.write_text(json.dumps(current))
    (NEIGHBOUR_LIMITS / "gc_thresh3").write_text(str(entries))
    (NEIGHBOUR_LIMITS / "gc_thresh2").write_text(str(max(current["gc_thresh2"], entries // 2)))


def restore_neighbour_limits() -> None:
    """The machine's own limits, once no rack is up."""
    if SAVED_LIMITS.exists():
        for key, value in json.loads(SAVED_LIMITS.read_text()).items():
            (NEIGHBOUR_LIMITS / key).write_text(str(value))
        SAVED_LIMITS.unlink()
