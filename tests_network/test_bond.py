"""Step 8: the four lanes bonded with LACP (802.3ad, layer3+4), all of them in one aggregator."""

import pytest

from rackproof.explain import mismatch

pytestmark = [pytest.mark.step(8), pytest.mark.capability("bonded bandwidth")]


def test_bond_state(bonded_node):
    spec = bonded_node.spec.bond
    bond = bonded_node.bonding(spec.name)
    where = f"{bonded_node.name} {spec.name}"
    assert "802.3ad" in bond.mode, mismatch(where, "bonding mode", "IEEE 802.3ad Dynamic link aggregation",
                                            bond.mode, 'bond.options "mode=802.3ad,..." was not applied')
    assert bond.xmit_hash_policy == spec.xmit_hash_policy, mismatch(
        where, "transmit hash policy", spec.xmit_hash_policy, bond.xmit_hash_policy,
        "without layer3+4 every connection between two nodes takes the same lane")
    assert bond.miimon == spec.miimon, mismatch(where, "MII polling interval (miimon)", f"{spec.miimon} ms",
                                                f"{bond.miimon} ms", "bond.options without miimon=100")
    assert bond.mii_status == "up", mismatch(where, "MII status", "up", bond.mii_status, "no member has link")
    assert bond.active_aggregator_id is not None, (
        f"{where}: /proc/net/bonding/{spec.name} shows no active aggregator, so LACP membership cannot be confirmed. "
        "Usual cause: the kernel shows the 802.3ad details to root only: let the login run "
        f"`sudo -n cat /proc/net/bonding/{spec.name}` without a password")
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
        elif member.aggregator_id != bond.active_aggregator_id or member.actor_port_state not in (61, 63):
            problems.append(f"{place} is in aggregator {member.aggregator_id} (active: {bond.active_aggregator_id}), "
                            f"actor port state {member.actor_port_state}: not carrying traffic; its switch port is "
                            "in another LAG group")
    assert not problems, f"{where}: " + "; ".join(problems)
