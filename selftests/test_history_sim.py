"""The run history on a simulated rack of two Thors: three healthy runs, then one with a lane slowed
(the fault lane-slowed: it carries 90% of its speed) but still above its floor. `rackproof history`
shows four points per figure; the fourth report warns about that lane with both numbers, draws
each figure's runs beside its bar, and its verdict stays ACCEPTED (warned checks are accepted:
docs/report.md) while listing the drift. A fifth run whose inventory asks fails the drifted
checks instead; a broken history database stops a run before any check, in one line."""

from __future__ import annotations

import json
import re
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from rackproof.report import document
from selftests.simrack import SimRack, rack_marks
from selftests.suite import run_suite

pytestmark = rack_marks()
SLOWED = ("thor-1 -> thor-2", "thor-2 -> thor-1")   # both ways cross thor-2's lane


@pytest.fixture(scope="module")
def rack():
    with SimRack("thor-n2") as r:
        yield r


def _inventory(rack: SimRack, folder: Path, drift_fails: bool = False) -> Path:
    """The rack's inventory with a floor at 80% of a lane (a lane at 90% is above it) and the
    history's settings; the default drift share (5%)."""
    text = rack.inventory.read_text()
    floor = "lane_floor_fraction = 0.8\n"
    text = re.sub(r"^\[expect\]\n", "[expect]\n" + floor, text, count=1, flags=re.M) if "\n[expect]\n" in text \
        else text + "\n[expect]\n" + floor
    path = folder / ("drift-fails.toml" if drift_fails else "cluster.toml")
    path.write_text(text + f"\n[history]\npath = \"{folder / 'history.sqlite'}\"\n"
                           f"drift_fails = {'true' if drift_fails else 'false'}\n")
    return path


def _run(pytester, rack: SimRack, inventory: Path, *args: str):
    run = run_suite(pytester, f"--inventory={inventory}", *args, netns=rack.rack.topo.bench)
    doc = json.loads((run.run_dir / "results.json").read_text())
    return run, doc, (run.run_dir / "report.html").read_text()


def _lane_rates(doc: dict) -> dict[str, dict]:
    return {m["subject"]: {**m, "outcome": t["outcome"], "message": t["message"]}
            for t in doc["tests"] for m in t["measurements"] if m["reference"] == "lane.rate"}


def test_four_runs_then_a_slowed_lane_warns_with_both_numbers(rack, pytester):
    folder = Path(pytester.path)
    inventory = _inventory(rack, folder)
    healthy = []
    for _ in range(3):
        run, doc, _page = _run(pytester, rack, inventory)
        assert run.exit_status == 0 and doc["verdict"]["decision"] == "ACCEPTED", run.output
        assert doc["verdict"]["drift"] == [], doc["verdict"]["summary"]
        healthy.append(_lane_rates(doc))
    rack.fault("thor-2", "lane-slowed", "mgbe0_0", "0.9")
    # on two xdist workers: each reads the history itself, the controller gathers the warnings
    run, doc, page = _run(pytester, rack, inventory, "-n", "2")
    rates = _lane_rates(doc)

    # the lane is slower but above its floor; the verdict is ACCEPTED, warned, and lists the drift
    assert run.exit_status == 0 and doc["verdict"]["decision"] == "ACCEPTED", run.output
    assert "warned" in doc["verdict"]["summary"] and "drifted from the run history" in doc["verdict"]["summary"]
    drifted = {d["subject"]: d for d in doc["verdict"]["drift"]}
    assert set(drifted) == set(SLOWED), doc["verdict"]["drift"]   # the FEC figures and other lanes did not drift
    for subject in SLOWED:
        now, median = rates[subject], statistics.median(run_[subject]["value"] for run_ in healthy)
        assert now["expectation"]["floor"] < now["value"] < median * 0.95, (now, median)
        assert now["outcome"] == "warned"
        d = drifted[subject]
        assert (d["value"], d["median"], d["runs"]) == (now["value"], median, 3)
        for number in (f"{now['value']:g} Gbit/s", f"median {median:g} Gbit/s"):
            assert number in now["message"] and number in doc["verdict"]["summary"], (number, now["message"])
        assert f"drift: lane.rate {subject} {now['value']:g} Gbit/s" in run.output
    assert 'id="drift"' in page and page.count('<g class="trend"') == len(doc["history"]["trends"])

    assert document.problems(doc) == []
    # four points per figure, in the history and beside each bar
    assert doc["history"]["runs"] == 4 and all(len(t["values"]) == 4 for t in doc["history"]["trends"])
    shown = subprocess.run([sys.executable, "-m", "rackproof.cli", "history", "--db", str(folder / "history.sqlite")],
                           capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert len(lines) == len(doc["history"]["trends"]) >= 6   # rtt, lane rate, FEC per lane, for each node
    for line in lines:
        assert len(line.split(": ", 1)[1].split("  (")[0].split()) == 4, line
    slowed = subprocess.run([sys.executable, "-m", "rackproof.cli", "history", "--db", str(folder / "history.sqlite"),
                             "--figure", "lane.rate", "--subject", SLOWED[0]], capture_output=True, text=True, timeout=60)
    assert slowed.stdout.count("\n") == 1 and f"{rates[SLOWED[0]]['value']:g}  (last -" in slowed.stdout, slowed.stdout

    # the inventory asks: the same drift fails its checks, and only those (a run of the throughput
    # checks alone: narrowed, so INCOMPLETE, with a failure: exit 1)
    run, doc, _page = _run(pytester, rack, _inventory(rack, folder, drift_fails=True), "tests_network/test_throughput.py")
    assert run.exit_status == 1 and doc["verdict"]["decision"] == "INCOMPLETE", run.output
    failed = {t["id"] for t in doc["tests"] if t["outcome"] == "failed"}
    assert failed == {f"tests_network/test_throughput.py::test_iperf3_one_stream[{s.replace(' ', '')}]"
                      for s in SLOWED}, failed
    assert all("drifted from the run history" in t["message"] for t in doc["tests"] if t["id"] in failed)
    rack.heal("thor-2", "lane-slowed", "mgbe0_0")


def test_a_broken_history_database_stops_the_run_in_one_line(rack, pytester):
    broken = Path(pytester.path, "broken.sqlite")
    broken.write_bytes(b"not a database at all" * 100)
    run = run_suite(pytester, f"--inventory={rack.inventory}", f"--history={broken}", "tests_ssh",
                    netns=rack.rack.topo.bench)
    assert run.exit_status == 4 and not run.outcomes, run.output
    assert f"--history: {broken}: not a readable history database (file is not a database)" in run.output
    assert "Traceback" not in run.output
