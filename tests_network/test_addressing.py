"""Step 2: names and cluster addresses; the cluster network, not the house port, carries the traffic."""

import pytest

from rackproof.judging import addressing
from rackproof.judging.failure import Failure, NotVerified
from rackproof.measurements.nodes import NODES_INTERFACES, NODE_HOSTNAME, NODE_INTERFACES, NODE_NAMES, NODE_PATH_MTU, \
    NODE_ROUTES

pytestmark = [pytest.mark.step(2), pytest.mark.capability("cluster network", blocks=True)]


def test_hostname_is_the_inventory_name(node, planned):
    found = planned(NODE_HOSTNAME)
    if found != node.name:
        raise Failure(node.name, "hostname", node.name, found,
                      f"set it once with: sudo hostnamectl set-hostname {node.name}")

def test_cluster_address_on_the_cluster_interface(cluster_node, inventory, planned):
    spec = cluster_node.spec
    expected_iface = inventory.cluster_interface(spec)
    interfaces = planned(NODE_INTERFACES)
    holders = {i.name: a for i in interfaces.values() for a in i.addresses if a.local == spec.ip}
    if not holders:
        raise Failure(spec.name, "cluster address", f"{spec.address} on {expected_iface}", "it on no interface",
                      "the nmcli connection was not created or is not up (nmcli connection up cluster)")
    if expected_iface not in holders:
        raise Failure(spec.name, "interface holding the cluster address", expected_iface, ", ".join(holders),
                      "the address was added to another interface; bonded nodes carry it on bond0")
    address = holders[expected_iface]
    if address.prefixlen != spec.prefixlen:
        raise Failure(f"{spec.name} {expected_iface}", "prefix of the cluster address", f"/{spec.prefixlen}",
                      f"/{address.prefixlen}", "a typo in ipv4.addresses of the nmcli connection")
    if address.dynamic:
        raise Failure(f"{spec.name} {expected_iface}", "kind of cluster address", "static (ipv4.method manual)",
                      "a DHCP/dynamic address", "the cluster network has no router: set the address by hand")

def test_every_name_resolves_to_its_cluster_address(cluster_node, inventory, planned):
    peers = [n for n in inventory.nodes if n.address]
    resolved = planned(NODE_NAMES)
    wrong = {n.name: resolved.get(n.name, ()) for n in peers if n.ip not in resolved.get(n.name, ())}
    if wrong:
        raise Failure(cluster_node.name, "/etc/hosts does not map every node to its cluster address: " + "; ".join(
            f"{name} -> {', '.join(addrs) or 'not found'} (expected {inventory.node(name).ip})"
            for name, addrs in wrong.items()), cause="the five lines were not added to /etc/hosts on this node, or "
                                                     "a Tailscale/house address is listed first")

def test_route_to_each_peer_leaves_by_the_cluster_interface(cluster_node, inventory, planned):
    expected = inventory.cluster_interface(cluster_node.spec)
    peers = [n for n in inventory.nodes if n.address and n.name != cluster_node.name]
    routes = planned(NODE_ROUTES)
    wrong = {p.name: routes[p.ip] for p in peers if routes[p.ip].dev != expected}
    if wrong:
        raise Failure(cluster_node.name, "traffic to " + "; ".join(
            f"{name} ({r.dst}) leaves by {r.dev}" + (f" via {r.gateway}" if r.gateway else "")
            for name, r in wrong.items()) + f", expected {expected}",
            cause="the cluster address has the wrong prefix, or a route for 10.10.0.0/24 points at the house port")

def test_mtu_is_the_same_on_every_cluster_interface(cluster_network, inventory, planned):
    mtus, interfaces = {}, planned(NODES_INTERFACES)
    for host in cluster_network:
        iface = inventory.cluster_interface(host.spec)
        found = interfaces[host.name].get(iface)
        mtus[f"{host.name} {iface}"] = found.mtu if found else None
    if all(mtu is None for mtu in mtus.values()):
        raise NotVerified("the cluster network", "MTU of the cluster interfaces", f"no node has its cluster interface ({', '.join(mtus)})",
                          "bring the cluster interfaces up (test_cluster_address_on_the_cluster_interface says where)")
    wanted = {inventory.expect.mtu} if inventory.expect.mtu else set(mtus.values())
    if len(set(mtus.values())) != 1 or set(mtus.values()) != wanted:
        raise Failure("", "cluster interfaces disagree on MTU"
                      + (f" (inventory says {inventory.expect.mtu})" if inventory.expect.mtu else "")
                      + ": " + ", ".join(f"{k}: {'no such interface' if v is None else v}" for k, v in mtus.items()),
                      cause="jumbo frames set on some nodes only; a mismatch drops large packets silently")

def test_packets_of_the_mtu_cross_whole_and_no_larger(cluster_node, planned):
    problems = planned(NODE_PATH_MTU)
    if problems:
        raise Failure(cluster_node.name, "packets of the MTU with don't-fragment (ping -M do): " + "; ".join(problems),
                      cause="set the same MTU on every cluster interface and the switch ports (jumbo frames)")


def test_cluster_addresses_are_unique(cluster_network, planned):
    found = addressing.clashes([h.spec for h in cluster_network], planned(NODES_INTERFACES))
    if found:
        raise Failure("", "; ".join(map(str, found)), cause="an address copied from another node's nmcli line or "
                      "netplan file; two holders answer ARP in turn, so pings, routes, iperf3 and SSH to that address "
                      "fail at random")
