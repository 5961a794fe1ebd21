"""With pytest-xdist the controller collects the checks itself while its workers start, and runs
the plan on its own collection: the plan waits for no worker's collection, the report's scope
and left-out checks are the serial run's (each once), and a worker that collected other checks
than the controller planned for makes the run incomplete rather than judge them silently."""

import json
import os
import re

from rackproof.plugin import workers
from selftests.report_suite import run_report
from selftests.suite import REPLAYS, REPO, run_suite

ORDER_SPY = """
import os
import pytest
from rackproof.measuring import plan
_run = plan.run
def _note(line):
    with open(os.environ["RACKPROOF_PLAN_ORDER"], "a") as notes:
        notes.write(line + "\\n")
def run(*args, **kwargs):
    _note("ran the plan")
    return _run(*args, **kwargs)
plan.run = run
@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_xdist_node_collection_finished(node, ids):
    _note(f"{node.gateway.id} collected")
"""

# the controller alone leaves out one check, without telling anyone: its workers still collect it
CONTROLLER_DROPS = """
import os
import pytest
@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    if not hasattr(config, "workerinput") and config.pluginmanager.getplugin("dsession"):
        dropped = items.pop()
        with open(os.environ["RACKPROOF_DROPPED"], "w") as note:
            note.write(dropped.nodeid)
"""


def _with_plugin(pytester, monkeypatch, name: str, text: str) -> None:
    (pytester.path / f"{name}.py").write_text(text)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(pytester.path), os.environ.get("PYTHONPATH")])))


def test_the_controller_plans_before_any_worker_has_collected(pytester, monkeypatch):
    _with_plugin(pytester, monkeypatch, "order_spy", ORDER_SPY)
    notes = pytester.path / "order"
    monkeypatch.setenv("RACKPROOF_PLAN_ORDER", str(notes))
    run = run_suite(pytester, "-p", "order_spy", "--replay", str(REPLAYS / "thor5-healthy"), "-n", "2")
    assert run.exit_status == 0, run.output
    first, *then = notes.read_text().splitlines()
    assert first == "ran the plan" and sorted(then) == ["gw0 collected", "gw1 collected"], notes.read_text()


# the workers' scheduling while the controller measures (seen from the controller, in its plan)
# and when they judge (seen by each worker, in its checks)
SCHEDULING_SPY = """
import os
import pytest
from rackproof.measuring import plan
from rackproof.plugin import workers
_run, _config = plan.run, []
def _note(line):
    with open(os.environ["RACKPROOF_SCHEDULING"], "a") as notes:
        notes.write(line + "\\n")
def pytest_configure(config):
    _config.append(config)
def _group(pid):
    with open(f"/proc/{pid}/autogroup") as group:
        return group.read().split()[-1]
def run(*args, **kwargs):
    pids = [pid for pid, _ in _config[0].stash.get(workers.PIDS, [])]
    _note(f"plan: {len(pids)} workers, policies {sorted({os.sched_getscheduler(p) for p in pids})}, "
          f"sessions of their own {all(os.getsid(p) == p for p in pids)}, groups' nice {sorted({_group(p) for p in pids})}")
    return _run(*args, **kwargs)
plan.run = run
def pytest_runtest_setup(item):
    _note(f"judging: policy {os.sched_getscheduler(0)} nice {os.nice(0)} group's nice {_group(os.getpid())}")
"""


def test_the_workers_start_idle_while_the_controller_measures_and_judge_at_their_niceness(pytester, monkeypatch):
    _with_plugin(pytester, monkeypatch, "scheduling_spy", SCHEDULING_SPY)
    notes = pytester.path / "scheduling"
    monkeypatch.setenv("RACKPROOF_SCHEDULING", str(notes))
    run = run_suite(pytester, "-p", "scheduling_spy", "--replay", str(REPLAYS / "thor5-healthy"), "-n", "2",
                    "tests_physical/test_lanes.py")
    lines = notes.read_text().splitlines()
    # idle in sessions of their own whose group is the least nice: else, as the kernel shares the
    # CPU between sessions first, they took their session's share beside the simulated nodes'
    assert lines[0] == f"plan: 2 workers, policies [{os.SCHED_IDLE}], sessions of their own True, " \
                       f"groups' nice ['{workers.AUTOGROUP_ASIDE}']", (lines[:3], run.output)
    judged = set(lines[1:])
    assert judged == {f"judging: policy {os.SCHED_OTHER} nice {workers.NICE} group's nice {workers.NICE}"}, \
        (judged, run.output)


def _deselected(output: str) -> int:
    found = re.search(r"(\d+) deselected in ", output)
    return int(found.group(1)) if found else 0


def test_checks_left_out_and_out_of_scope_are_the_serial_runs_each_once(pytester):
    replay = str(REPLAYS / "thor5-lane-down-fec-mismatch")
    serial = run_report(pytester, "--replay", replay, "-k", "not lane", name="serial")
    parallel = run_report(pytester, "--replay", replay, "-k", "not lane", "-n", "2", name="xdist")
    a, b = serial.results, parallel.results
    assert b["run"]["xdist_workers"] == 2
    assert a["verdict"]["coverage"]["not_run"], "-k left checks out"
    assert b["verdict"]["coverage"] == a["verdict"]["coverage"]
    assert len(set(b["verdict"]["coverage"]["not_run"])) == len(b["verdict"]["coverage"]["not_run"])
    assert b["scope"] == a["scope"] and b["scope"]
    assert [t["id"] for t in b["tests"]] == [t["id"] for t in a["tests"]]
    # the terminal counts what -k and the suite's scope left out once, as a serial run does
    assert _deselected(parallel.output) == _deselected(serial.output) > 0, parallel.output


def test_a_worker_that_collected_a_check_the_plan_did_not_cover_makes_the_run_incomplete(pytester, monkeypatch):
    _with_plugin(pytester, monkeypatch, "controller_drops", CONTROLLER_DROPS)
    dropped = pytester.path / "dropped"
    monkeypatch.setenv("RACKPROOF_DROPPED", str(dropped))
    run = run_suite(pytester, "-p", "controller_drops", "--replay", str(REPLAYS / "thor5-healthy"), "-n", "2")
    results = json.loads(next(pytester.path.glob("**/results.json")).read_text())
    coverage = results["verdict"]["coverage"]
    assert results["verdict"]["decision"] == "INCOMPLETE", results["verdict"]
    assert re.match(r"worker gw[01] collected other checks than the controller measured for: 1 not in its plan ", coverage["interrupted"])
    assert dropped.read_text() in coverage["interrupted"], coverage["interrupted"]
    assert "verdict: INCOMPLETE" in run.output


def test_a_collection_error_stops_the_run_as_a_serial_run_does_and_is_reported_once(pytester):
    root = pytester.path / "suite"
    (root / "tests_broken").mkdir(parents=True)
    (root / "tests_broken" / "test_broken.py").write_text("import rackproof_no_such_module\n")
    (root / "tests_ssh").symlink_to(REPO / "tests_ssh")
    (root / "conftest.py").write_text(f"import sys\nsys.path.insert(0, {str(REPO)!r})\n" + (REPO / "conftest.py").read_text())
    (root / "pytest.ini").write_text("\n".join("testpaths = tests_ssh tests_broken" if line.startswith("testpaths") else line
                                               for line in (REPO / "pytest.ini").read_text().splitlines()) + "\n")
    outputs = {}
    for workers in ((), ("-n", "2")):
        out = pytester.path / f"out{len(workers)}"
        result = pytester.runpytest_subprocess("-c", str(root / "pytest.ini"), "--rootdir", str(root), "-q",
                                               "--replay", str(REPLAYS / "thor5-healthy"), f"--html={out / 'report.html'}",
                                               *workers, timeout=300)
        outputs[workers] = result.outlines[-1]
        coverage = json.loads((out / "results.json").read_text())["verdict"]["coverage"]
        assert coverage["interrupted"] == "interrupted (1 error during collection)", coverage
        assert "1 error in" in result.outlines[-1] and not [t for t in coverage["not_run"] if "broken" in t]
    assert re.sub(r"in [\d.]+s", "", outputs[()]) == re.sub(r"in [\d.]+s", "", outputs[("-n", "2")])
