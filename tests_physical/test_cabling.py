"""The chapter's labels and port order, proven (step 1): every cabled lane is in the switch port
the plan gives it, as the switch announces it over LLDP; on a Spark pair, the QSFP cable joins
the interfaces the inventory pairs. A node without lldpd leaves its cabling not verified."""

import pytest

from rackproof.judging import cabling
from rackproof.judging.capabilities import CABLING
from rackproof.measurements.cx7 import CX7_HEARD
from rackproof.measurements.lanes import LANE_HEARD

pytestmark = [pytest.mark.step(1), pytest.mark.capability(CABLING, blocks=True)]


@pytest.mark.platform("thor")
def test_lane_is_in_its_planned_port(lane, inventory, planned):
    cabling.check_lane(inventory, lane.host.spec, lane.spec, planned(LANE_HEARD))


@pytest.mark.platform("spark")
def test_cx7_cable_joins_the_planned_ports(cx7, inventory, planned):
    if not cabling.far_ends(inventory, cx7.host.spec, cx7.spec):
        pytest.skip("the inventory names no node at the far end of this cable (no peer on its subnet)")
    cabling.check_cx7(inventory, cx7.host.spec, cx7.spec, planned(CX7_HEARD))
