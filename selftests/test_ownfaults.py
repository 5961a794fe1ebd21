"""The controller's own faults end a run in one line with their own exit status, never a
traceback (rackproof.plugin.ownfaults): a report folder that cannot be written keeps
results.json elsewhere (exit 7); a run not added to the history (8); the run's private folder
removed mid-run (9); a signal while pytest still loads (2). On a recording (no rack needed)."""

import json
import re
import signal
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from rackproof.plugin import ownfaults
from selftests.suite import REPLAYS, REPO, run_suite

HEALTHY = REPLAYS / "thor5-healthy"


def test_a_report_that_cannot_be_written_ends_the_run_in_one_line_and_keeps_results(pytester):
    """report.html cannot be written (a folder stands at its name: as a full or read-only disk
    refuses it, but without root): one line, exit 7, results.json kept beside it."""
    folder = Path(pytester.path) / "run"
    (folder / "report.html").mkdir(parents=True)
    run = run_suite(pytester, "--replay", str(HEALTHY), "--step", "3", f"--html={folder}/report.html")
    assert run.exit_status == ownfaults.REPORT_NOT_WRITTEN, run.output
    assert "Traceback" not in run.output and "INTERNALERROR" not in run.output, run.output
    (line,) = [line for line in run.output.splitlines() if line.startswith("rackproof: the report")]
    assert line == (f"rackproof: the report could not be written in {folder}: Is a directory ({folder}/report.html); "
                    f"results.json kept at {folder}/results.json"), line
    results = json.loads((folder / "results.json").read_text())     # the run as it measured it, whole
    assert results["run"]["exit_status"] == 7 and results["verdict"]["decision"]
    assert len(results["tests"]) == len(run.outcomes) > 20


def test_a_report_folder_that_cannot_be_made_stops_the_run_before_it_measures(pytester):
    """The folder cannot be made (a file stands where it should be): said in one line before
    anything is measured, exit 7 (pytest-html would have made it, with a traceback)."""
    blocker = Path(pytester.path) / "reports"
    blocker.write_text("a file, not a folder\n")
    run = run_suite(pytester, "--replay", str(HEALTHY), "--step", "3", f"--html={blocker}/run/report.html",
                    f"--junitxml={blocker}/run/junit.xml")
    assert run.exit_status == ownfaults.REPORT_NOT_WRITTEN, run.output
    assert "Traceback" not in run.output and "INTERNALERROR" not in run.output, run.output
    said = [line for line in run.output.splitlines() if "rackproof: the report" in line]
    assert len(said) == 1 and said[0].endswith(f"rackproof: the report's folder could not be made: Not a directory "
                                               f"({blocker}/run); nothing was measured"), run.output
    assert not run.outcomes


class _Terminal:
    def __init__(self):
        self.lines = []

    def write_line(self, line, **markup):
        self.lines.append(line)



@pytest.mark.parametrize("unrecorded, folder_gone, status", [
    ("reports/history.sqlite: cannot record the run (database is locked)", False, ownfaults.HISTORY_NOT_WRITTEN),
    ("", True, ownfaults.RUN_FOLDER_REMOVED),
    ("", False, 0),
], ids=["history locked", "run folder removed", "neither"])
def test_the_history_not_written_or_the_run_folder_removed_have_their_own_status(tmp_path, unrecorded, folder_gone,
                                                                                  status):
    session = SimpleNamespace(config=SimpleNamespace(stash=pytest.Stash()), exitstatus=0)
    run = SimpleNamespace(written={"verdict": {}}, unrecorded=unrecorded, folder=tmp_path / "report")
    folder = tmp_path / "rackproof-run-x"
    folder.mkdir()
    if folder_gone:
        folder.rmdir()
    ownfaults.written(session, run, folder)
    terminal = _Terminal()
    assert session.exitstatus == status
    assert ownfaults.summary(session.config, terminal) == bool(status)
    if status == ownfaults.HISTORY_NOT_WRITTEN:
        assert terminal.lines == [f"rackproof: this run is not in the history: {unrecorded}; the report is whole, "
                                  f"in {tmp_path / 'report'}"]
    elif status:
        assert terminal.lines[0].startswith(f"rackproof: the run's private folder {folder} was removed while the run")


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_while_pytest_still_loads_ends_in_one_line(signum):
    """The plugin's guard is in place from its import (pytest loads it first, by its entry
    point) until pytest configures the run; Python's own would be a traceback or a silent 143."""
    code = ("import os, signal, time, rackproof.plugin; "
            f"os.kill(os.getpid(), {int(signum)}); time.sleep(10)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=REPO,
                          preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert done.stderr == (f"rackproof: interrupted ({signal.Signals(signum).name}) before the run began: nothing was "
                           "measured and no report was written\n")
