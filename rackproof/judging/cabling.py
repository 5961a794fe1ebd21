"""Cabling as LLDP sees it, judged against the cabling cluster.toml declares.

The chapter numbers the switch ports so that a port names its Thor ("ports 1 to 4 for thor-1,
ports 5 to 8 for thor-2") and labels both ends of every cable; a swapped pair of plugs passes
every other check and sends a person to the wrong port later. The switch announces its name
and each port's name (LLDP); lldpd on the node hears it on the lane the cable leads to. On a
Spark pair the peer's lldpd names the host and the interface at the other end of the cable.

What the node hears is read once per node (rackproof.measuring.lldp); each lane is judged here.
"""

from __future__ import annotations

import ipaddress

from rackproof.judging.failure import Failure, NotVerified
from rackproof.inventory.model import Cx7Interface, Inventory, Lane, Node
from rackproof.probes.lldp import Neighbour

WHAT = "cabling against cluster.toml (LLDP)"


def _same_system(announced: str | None, name: str) -> bool:
    """A chassis name is the host or switch name, or its fully qualified form."""
    return bool(announced) and announced.lower().split(".")[0] == name.lower().split(".")[0]


def _cabled_ports(inventory: Inventory) -> dict[int, tuple[Node, Lane]]:
    return {lane.switch_port: (node, lane) for node in inventory.nodes for lane in node.lanes
            if lane.switch_port is not None}


def _name(node: Node, lane: Lane) -> str:
    return f"{node.name} {lane.name}" + (f" (cable {lane.cable})" if lane.cable else "")


def check_lane(inventory: Inventory, node: Node, lane: Lane, seen: dict[str, Neighbour]) -> None:
    """The lane is in the switch port cluster.toml gives it; else a Failure naming where it is,
    whose port that is in cluster.toml and, for two plugs of one node, the swap."""
    switch = inventory.switch
    where = _name(node, lane)
    planned = f"{switch.name} port {lane.switch_port} ({switch.port_name(lane.switch_port)})"
    latest = seen.get(lane.name)
    if latest is None:
        raise NotVerified(where, WHAT, "lldpd on the node heard no LLDP announcement on this lane (a lane without "
                          "link hears none: see test_lane_link_detected)",
                          f"enable LLDP on {switch.name} (port {lane.switch_port} and the others of the shelf)")
    system_ok, number, names = _port_of(switch, latest)
    if system_ok and number == lane.switch_port:
        return
    shown = f"{latest.system or 'a device without a name'} port {names}"
    if not system_ok:
        raise Failure(where, "switch port announced by LLDP", planned, shown,
                      f"the cable leads to another device than {switch.name}, or the switch announces another "
                      "name: compare its name with [switch] name", seen=True)
    if number is None:
        raise Failure(where, "switch port announced by LLDP", planned, shown,
                      f"{switch.name} names its ports otherwise than [switch] lldp_port = \"{switch.lldp_port}\" "
                      "says: set lldp_port as the switch spells them", seen=True)
    raise Failure(where, "switch port announced by LLDP", planned, f"{switch.name} port {number} ({names})",
                  _whose(inventory, node, lane, number, seen), seen=True)


def _port_of(switch, n: Neighbour) -> tuple[bool, int | None, str]:
    """(the announcement is the switch's, the port number it names, the port's names as announced)."""
    names = " / ".join(n.port_names()) or "a port without a name"
    numbers = [p for p in map(switch.port_number, n.port_names()) if p is not None]
    return _same_system(n.system, switch.name), numbers[0] if numbers else None, names


def _whose(inventory: Inventory, node: Node, lane: Lane, port: int, seen: dict[str, Neighbour]) -> str:
    owner = _cabled_ports(inventory).get(port)
    if owner is None:
        return f"port {port} is in no cable of cluster.toml: move the plug to port {lane.switch_port}, or correct cluster.toml"
    other_node, other = owner
    if other_node.name == node.name:
        back = seen.get(other.name)
        if back and _port_of(inventory.switch, back)[1] == lane.switch_port:
            return (f"it is swapped with {_name(other_node, other)}, which is in port {lane.switch_port}: "
                    "swap the two plugs back")
    return (f"port {port} belongs to {_name(other_node, other)} in cluster.toml: move this plug to port "
            f"{lane.switch_port} and {other_node.name} {other.name}'s plug into port {port}")


def far_ends(inventory: Inventory, node: Node, cx7: Cx7Interface) -> set[tuple[str, str]]:
    """(node, interface) of the other nodes' CX7 interfaces on this one's subnet: where its cable may lead."""
    net = ipaddress.ip_interface(cx7.address).network
    return {(n.name, c.name) for n in inventory.nodes if n.name != node.name for c in n.cx7
            if ipaddress.ip_interface(c.address).network == net}


def check_cx7(inventory: Inventory, node: Node, cx7: Cx7Interface, seen: dict[str, Neighbour]) -> None:
    """The cable joins this interface to a peer's interface on the same CX7 subnet, as the
    inventory pairs them (the peer's lldpd names its host and interface)."""
    peers = far_ends(inventory, node, cx7)
    where = f"{node.name} {cx7.name}"
    expected = " or ".join(f"{p} {i}" for p, i in sorted(peers)) or "a peer on its subnet"
    n = seen.get(cx7.name)
    if n is None:
        raise NotVerified(where, WHAT, "lldpd on the node heard no LLDP announcement on this interface",
                          "run lldpd on the peer too (sudo apt install lldpd)")
    if any(_same_system(n.system, p) and i in n.port_names() for p, i in peers):
        return
    found = f"{n.system or 'a device without a name'} {' / '.join(n.port_names()) or 'port without a name'}"
    raise Failure(where, "the far end of the QSFP cable (LLDP)", expected, found,
                  "the cable is in the other QSFP port at one end (the two ports are not interchangeable: "
                  "the netplan file names one), or leads to another machine", seen=True)
