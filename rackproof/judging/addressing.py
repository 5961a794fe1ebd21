"""Who holds the cluster addresses: each address must be held by exactly one node, the one the
inventory gives it to. Two holders break everything that uses the address (pings, routes,
iperf3, SSH, engines) in ways that look like other faults, so a clash is found once, from every
node's own interfaces, and named: "10.10.0.14 is held by two nodes: thor-4 and thor-5"."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from rackproof.inventory.model import Cx7Interface, Node

CHECK = "test_cluster_addresses_are_unique"


@dataclass(frozen=True)
class Clash:
    address: str
    owner: str | None                       # the node the inventory gives it to
    holders: tuple[tuple[str, str], ...]    # (node, interface) holding it, in inventory order

    def __str__(self) -> str:
        nodes = [node for node, _ in self.holders]
        where = " and ".join(f"{node} ({iface})" for node, iface in self.holders)
        text = f"{self.address} is held by {len(nodes)} nodes: {where}"
        if self.owner and self.owner in nodes:
            others = ", ".join(n for n in nodes if n != self.owner)
            return f"{text}; the inventory gives it to {self.owner}, so {others} is misconfigured"
        return text + (f"; the inventory gives it to {self.owner}" if self.owner else "")


def cluster_addresses(nodes: list[Node]) -> dict[str, str]:
    """Every cluster address of the inventory (the cluster network and CX7) -> its node."""
    owners = {}
    for node in nodes:
        for address in [node.address, *(c.address for c in node.cx7)]:
            if address:
                owners[_ip(address)] = node.name
    return owners


def clashes(nodes: list[Node], interfaces: dict[str, dict]) -> list[Clash]:
    """Cluster addresses held by more than one of `nodes`; `interfaces`: node name -> its
    interfaces as `ip -j addr` shows them (rackproof.probes.ip.Interface), for the nodes read."""
    owners = cluster_addresses(nodes)
    holders: dict[str, list[tuple[str, str]]] = {}
    for node in nodes:
        for iface in interfaces.get(node.name, {}).values():
            for address in iface.addresses:
                ip = _ip(address.local)
                if ip in owners:
                    holders.setdefault(ip, []).append((node.name, iface.name))
    return [Clash(ip, owners[ip], tuple(held)) for ip, held in holders.items() if len({n for n, _ in held}) > 1]


def _ip(address: str) -> str:
    """The address without its prefix, written one way (an IPv4-mapped IPv6 address is the IPv4 one)."""
    ip = ipaddress.ip_interface(address).ip
    return str(ip.ipv4_mapped or ip) if ip.version == 6 else str(ip)


def peers(nodes: list[Node], name: str) -> dict[str, str]:
    """Cluster address -> name of every other addressed node."""
    return {n.ip: n.name for n in nodes if n.address and n.name != name}


def cx7_peers(nodes: list[Node], name: str, address: str) -> list[tuple[Node, Cx7Interface]]:
    """The other nodes' CX7 interfaces on the subnet of `address`."""
    net = ipaddress.ip_interface(address).network
    return [(n, c) for n in nodes if n.name != name for c in n.cx7 if ipaddress.ip_interface(c.address).network == net]


def cx7_links(sender: Node, receiver: Node) -> list[tuple[Cx7Interface, Cx7Interface]]:
    """(sender's, receiver's) CX7 interface on each subnet the two share."""
    return [(s, d) for s in sender.cx7 for d in receiver.cx7
            if ipaddress.ip_interface(s.address).network == ipaddress.ip_interface(d.address).network]


def cx7_address_from(sender: Node, receiver: Node) -> str | None:
    """The receiver's first CX7 address on a subnet of one of the sender's, None when none is."""
    own = {ipaddress.ip_interface(c.address).network for c in sender.cx7}
    return next((c.ip for c in receiver.cx7 if ipaddress.ip_interface(c.address).network in own), None)
