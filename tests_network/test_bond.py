"""Step 8: the four lanes bonded with LACP (802.3ad, layer3+4), all of them in one aggregator."""

import pytest

from rackproof.measuring import bondrate, traffic
from rackproof.judging.failure import Failure, judge
from rackproof.measurements.lanes import BOND_LANE_LOSS, NODE_BOND
from rackproof.inventory.references import reference

pytestmark = [pytest.mark.step(8), pytest.mark.capability("bonded bandwidth")]


def test_bond_state(bonded_node, planned):
    spec = bonded_node.spec.bond
    bond = planned(NODE_BOND)
    where = f"{bonded_node.name} {spec.name}"
    if "802.3ad" not in bond.mode:
        raise Failure(where, "bonding mode", "IEEE 802.3ad Dynamic link aggregation", bond.mode,
                      'bond.options "mode=802.3ad,..." was not applied')
    if bond.xmit_hash_policy != spec.xmit_hash_policy:
        raise Failure(where, "transmit hash policy", spec.xmit_hash_policy, bond.xmit_hash_policy,
                      "without layer3+4 every connection between two nodes takes the same lane")
    if bond.miimon != spec.miimon:
        raise Failure(where, "MII polling interval (miimon)", f"{spec.miimon} ms", f"{bond.miimon} ms",
                      "bond.options without miimon=100")
    if bond.mii_status != "up":
        raise Failure(where, "MII status", "up", bond.mii_status, "no member has link")
    if bond.active_aggregator_id is None:
        raise Failure(where, f"/proc/net/bonding/{spec.name} shows no active aggregator, so LACP membership "
                      "cannot be confirmed", cause="the kernel shows the 802.3ad details to root only: let the "
                      f"login run `sudo -n cat /proc/net/bonding/{spec.name}` without a password")
    members = {s.name: s for s in bond.slaves}
    problems = []
    for lane_name in spec.lanes:
        lane = bonded_node.spec.lane(lane_name)
        place = f"{lane_name} (switch port {lane.switch_port})"
        member = members.get(lane_name)
        if member is None:
            problems.append(f"{place} is not a member of {spec.name}")
        elif member.mii_status != "up":
            problems.append(f"{place} MII status {member.mii_status}")
        elif not member.partner_mac or set(member.partner_mac.replace(":", "")) == {"0"}:
            problems.append(f"{place} has no LACP partner (partner MAC {member.partner_mac}): the switch port "
                            "is not in a LACP link aggregation group")
        elif member.aggregator_id != bond.active_aggregator_id:
            problems.append(f"{place} is in aggregator {member.aggregator_id}, not in the active one "
                            f"({bond.active_aggregator_id}): not carrying traffic; its switch port is in another "
                            "LAG group")
        elif (lacp := member.lacp_not_carrying()) is not None:
            problems.append(f"{place} is in the active aggregator {bond.active_aggregator_id} but {lacp}")
    if problems:
        raise Failure(where, "; ".join(problems))


@pytest.mark.disruptive
def test_bond_rides_out_a_lane_loss(bond_pair, inventory, measure, planned):
    """One member of the sender's bond loses its link: -P 4 carries on over the other lanes at
    about their rate; the member comes back, rejoins the aggregator, and the rate recovers."""
    loss = planned(BOND_LANE_LOSS)
    src, spec, lane = bond_pair.src, bond_pair.src.spec.bond, loss.lane
    port = src.spec.lane(lane).switch_port
    where = f"{bond_pair.where}, {src.name} {lane} (switch port {port}) down"
    lanes = bondrate.lanes_of(src.spec, bond_pair.dst.spec)
    m = measure("bond.rate.lane_down", bond_pair.where, loss.degraded.received_bps, "bit/s", lanes=lanes)
    judge(m, f"{where} (four iperf3 streams, {lanes - 1} lanes left)",
          "the bond did not move that lane's connections to the others (miimon=0, or the switch kept sending on "
          "the dead port: a static LAG instead of LACP), or another member is slow (see test_lane_speed)")
    ceiling = reference("bond.rate.lane_down_ceiling").expectation(inventory.expect, lanes=lanes)
    if ceiling.verdict(m.value) == "failed":
        raise Failure(where, f"four streams still moved {m.value:.3g} Gbit/s, close to all {lanes} lanes: traffic did not "
                      f"leave {lane}", cause=f"{lane} is not a member of {spec.name} on this node")
    if not loss.rejoined:
        raise Failure(f"{src.name} {spec.name}", f"{lane} is up again but not back in the active aggregator "
                      f"{loss.view.active_aggregator_id} after {inventory.expect.bond_rejoin_seconds} s",
                      cause=f"the switch port {port} left its LAG group or LACP does not renegotiate")
    m = measure("bond.rate.lane_back", bond_pair.where, traffic.best(loss.back).received_bps, "bit/s", lanes=lanes)
    if m.verdict == "failed":
        traffic.unless_cpu_bound(loss.back, src, bond_pair.dst, bond_pair.where, "the bonded rate with the lane back")
    judge(m, f"{bond_pair.where}, {lane} back in {spec.name} (four iperf3 streams): the rate did not recover",
          f"{lane} came back at a lower speed (see test_lane_speed) or the switch did not put port {port} back "
          "into the LAG's hashing")
