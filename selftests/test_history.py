"""rackproof.ticket.history without a rack: what a run appends, the drift rule (both sides), the small line
beside a figure's bar, and a database that is not one (one line, exit 2)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys

import pytest

from rackproof.ticket import history
from rackproof.report.charts import bar_chart


def _doc(started: str, values: dict[str, float], decision: str = "ACCEPTED") -> dict:
    return {"run": {"cluster": "thor-shelf", "started": started, "step": 3, "ticket": "CHG-1", "operator": "alice",
                    "inventory": {"sha256": "0" * 64}},
            "verdict": {"decision": decision},
            "tests": [{"measurements": [{"reference": "lane.rate", "subject": subject, "kind": "lane rate",
                                         "value": value, "unit": "Gbit/s"} for subject, value in values.items()]
                       + [{"reference": "", "subject": "x", "kind": "unkeyed", "value": 1.0, "unit": "s"}]}]}


def test_runs_are_appended_and_read_back_per_figure(tmp_path):
    db = tmp_path / "sub" / "history.sqlite"
    for i, value in enumerate((24.9, 24.7, 24.8, 23.1)):
        history.append(db, _doc(f"2026-12-0{i + 1}T10:00:00+00:00", {"thor-1 -> thor-2": value, "thor-2 -> thor-1": 24.8}))
    found = history.points(db, "thor-shelf", "lane.rate", "thor-1 -> thor-2")
    assert [p.value for p in found[("thor-shelf", "lane.rate", "thor-1 -> thor-2", "Gbit/s")]] == [24.9, 24.7, 24.8, 23.1]
    assert len(history.points(db)) == 2   # a figure without a reference key is not recorded
    assert history.points(db, "another cluster") == {}
    section = history.section(db, _doc("", {"thor-1 -> thor-2": 23.1}), runs=2)   # drift's window, and this run
    assert section["runs"] == 4 and section["trends"] == [
        {"reference": "lane.rate", "subject": "thor-1 -> thor-2", "unit": "Gbit/s", "values": [24.7, 24.8, 23.1]}]


def test_a_drop_beyond_the_share_drifts_and_one_within_it_does_not():
    earlier = [24.9, 24.7, 24.8]
    found = history.drift(earlier, 23.1, "lane.rate", "a -> b", "Gbit/s", share=0.05, runs=5)
    assert found is not None and (found.median, found.runs) == (24.8, 3) and round(found.change, 4) == -0.0685
    assert history.drift(earlier, 23.9, "lane.rate", "a -> b", "Gbit/s", share=0.05, runs=5) is None   # -3.6%
    assert history.drift(earlier, 30.0, "lane.rate", "a -> b", "Gbit/s", share=0.05, runs=5) is None   # faster
    assert history.drift(earlier[:2], 1.0, "lane.rate", "a -> b", "Gbit/s", share=0.05, runs=5) is None  # too few
    # only the last `runs` count: an old fast run does not make today's figure a drift
    assert history.drift([40.0, 40.0, 40.0, 24.8, 24.8, 24.8], 24.0, "lane.rate", "a -> b", "Gbit/s", 0.05, 3) is None


def test_a_figure_with_a_floor_drifts_inside_its_margin_before_the_floor_fails():
    # the simulated lane: 95.6% of its line rate, its floor at 90%; its margin is 5.86% of the median
    earlier, floor = [23.9, 23.9, 23.9], 22.5
    assert round(history.threshold(earlier, floor, 0.05), 4) == 0.0195   # a third of the margin
    slowed = history.drift(earlier, 23.9 * 0.97, "lane.rate", "a -> b", "Gbit/s", 0.05, 5, floor=floor)
    assert slowed is not None and slowed.share == 0.0195 and slowed.value > floor   # 3% slower, above the floor
    assert history.drift(earlier, 23.9 * 0.985, "lane.rate", "a -> b", "Gbit/s", 0.05, 5, floor=floor) is None
    # the old fixed 5%: the same lane failed its floor (22.5 < 22.7) before it could drift
    assert history.drift(earlier, 23.9 * 0.97, "lane.rate", "a -> b", "Gbit/s", 0.05, 5) is None
    # far above its floor (an engine at 40 tokens/s, floor 30): drift_share caps it
    assert history.threshold([40.0, 40.2, 39.8], 30.0, 0.05) == 0.05
    assert history.drift([40.0, 40.2, 39.8], 36.0, "tokens", "m", "tokens/s", 0.05, 5, floor=30.0) is not None


def test_a_noisy_figure_drifts_beyond_its_own_spread_and_never_later_than_half_its_margin():
    noisy = [23.9, 23.6, 24.2]   # +-1.3% around its median: twice that is its threshold
    assert round(history.threshold(noisy, 22.5, 0.05), 4) == round(2 * 0.3 / 23.9, 4)
    assert history.drift(noisy, 23.9 * 0.98, "lane.rate", "a -> b", "Gbit/s", 0.05, 5, floor=22.5) is None
    assert history.drift([23.9] * 3, 23.9 * 0.98, "lane.rate", "a -> b", "Gbit/s", 0.05, 5, floor=22.5) is not None
    wild = [23.9, 22.9, 24.9]    # its spread is beyond half its margin: half the margin still warns
    assert round(history.threshold(wild, 22.5, 0.05), 4) == round((23.9 - 22.5) / 23.9 / 2, 4)
    assert history.drift(wild, 23.0, "lane.rate", "a -> b", "Gbit/s", 0.05, 5, floor=22.5) is not None
    # a median at its floor (earlier runs that failed): nothing to drift from
    assert history.drift([22.0, 22.5, 22.4], 22.6, "lane.rate", "a -> b", "Gbit/s", 0.05, 5, floor=22.5) is None


def test_the_chart_draws_a_figures_runs_beside_its_bar_only_when_it_has_them():
    group = {"kind": "lane rate", "unit": "Gbit/s", "rows": [
        {"reference": "lane.rate", "subject": s, "value": 23.1, "expectation": {"floor": 22.5, "target": None},
         "verdict": "passed", "outcome": "warned"} for s in ("a -> b", "b -> a")]}
    drawn = bar_chart(group, {("lane.rate", "a -> b"): [24.9, 24.7, 24.8, 23.1]})
    assert drawn.count('<g class="trend"') == 1 and 'data-values="24.9, 24.7, 24.8, 23.1"' in drawn
    assert "<polyline" in drawn and 'width="900"' in drawn
    plain = bar_chart(group)
    assert '<g class="trend"' not in plain and 'width="810"' in plain


def _history_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rackproof.cli", "history", *args], capture_output=True, text=True,
                          timeout=60)


@pytest.mark.parametrize("case", ["garbage", "another sqlite database", "missing"])
def test_a_file_that_is_not_a_history_is_one_line_and_exit_2(case, tmp_path):
    path = tmp_path / "history.sqlite"
    if case == "garbage":
        path.write_bytes(b"\x00garbage" * 512)
    elif case == "another sqlite database":
        with sqlite3.connect(path) as db:
            db.execute("CREATE TABLE t (x)")
    result = _history_cli("--db", str(path))
    expected = {"garbage": "not a readable history database", "another sqlite database":
                "not a rackproof history database (user_version 0)", "missing": "no history database there"}[case]
    assert result.returncode == 2 and result.stderr == f"rackproof history: {path}: {expected}" + (
        " (file is not a database)\n" if case == "garbage" else " (a run writes it)\n" if case == "missing" else "\n")
    with pytest.raises(history.HistoryError):
        history.append(path, _doc("2026-12-01T10:00:00+00:00", {"a -> b": 1.0})) if case != "missing" else \
            history.points(path)


def test_history_prints_each_figure_with_its_last_against_the_median_before(tmp_path):
    db = tmp_path / "history.sqlite"
    for i, value in enumerate((24.9, 24.7, 24.8, 23.1)):
        history.append(db, _doc(f"2026-12-0{i + 1}T10:00:00+00:00", {"thor-1 -> thor-2": value, "thor-2 -> thor-1": 24.8}))
    result = _history_cli("--db", str(db), "--subject", "thor-1 -> thor-2")
    assert result.returncode == 0 and result.stdout == (
        "thor-shelf lane.rate thor-1 -> thor-2 (Gbit/s): 24.9 24.7 24.8 23.1  (last -6.9% against the median 24.8 "
        "before it; run 2026-12-04T10:00:00+00:00, ACCEPTED)\n")
    assert _history_cli("--db", str(db), "--figure", "bond.rate").stdout == "no figure recorded that matches\n"
