"""What a sparkrun cluster definition says about the inventory's nodes: which node each of its
hosts is (by name, or by an address one node holds), on which interface, and whether that is a
CX7 interface (the guide's serving node list on CX7 addresses, not Wi-Fi ones)."""

from __future__ import annotations

from dataclasses import dataclass

from .inventory import Node


@dataclass(frozen=True)
class Host:
    written: str               # as the definition has it
    node: str | None           # the inventory node it is, None: none of them
    interface: str | None      # the interface holding the address, None: a name or unknown
    cx7: bool                  # the address is one of that node's CX7 addresses in the inventory


def placed(hosts: tuple[str, ...], nodes: list[Node], interfaces: dict[str, dict]) -> list[Host]:
    """Each host of the definition placed on the inventory: `interfaces` is node -> its
    interfaces (Host.interfaces()), whose addresses say which node holds an address."""
    found = []
    for written in hosts:
        node = next((n for n in nodes if written in (n.name, n.ssh_name)), None)
        interface = None
        for n in nodes:
            for iface in interfaces.get(n.name, {}).values():
                if any(a.local == written for a in iface.addresses):
                    node, interface = n, iface.name
        cx7 = node is not None and written in {c.ip for c in node.cx7}
        found.append(Host(written, node.name if node else None, interface, cx7))
    return found
