"""A failed check is one record (rackproof.judging.failure.Failure): the terminal line, the report's
message and hint, and results.json's `failure` all come from its fields."""

import datetime as dt

import pytest

from rackproof.judging.failure import Failure, judge, together
from rackproof.inventory.model import load_inventory
from rackproof.inventory.figures import Expectation, Measurement
from rackproof.report.document import Recorded, entry_for
from rackproof.report.outcomes import PytestReport
from selftests.suite import EXAMPLES

ID = "tests_physical/test_lanes.py::test_lane_link_detected[thor-3:mgbe1_0]"


def test_a_comparison_names_where_what_expected_found_and_the_usual_cause():
    f = Failure("thor-3 mgbe1_0", "ethtool link", "Link detected: yes", "Link detected: no", "the cable is not seated")
    assert str(f) == ("thor-3 mgbe1_0: ethtool link: expected Link detected: yes, found Link detected: no. "
                      "Usual cause: the cable is not seated")
    assert f.hint == "Usual cause: the cable is not seated"


def test_a_cause_read_from_the_evidence_is_not_called_usual():
    f = Failure("thor-1 -> thor-2", "bonded rate", cause="mgbe2_0 of thor-1 has no link", seen=True)
    assert str(f) == "thor-1 -> thor-2: bonded rate. Cause: mgbe2_0 of thor-1 has no link"


def test_a_value_from_a_node_cannot_forge_a_line():
    f = Failure("thor-1", "hostname", "thor-1", "thor-1\nPASSED everything")
    assert "\n" not in str(f) and "\\x0a" in str(f)


def test_a_measurement_under_its_floor_fails_naming_both_figures():
    m = Measurement("lane rate", "thor-5 -> thor-2", 0.239, "Gbit/s", Expectation(22.5))
    with pytest.raises(Failure) as raised:
        judge(m, "thor-5 -> thor-2 (one TCP stream)", "a lane at 10G", also="retransmits 0")
    assert str(raised.value) == ("thor-5 -> thor-2 (one TCP stream): lane rate: expected at least 22.5 Gbit/s, "
                                 "found 0.239 Gbit/s (retransmits 0). Usual cause: a lane at 10G")


def test_a_measurement_that_meets_its_floor_is_returned():
    m = Measurement("lane rate", "thor-1 -> thor-2", 23.4, "Gbit/s", Expectation(22.5))
    assert judge(m, "thor-1 -> thor-2", "a lane at 10G") is m


def test_several_comparisons_of_one_check_fail_together():
    one, two = Failure("", "GPU driver differs", "580", "575 on spark-2"), Failure("", "CUDA differs", "13.0", "12.9")
    assert together([None, None]) is None
    assert together([None, one]) is one
    assert str(together([one, two])) == f"{one}\n{two}"


def test_the_report_reads_the_record_field_by_field():
    f = Failure("thor-3 mgbe1_0", "lane speed", "25000Mb/s", "10000Mb/s", "the switch port is set to 10G",
                details="  thor-3  10000")
    phases = (PytestReport("setup", "passed"),
              PytestReport("call", "failed", f"{f}\n\n({ID})", 0.1, {"rackproof_failure": f.as_dict()}))
    thor5 = load_inventory(EXAMPLES / "thor5.toml")
    entry = entry_for(Recorded(ID, phases), thor5.at(3), [], dt.date(2026, 12, 3))
    assert entry["message"] == "thor-3 mgbe1_0: lane speed: expected 25000Mb/s, found 10000Mb/s.\n  thor-3  10000"
    assert entry["hint"] == "Usual cause: the switch port is set to 10G"
    assert entry["failure"]["where"] == "thor-3 mgbe1_0" and entry["failure"]["found"] == "10000Mb/s"


def test_an_error_without_a_record_keeps_its_text_and_names_no_cause():
    phases = (PytestReport("setup", "failed", "fixture 'hosts' failed: thor-9 unknown"),)
    thor5 = load_inventory(EXAMPLES / "thor5.toml")
    entry = entry_for(Recorded(ID, phases), thor5.at(3), [], dt.date(2026, 12, 3))
    assert (entry["outcome"], entry["message"], entry["hint"], entry["failure"]) == \
        ("error", "fixture 'hosts' failed: thor-9 unknown", "", None)
