"""--baseline: what changed since an earlier results.json: new failures, fixed checks, and
figures that moved by more than the tolerance (a planted 30% drop of one pair's rate)."""

import argparse
import json

import pytest

from rackproof.plugin.report import _percent
from rackproof.report.baseline import compare
from selftests.report_suite import run_report
from selftests.suite import REPLAYS

PAIRS = [("thor-1", "thor-2"), ("thor-2", "thor-1"), ("thor-1", "thor-3"), ("thor-3", "thor-1")]


def results(rates: dict, outcomes: dict | None = None, better: str = "higher", label: str = "lane rate",
            reference: str | None = "lane.rate") -> dict:
    """A results document of iperf3 checks, one per pair, as much of it as a comparison reads
    (reference None: as results.json was before it named each figure's reference key)."""
    tests = [{
        "id": f"tests_network/test_throughput.py::test_iperf3_one_stream[{a}->{b}]",
        "outcome": (outcomes or {}).get((a, b), "passed"), "message": "",
        "measurements": [{"kind": label, "subject": f"{a} -> {b}", "value": rate, "unit": "Gbit/s",
                          "expectation": {"floor": 22.5, "target": None, "better": better}, "verdict": "passed",
                          **({"reference": reference} if reference else {})}],
    } for (a, b), rate in rates.items()]
    return {"run": {"cluster": "thor-shelf", "started": "2026-11-30T10:00:00+00:00"},
            "verdict": {"decision": "ACCEPTED"}, "tests": tests}


BEFORE = {pair: 23.5 for pair in PAIRS}


def test_a_30_percent_drop_of_one_pair_is_flagged_and_small_moves_are_not():
    now = {**BEFORE, ("thor-1", "thor-3"): 23.5 * 0.7, ("thor-2", "thor-1"): 23.5 * 0.95, ("thor-3", "thor-1"): 23.5 * 1.04}
    diff = compare(results(now), results(BEFORE), 0.10, "old/results.json")
    assert [(m["subject"], m["change"], m["direction"]) for m in diff["moved"]] == [("thor-1 -> thor-3", -0.3, "worse")]
    assert diff["moved"][0]["before"] == 23.5 and diff["new_failures"] == diff["fixed"] == []
    assert compare(results(now), results(BEFORE), 0.35, "old/results.json")["moved"] == []


@pytest.mark.parametrize("baseline_reference", ["lane.rate", None], ids=["by reference key", "before 2.7"])
def test_a_figure_whose_label_was_renamed_is_still_compared_by_its_reference_key(baseline_reference):
    now = {**BEFORE, ("thor-1", "thor-3"): 23.5 * 0.7}
    before = results(BEFORE, label="lane rate", reference=baseline_reference)
    diff = compare(results(now, label="one-stream rate"), before, 0.10, "b")
    if baseline_reference:   # the key travels with the figure: a new label changes nothing
        assert [(m["subject"], m["change"]) for m in diff["moved"]] == [("thor-1 -> thor-3", -0.3)]
    else:                    # an older baseline knows only labels: a renamed one is not compared
        assert diff["moved"] == []


def test_where_lower_is_better_a_rise_is_worse():
    before = {("thor-1", "thor-2"): 10.0}
    diff = compare(results({("thor-1", "thor-2"): 13.0}, better="lower"), results(before, better="lower"), 0.10, "b")
    assert [(m["change"], m["direction"]) for m in diff["moved"]] == [(0.3, "worse")]


def test_new_failures_and_fixed_checks():
    before = results(BEFORE, {("thor-2", "thor-1"): "failed", ("thor-3", "thor-1"): "error"})
    now = results(BEFORE, {("thor-1", "thor-2"): "failed", ("thor-3", "thor-1"): "error"})
    diff = compare(now, before, 0.10, "b")
    assert [(f["test"].rpartition("[")[2], f["was"]) for f in diff["new_failures"]] == [("thor-1->thor-2]", "passed")]
    assert [(f["test"].rpartition("[")[2], f["was"]) for f in diff["fixed"]] == [("thor-2->thor-1]", "failed")]


def test_the_report_shows_what_changed_since_the_baseline(pytester):
    replay = str(REPLAYS / "thor5-lane-down-fec-mismatch")
    first = run_report(pytester, "--replay", replay, name="first")
    baseline = first.results
    # plant the earlier run: thor-1 -> thor-2 ran 30% faster, the FEC check passed, the link check failed
    rate = next(m for t in baseline["tests"] for m in t["measurements"] if m["subject"] == "thor-1 -> thor-2")
    rate["value"] = round(rate["value"] / 0.7, 3)
    fec = next(t for t in baseline["tests"] if t["id"].endswith("test_lane_fec[thor-2:mgbe0_0]"))
    fec["outcome"] = "passed"
    link = next(t for t in baseline["tests"] if t["id"].endswith("test_lane_link_detected[thor-1:mgbe0_0]"))
    link["outcome"] = "failed"
    path = pytester.path / "baseline.json"
    path.write_text(json.dumps(baseline))

    run = run_report(pytester, "--replay", replay, "--baseline", str(path), name="second")
    diff = run.results["baseline"]
    assert [(m["subject"], m["change"], m["direction"]) for m in diff["moved"]] == [("thor-1 -> thor-2", -0.3, "worse")]
    assert [f["test"].rpartition("::")[2] for f in diff["new_failures"]] == ["test_lane_fec[thor-2:mgbe0_0]"]
    assert [f["test"].rpartition("::")[2] for f in diff["fixed"]] == ["test_lane_link_detected[thor-1:mgbe0_0]"]
    assert diff["tolerance"] == 0.1
    assert 'data-change="-0.3"' in run.html and "-30.0%" in run.html


def test_a_baseline_that_is_not_a_results_file_stops_the_run_with_one_line(pytester):
    bad = pytester.path / "not-results.json"
    bad.write_text(json.dumps({"tests": []}))
    run = run_report(pytester, "--replay", str(REPLAYS / "thor5-healthy"), "--baseline", str(bad))
    assert run.exit_status == 4, run.output
    assert f"--baseline: {bad}: not a rackproof results.json of schema 2.x (schema_version missing)" in run.output


@pytest.mark.parametrize("given, tolerance", [("10", 0.10), ("10%", 0.10), (" 2.5% ", 0.025), ("0", 0.0)])
def test_a_tolerance_is_a_finite_percentage_of_0_or_more(given, tolerance):
    assert _percent(given) == pytest.approx(tolerance)


@pytest.mark.parametrize("given", ["nan", "inf%", "1e999", "-5%", "ten"])
def test_any_other_tolerance_is_refused(given):
    with pytest.raises(argparse.ArgumentTypeError):
        _percent(given)


def test_a_tolerance_of_nan_stops_the_run_with_a_usage_error(pytester):
    run = run_report(pytester, "--replay", str(REPLAYS / "thor5-healthy"), "--baseline-tolerance=nan")
    assert run.exit_status == 4, run.output
    assert "argument --baseline-tolerance: 'nan' is not a finite number" in run.output
