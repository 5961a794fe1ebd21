"""A closed cluster network (the Spark guide's security notes, the Thor chapter's "from no
device outside the cluster switch"): no node routes between its cluster interface and another
network, nothing listens openly that the inventory does not allow, and SSH on the cluster
addresses takes keys only."""

import pytest

from rackproof.judging.capabilities import CLOSED_NETWORK
from rackproof.judging.failure import Failure
from rackproof.measurements.logins import NODE_OFFERED_METHODS
from rackproof.measurements.nodes import NODE_FORWARDING, NODE_LISTENING_OPENLY

pytestmark = [pytest.mark.step(9), pytest.mark.capability(CLOSED_NETWORK)]


def test_node_does_not_forward(network_node, inventory, planned):
    node = network_node
    forwarding = {key: value for key, value in planned(NODE_FORWARDING).items() if value != "0"}
    if forwarding:
        interface = inventory.cluster_interface(node.spec) or ", ".join(c.name for c in node.spec.cx7)
        raise Failure(node.name, f"forwards packets between its cluster interface ({interface}) and its other "
                      "networks: " + ", ".join(f"{k} = {v}" for k, v in forwarding.items()),
                      cause="a router, VPN or container setup turned forwarding on: set it to 0 in "
                      "/etc/sysctl.d/ (sudo sysctl -w net.ipv4.ip_forward=0)")


def test_nothing_unexpected_listens(network_node, planned):
    node = network_node
    found = planned(NODE_LISTENING_OPENLY)
    if found:
        raise Failure(node.name, "listening on a cluster address or on every address: " + ", ".join(
            f"{l.process or 'an unnamed process'} (pid {l.pid}) on {l.local_address}:{l.port}/{l.proto}"
            for l in found),
            cause="a server started on 0.0.0.0 reaches every network the node is on: bind it to 127.0.0.1 or to "
                  "the one address it serves, or name it in [closed_network] allow")


def test_password_login_is_off(network_node, planned):
    node = network_node
    offered = planned(NODE_OFFERED_METHODS)
    open_ = {address: methods for address, methods in offered.items()
             if {"password", "keyboard-interactive"} & set(methods)}
    if open_:
        raise Failure(node.name, "sshd takes passwords on " + ", ".join(
            f"{address} ({','.join(methods)})" for address, methods in open_.items()),
            cause="PasswordAuthentication or KbdInteractiveAuthentication left on: set both to no in "
                  "/etc/ssh/sshd_config.d/ and reload ssh")
