"""The clock check of step 9 (rackproof.judging.slurm.clock_within_munges_limit) on real `chronyc tracking`
outputs (samples/SOURCES.md): a node synchronised to a time server passes; one following its own local
reference (Reference ID 7F7F0101, stratum 10, offset 0 against itself) is not synchronised to a time
server and fails, unless the inventory says the cluster keeps local time (time_source = "local")."""

import re
from pathlib import Path

import pytest
from pydantic import ValidationError

from rackproof.judging.failure import Failure
from rackproof.inventory.model import Expect
from rackproof.probes.chrony import parse_tracking
from rackproof.judging.slurm import clock_within_munges_limit

SAMPLES = Path(__file__).parent / "samples"
SYNCED = parse_tracking((SAMPLES / "chronyc_tracking_synced_stratum3_centos7.txt").read_text())
LOCAL = parse_tracking((SAMPLES / "chronyc_tracking_localref_7f7f0101_server_unreachable_centos7.txt").read_text())
LOCAL_ON_PURPOSE = parse_tracking((SAMPLES / "chronyc_tracking_localref_7f7f0101_no_sources_lab_2026.txt").read_text())


PPS = parse_tracking((SAMPLES / "chronyc_tracking_pps_refclock_stratum1_timeserver.txt").read_text())


@pytest.mark.parametrize("tracking", [SYNCED, PPS])
def test_a_node_synchronised_to_a_time_server_or_a_reference_clock_passes(tracking):
    clock_within_munges_limit("thor-1", tracking, local_intended=False)
    clock_within_munges_limit("thor-1", tracking, local_intended=True)


@pytest.mark.parametrize("tracking", [LOCAL, LOCAL_ON_PURPOSE])
def test_a_node_following_its_local_clock_is_not_synchronised_to_a_time_server(tracking):
    with pytest.raises(Failure) as caught:
        clock_within_munges_limit("thor-3", tracking, local_intended=False)
    # chrony prints the zero offset "slow" (-0.000) on one, "fast" (+0.000) on the other
    assert re.match(re.escape("thor-3: clock against NTP time (chronyc tracking): expected synchronised to a time "
                              "server, within 300 s (munge's credential lifetime), found ") + "[+-]" + re.escape(
        "0.000 s, leap status Normal, reference 7F7F0101 (), stratum 10. Usual cause: not synchronised to a time "
        "server: chrony follows the node's own clock (Reference ID 7F7F0101)"), str(caught.value)), str(caught.value)


def test_local_time_passes_where_the_inventory_names_it():
    assert Expect().time_source == "server"
    assert Expect(time_source="local").time_source == "local"
    with pytest.raises(ValidationError):
        Expect(time_source="ntp")
    clock_within_munges_limit("thor-3", LOCAL, local_intended=True)


def test_a_clock_far_off_or_not_synchronised_still_fails():
    with pytest.raises(Failure, match="found \\+600.000 s, leap status Normal, reference C39AAED1"):
        clock_within_munges_limit("thor-5", parse_tracking((SAMPLES / "chronyc_tracking_synced_stratum3_centos7.txt")
                                  .read_text().replace("0.000170658 seconds fast", "600.000000000 seconds fast")),
                                  local_intended=True)
    with pytest.raises(Failure, match="chrony has no reachable time source"):
        clock_within_munges_limit("thor-5", parse_tracking(
            "System time     : 0.000000000 seconds slow of NTP time\nLeap status     : Not synchronised\n"),
            local_intended=True)
