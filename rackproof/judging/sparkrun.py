"""What a sparkrun cluster definition says about the inventory's nodes: which node each of its
hosts is (by name, or by an address one node holds), on which interface, and whether that is a
CX7 interface (the guide's serving node list on CX7 addresses, not Wi-Fi ones); every field of
the definition against the inventory; and which part of sparkrun's preflight a failure of its
`setup check` belongs to (the Cordatus cards: SSH mesh, CX7 network, sparkrun runtime), which
says what the failure takes away."""

from __future__ import annotations

from dataclasses import dataclass

from rackproof.judging.capabilities import MULTI_NODE, SSH_MESH
from rackproof.judging.failure import Failure
from rackproof.inventory.model import Inventory, Node
from rackproof.probes.sparkrun import ClusterDefinition
from rackproof.probes.sshcheck import classify_ssh_failure, unreached_host


@dataclass(frozen=True)
class DefinedHost:
    written: str               # as the definition has it
    node: str | None           # the inventory node it is, None: none of them
    interface: str | None      # the interface holding the address, None: a name or unknown
    cx7: bool                  # the address is one of that node's CX7 addresses in the inventory


def placed(hosts: tuple[str, ...], nodes: list[Node], interfaces: dict[str, dict]) -> list[DefinedHost]:
    """Each host of the definition placed on the inventory: `interfaces` is node -> its
    interfaces (host.Host.interfaces()), whose addresses say which node holds an address."""
    found = []
    for written in hosts:
        node = next((n for n in nodes if written in (n.name, n.ssh_name)), None)
        interface = None
        for n in nodes:
            for iface in interfaces.get(n.name, {}).values():
                if any(a.local == written for a in iface.addresses):
                    node, interface = n, iface.name
        cx7 = node is not None and written in {c.ip for c in node.cx7}
        found.append(DefinedHost(written, node.name if node else None, interface, cx7))
    return found


def other_user(definition: ClusterDefinition, inventory: Inventory) -> str | None:
    """The definition's user when it is not the inventory's login (None: the same, or none set,
    and sparkrun logs in as the login that runs it)."""
    return definition.user if definition.user not in (None, inventory.cluster.user) else None


def definition_differences(where: str, definition: ClusterDefinition, hosts: list[DefinedHost],
                           inventory: Inventory) -> list[Failure]:
    """Each field of the definition that differs from the inventory, named: its hosts (the head,
    node_0, first, then the workers in node order) and the user sparkrun logs in as."""
    differences = []
    found = [h.node or f"{h.written} (no node of the inventory)" for h in hosts]
    expected = [n.name for n in inventory.nodes]
    if found != expected:
        differences.append(Failure(
            where, "hosts: node order (head first)", ", ".join(expected), ", ".join(found),
            "the head (node_0) serves the API and the workers' order is the node order: "
            f"sparkrun cluster update {definition.name} --hosts "
            + ",".join(n.cx7[0].ip if n.cx7 else n.name for n in inventory.nodes)))
    user = other_user(definition, inventory)
    if user:
        differences.append(Failure(
            where, "user", f"{inventory.cluster.user} (the inventory's login)", user,
            "sparkrun logs in to every host over SSH as the definition's user, and the nodes are set up for "
            f"{inventory.cluster.user}: sparkrun cluster update {definition.name} --user {inventory.cluster.user}"))
    return differences


# the parts of sparkrun's preflight, as the Cordatus page has its cards
SSH, CX7_NETWORK, RUNTIME = "SSH", "CX7 network", "sparkrun runtime"
_ITEM_PARTS = {"ssh_identity": SSH, "ssh_mesh": SSH, "cx7": CX7_NETWORK, "rdma": CX7_NETWORK}


def part_of(item_key: str) -> str:
    """The part a setup item checks; the rest (Docker, the container toolkit, sudoers, the
    hardware and executor) is sparkrun's runtime."""
    return _ITEM_PARTS.get(item_key, RUNTIME)


def unreached_part(error: str, on_cx7: bool) -> str:
    """sparkrun reports a host it could not probe as "SSH connectivity": the CX7 network when the
    network did not carry SSH to the host's CX7 address, SSH itself otherwise (a refused login,
    a host key, sshd down, or a node not reached on another network)."""
    return CX7_NETWORK if on_cx7 and unreached_host(error) else SSH


def unreached_cause(part: str, host: str, error: str, definition: ClusterDefinition, inventory: Inventory) -> str:
    """Why sparkrun could not probe the host, from its error and the definition."""
    if part == CX7_NETWORK:
        return (f"the CX7 link does not carry SSH to {host}: see test_cx7_interface_up and "
                "test_passwordless_ssh_over_cx7")
    user = other_user(definition, inventory)
    if user:
        return (f"sparkrun logs in as {user}, the definition's user, and the inventory's login is "
                f"{inventory.cluster.user}: sparkrun cluster update {definition.name} --user {inventory.cluster.user}")
    return (f"{classify_ssh_failure(255, error)}: sparkrun drives every host over SSH from the head as the "
            "cluster's user (see test_passwordless_ssh)")


def takes_away(parts: set[str], definition: ClusterDefinition, inventory: Inventory) -> tuple[str, bool] | None:
    """The capability a failure in these parts takes away (Cordatus: without SSH nothing starts;
    without the CX7 network only multi-node recipes), None: sparkrun launches (the check's own),
    as when the SSH that failed is that of a user the nodes were never set up for."""
    if SSH in parts and not other_user(definition, inventory):
        return SSH_MESH, True
    if parts == {CX7_NETWORK}:
        return MULTI_NODE, False
    return None
