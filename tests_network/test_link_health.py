"""A cable that passes today and fails next week: each lane's error counters, read before the
run's first throughput test over it and after the last. An uncorrectable FEC block or a CRC
error under load fails; so do more corrected blocks per GB than the platform's reference. A lane
whose output lacks a counter judged here (its driver's CRC/FCS name, the FEC block statistics) is
not verified, never passed."""

import pytest

from rackproof.judging import capabilities, linkhealth
from rackproof.judging.failure import judge
from rackproof.measurements.lanes import LANE_COUNTERS_UNDER_LOAD


@pytest.mark.step(3)
@pytest.mark.after_load
def test_lane_error_counters_under_load(lane, inventory, measure, guards, planned):
    guards(*capabilities.lane(inventory, lane.host.spec))
    change = planned(LANE_COUNTERS_UNDER_LOAD)
    linkhealth.fail_on_errors(change, lane.where)   # not verified without the counters it judges
    m = measure("lane.fec_corrected", lane.where, change.corrected_per_gb, "blocks/GB")
    judge(m, lane.where, linkhealth.CAUSES, also=change.describe())
