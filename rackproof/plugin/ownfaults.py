"""The controller's own faults: what the run measured is never lost to the controller's life.

- The report's folder cannot be written (disk full, read-only, over quota) while the run's files
  are written (ours, junitxml's, pytest-html's): results.json is kept wherever it still can be (the
  report's folder, else a new private folder of the temp directory), the run ends with one line
  naming the folder, the error and where results.json is, and REPORT_NOT_WRITTEN.
- The run could not be added to the history database (another run held it locked past its
  timeout, or it cannot be written): the report is whole and says so; the run ends with
  HISTORY_NOT_WRITTEN.
- The run's private folder (rackproof.nodes.runfolder) was removed while the run went on (a temp
  cleaner): one line, RUN_FOLDER_REMOVED.
- A signal before the run's own handlers are in place (pytest still loading): one line, exit
  status 2 (interrupted), nothing measured and no report folder made yet.

A controller's fault's status stands over the verdict's (the report or results.json says the
verdict): the run's files are not what they should be, and CI must see it.
"""

from __future__ import annotations

import os
import signal
import tempfile
import threading
from pathlib import Path

import pytest

from rackproof.ticket.exitstatus import HISTORY_NOT_WRITTEN, REPORT_NOT_WRITTEN, RUN_FOLDER_REMOVED
from rackproof.report import document
from rackproof.probes.safetext import one_line

SAID = pytest.StashKey[str]()        # the one line a controller's fault ended the run with


def _before_the_run(signum, frame) -> None:
    """SIGINT or SIGTERM while pytest loads: nothing started on a node, no report folder made yet."""
    os.write(2, f"rackproof: interrupted ({signal.Signals(signum).name}) before the run began: nothing was measured "
                "and no report was written\n".encode())
    os._exit(2)


def guard_the_start() -> None:
    """Until the run's own handlers are in place, a signal ends the process in one line (Python's
    own: a KeyboardInterrupt traceback, or for SIGTERM a silent 143). Only where nobody else has
    set a handler (an embedding program's stays)."""
    if threading.current_thread() is threading.main_thread():
        for signum, default in _DEFAULTS:
            if signal.getsignal(signum) is default:
                signal.signal(signum, _before_the_run)


def run_begins() -> None:
    """pytest's configure: from here pytest (Ctrl-C) and the report (SIGTERM) handle signals."""
    if threading.current_thread() is threading.main_thread():
        for signum, default in _DEFAULTS:
            if signal.getsignal(signum) is _before_the_run:
                signal.signal(signum, default)


_DEFAULTS = ((signal.SIGINT, signal.default_int_handler), (signal.SIGTERM, signal.SIG_DFL))


def folder_not_made(error: OSError) -> None:
    """The report's folder could not be made when the run began: nothing was measured yet."""
    pytest.exit(f"rackproof: the report's folder could not be made: {one_line(error.strerror or str(error))}"
                f"{f' ({one_line(str(error.filename))})' if error.filename else ''}; nothing was measured",
                REPORT_NOT_WRITTEN)


def written(session: pytest.Session, run, run_folder: Path | None) -> None:
    """After the run's files were written (pytest_sessionfinish): the controller's faults met."""
    if run_folder is not None and not run_folder.is_dir():
        _said(session, RUN_FOLDER_REMOVED,
              f"rackproof: the run's private folder {run_folder} was removed while the run went on (a temp cleaner? "
              "systemd-tmpfiles, tmpreaper): what the checks measured after that may be missing; "
              f"the report is in {run.folder}")
    elif run.written is not None and run.unrecorded:
        _said(session, HISTORY_NOT_WRITTEN, f"rackproof: this run is not in the history: {one_line(run.unrecorded)}; "
                                            f"the report is whole, in {run.folder}")


def not_written(session: pytest.Session, run, error: OSError) -> None:
    """The run's files could not be written: results.json where it still can be, and one line."""
    kept = _keep_results(session, run)
    where = f"results.json kept at {kept}" if kept else "results.json could not be written anywhere either"
    _said(session, REPORT_NOT_WRITTEN,
          f"rackproof: the report could not be written in {run.folder}: {one_line(error.strerror or str(error))}"
          f"{f' ({one_line(str(error.filename))})' if error.filename else ''}; {where}")


def _keep_results(session: pytest.Session, run) -> Path | None:
    doc = run._document(session, session.exitstatus)
    doc["run"]["exit_status"] = REPORT_NOT_WRITTEN
    for folder in (run.folder, None):
        try:
            # a folder of mkdtemp's: mode 0700, a name nobody could guess
            target = (folder or Path(tempfile.mkdtemp(prefix="rackproof-results-"))) / "results.json"
            document.write(doc, target)
            return target
        except OSError:
            continue
    return None


def _said(session: pytest.Session, status: int, line: str) -> None:
    session.config.stash[SAID] = line
    session.exitstatus = status


def summary(config: pytest.Config, terminalreporter) -> bool:
    """The controller's fault's line at the end of the terminal's summary; False when there was none."""
    line = config.stash.get(SAID, "")
    if line:
        terminalreporter.write_line(line, red=True, bold=True)
    return bool(line)
