"""Step 3 and 8: what really passes between two nodes (iperf3), lane by lane and over the bond.

Every ordered pair is a check of its own; pairs come in rounds in which each node sends once and
receives once, and a round is measured at once (a lane is full duplex, the switch does not
block), with or without xdist.
"""

import pytest

from rackproof.measuring import bondrate, traffic
from rackproof.judging.failure import Failure, judge
from rackproof.measurements.diagnosis import BOND_FOUR_STREAMS_CAUSE, LANE_ONE_STREAM_PATH
from rackproof.measurements.lanes import BOND_FOUR_STREAMS, LANE_ONE_STREAM
from rackproof.inventory.references import reference

SLOW_CAUSES = ("a lane negotiated 10G (switch port group or the Thor's flash-time 25G setting), a cable or "
               "port with errors (see retransmits, ethtool --show-fec -I), or CPU-bound iperf3 on the receiver")


def _figures(r) -> str:
    return f"retransmits {r.retransmits if r.retransmits is not None else 'not reported'}, {r.num_streams} stream(s)"


@pytest.mark.step(3)
@pytest.mark.capability("cluster network bandwidth")
def test_iperf3_one_stream(link_pair, inventory, measure, planned):
    src, dst = link_pair.src, link_pair.dst
    runs = planned(LANE_ONE_STREAM)
    result = traffic.best(runs)
    for other in runs:
        if other is not result:   # the short attempt, kept for the report
            measure("lane.rate.other_attempt", link_pair.where, other.received_bps, "bit/s")
    m = measure("lane.rate", link_pair.where, result.received_bps, "bit/s")
    if m.verdict == "failed":
        traffic.unless_cpu_bound(runs, src, dst, link_pair.where, "one TCP stream's rate")
    path = planned(LANE_ONE_STREAM_PATH) if m.verdict == "failed" else None
    judge(m, f"{link_pair.where} ({src.spec.ip} -> {dst.spec.ip}, one TCP stream, best of {len(runs)} attempts)",
          str(path) if path else SLOW_CAUSES, also=_figures(result), seen=path is not None)
    if inventory.bonded(src.spec) and inventory.bonded(dst.spec):
        ceiling = reference("lane.one_stream_ceiling").expectation(inventory.expect)
        if ceiling.verdict(m.value) == "failed":
            raise Failure(link_pair.where, f"one TCP stream moved {m.value:.3g} Gbit/s, more than one lane "
                          f"({ceiling.floor:.3g} Gbit/s): a bond with xmit_hash_policy=layer3+4 keeps a connection "
                          "on one lane", cause="the measurement did not cross the bond (check the address) or a "
                          "balance-rr bond")


@pytest.mark.step(8)
@pytest.mark.capability("bonded bandwidth")
def test_iperf3_bonded_four_streams(link_pair, inventory, measure, planned):
    src, dst = link_pair.src, link_pair.dst
    if not (inventory.bonded(src.spec) and inventory.bonded(dst.spec)):
        pytest.skip(f"{link_pair.where}: not both bonded in the inventory")
    lanes = bondrate.lanes_of(src.spec, dst.spec)
    run = bondrate.BondedRate.of(src, dst, inventory, planned(BOND_FOUR_STREAMS))
    for other in run.others:   # the attempt with streams sharing a lane, kept for the report
        measure("bond.rate.other_attempt", link_pair.where, other.received_bps, "bit/s")
    m = measure("bond.rate", link_pair.where, run.best.received_bps, "bit/s", lanes=lanes)
    if m.verdict == "failed":
        traffic.unless_cpu_bound(run.attempts, src, dst, link_pair.where, "the bonded rate")
    cause = planned(BOND_FOUR_STREAMS_CAUSE) if m.verdict == "failed" else ""
    judge(m, f"{link_pair.where} (bond0, four iperf3 streams, one client each, {lanes} lanes)", cause,
          also=run.figures(), seen=True)
