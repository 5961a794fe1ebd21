"""The bonded lanes: link, cabling, FEC, the bond's state, throughput per lane and bond, error counters under load, and a lane's loss."""

from __future__ import annotations

from rackproof.measuring import bondrate, disrupt, linkhealth, lldp, plan, traffic
from rackproof.measuring.plan import Phase
from rackproof.probes.bonding import BONDING
from rackproof.probes.ethtool import ETHTOOL
from rackproof.probes.fec import FEC
from rackproof.inventory.references import reference


def _one_stream(sender, receiver, ctx: plan.Context):
    floor = reference("lane.rate").bound_in("bit/s", ctx.cluster.expect)
    return traffic.attempts(sender, receiver, receiver.spec.ip, floor, ctx.cluster.expect.iperf_seconds)


def _servers(streams: int):
    """What ahead of a round readies for a pair's iperf3 of `streams` (plan.in_rounds): its servers,
    for the pairs that measure (bondrate measures four streams only between bonded nodes)."""
    def ahead(sender, receiver, ctx: plan.Context) -> None:
        if streams == 1 or ctx.cluster.bonded(sender.spec) and ctx.cluster.bonded(receiver.spec):
            traffic.ready_iperf3(sender, receiver, receiver.spec.ip, streams, ctx.cluster.expect.iperf_seconds)
    return ahead


NODE_BOND = plan.each("node.bond", Phase.FACTS, "bonded_node",
                      lambda node, ctx: node.read(BONDING, bond=node.spec.bond.name))
LANE_LINK = plan.each("lane.link", Phase.FACTS, "lane", lambda lane, ctx: lane.host.read(ETHTOOL, interface=lane.name))
LANE_HEARD = plan.each("lane.heard", Phase.FACTS, "lane",
                       lambda lane, ctx: lldp.heard(lane.host, ctx.cluster.cluster.user))
LANE_FEC = plan.each("lane.fec", Phase.FACTS, "lane", lambda lane, ctx: lane.host.read(FEC, interface=lane.name))
LANE_ONE_STREAM = plan.in_rounds("lane.one_stream", "link_pair", _one_stream, ahead=_servers(1))
BOND_FOUR_STREAMS = plan.in_rounds("bond.four_streams", "link_pair",
                                   lambda sender, receiver, ctx: bondrate.attempts(sender, receiver, ctx.cluster),
                                   ahead=_servers(4))
LANE_COUNTERS_UNDER_LOAD = plan.after_load("lane.counters_under_load", "lane", lambda lane, ctx: linkhealth.since_load(
    ctx.ledger, lane.host, lane.name, lane.where, ctx.cluster.expect))
# opt-in (its check is disruptive): last, the whole rack held by the run alone
BOND_LANE_LOSS = plan.alone("bond.lane_loss", "bond_pair", lambda sender, receiver, ctx: disrupt.lane_loss(
    sender, receiver, ctx.cluster))
