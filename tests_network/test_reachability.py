"""Every node reaches every other over the cluster network (ping: loss and round-trip time)."""

import pytest

from rackproof.judging import addressing
from rackproof.judging.failure import Failure, NotVerified
from rackproof.measurements.nodes import NODE_PEER_PINGS

pytestmark = [pytest.mark.step(2), pytest.mark.capability("cluster network", blocks=True)]


def test_reaches_every_peer(cluster_node, inventory, measure, planned):
    peers = addressing.peers(inventory.nodes, cluster_node.name)
    if not peers:
        raise NotVerified(cluster_node.name, "reaching its peers", "the inventory names no other node with a cluster "
                          "address", "add the other nodes to the inventory")
    replies = planned(NODE_PEER_PINGS)
    if unpinged := [f"{name} ({ip})" for ip, name in peers.items() if ip not in replies]:
        raise NotVerified(cluster_node.name, "reaching its peers", f"no ping of {', '.join(unpinged)} was made",
                          "run the check again")
    for ip, result in replies.items():
        if result.rtt_avg_ms is not None:
            measure("rtt", f"{cluster_node.name} -> {peers[ip]}", result.rtt_avg_ms, "ms")
    lost = {peers[ip]: r for ip, r in replies.items() if r.received == 0 or r.loss_percent > 0}
    if lost:
        raise Failure(cluster_node.name, "; ".join(
            f"cannot reach {name} ({r.target}): "
            f"{r.error or f'{r.loss_percent:g}% loss ({r.received}/{r.transmitted} replies)'}"
            for name, r in lost.items()), cause="a lane without link, an address on the wrong interface or subnet, "
                                                "or the peer is down")
