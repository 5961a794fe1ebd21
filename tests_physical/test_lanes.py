"""Step 1 and 3 of the build: every cabled lane is up, at its speed, with the switch's FEC."""

import pytest

from rackproof.judging import capabilities
from rackproof.judging.failure import SLOW_LANE_CAUSES, Failure
from rackproof.measurements.lanes import LANE_FEC, LANE_LINK


@pytest.fixture(autouse=True)
def _lane_capability(lane, inventory, guards):
    guards(*capabilities.lane(inventory, lane.host.spec))


@pytest.mark.step(1)
def test_lane_link_detected(lane, planned):
    link = planned(LANE_LINK)
    if not link.link_detected:
        found = "no" if link.link_detected is False else "not reported"
        raise Failure(
            lane.where, "ethtool link", "Link detected: yes", f"Link detected: {found}",
            "the cable is not seated at one end (push until the latch clicks), the switch port is disabled or set "
            "to another speed, or the FEC mode differs between the switch port and the Thor")


def linked(lane, planned):
    """ethtool facts of a lane that has a link; a dead lane is failed by test_lane_link_detected,
    and its speed and FEC cannot be judged until it links."""
    link = planned(LANE_LINK)
    if not link.link_detected:
        pytest.skip(f"{lane.where} has no link (see test_lane_link_detected); speed and FEC are judged once it links")
    return link


@pytest.mark.step(3)
def test_lane_speed(lane, inventory, planned):
    expected = inventory.expect.lane_speed_mbps
    link = linked(lane, planned)
    found = f"{link.speed_mbps}Mb/s" if link.speed_mbps else "Speed: Unknown! (no link)"
    if link.speed_mbps != expected:
        raise Failure(lane.where, "lane speed", f"{expected}Mb/s", found, SLOW_LANE_CAUSES.get(
            link.speed_mbps, "the link is down or negotiated another speed with the switch port"))


@pytest.mark.step(3)
def test_lane_fec(lane, inventory, planned):
    expected = inventory.switch.fec
    linked(lane, planned)
    fec = planned(LANE_FEC)
    if expected not in fec.active:
        raise Failure(lane.where, "active FEC mode (ethtool --show-fec)", f"{expected}, as set on the switch port",
                      ", ".join(fec.active) or "none reported",
                      "both ends of a 25 GbE cable must use the same FEC mode: set the switch port or the Thor to match")
