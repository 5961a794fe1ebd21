"""What a run's exit status means: one table, shown by `rackproof --help` and docs/report.md
(selftests/test_ci.py checks both against it and against what runs really exit with).

pytest's own statuses end at 5; rackproof adds 6 for a run that did not cover its scope, and 7 to
9 for the controller's own faults (rackproof.plugin.ownfaults), which stand over the verdict's.
"""

from rackproof.report import verdict

INCOMPLETE = 6   # a run that did not cover its scope and failed nothing
REPORT_NOT_WRITTEN = 7    # the report's folder could not be written: results.json kept where it could be
HISTORY_NOT_WRITTEN = 8   # the run is not in the history database: the report is whole
RUN_FOLDER_REMOVED = 9    # the run's private folder was removed while it went on

# (status, what it means), for `pytest --inventory ...` and for `rackproof ...` commands
TABLE = (
    ("0", "ACCEPTED (warned and waived checks included; drift from the run history is a warning)"),
    ("1", "REJECTED or ACCEPTED WITH LIMITS; INCOMPLETE when a check failed; `rackproof verify`: the bundle is "
          "not verified; `rackproof diff`: something changed"),
    ("2", "the run was interrupted (Ctrl-C, SIGTERM: INCOMPLETE or REJECTED); a rackproof command's bad "
          "input (inventory, bundle, history database, arguments)"),
    ("3", "pytest's internal error"),
    ("4", "pytest usage error: a bad inventory, option, waiver file or history database; no check ran"),
    ("5", "no check was collected"),
    (str(INCOMPLETE), "INCOMPLETE: nothing failed, but the run did not cover its scope (narrowed with -k, -m, "
                      "--deselect or test paths, or cut short by a transient fault)"),
    (str(REPORT_NOT_WRITTEN), "the report could not be written (disk full, read-only, quota); one line says "
                              "where results.json was kept"),
    (str(HISTORY_NOT_WRITTEN), "the run could not be added to the history database (locked past its timeout, or "
                               "not writable); the report is whole"),
    (str(RUN_FOLDER_REMOVED), "the run's private folder was removed while it went on (a temp cleaner); the "
                              "report may miss what was measured after"),
)


def text() -> str:
    """The table as `rackproof --help` prints it."""
    return "exit statuses:\n" + "\n".join(f"  {status}  {meaning}" for status, meaning in TABLE)


def of_run(result: dict, pytest_status: int) -> int:
    """A run's exit status from its verdict (rackproof.report.verdict.decide's result), as the table
    says. pytest's own status stands when it is neither 0 nor 1 (interrupted, internal error), and
    for an ACCEPTED run when pytest saw a test fail that the verdict did not count (never a 0 over
    a failure). An INCOMPLETE run exits 1 only when a check failed or could not be confirmed: a
    check cut short by a transient fault, which pytest counts as failed, judged nothing."""
    if pytest_status not in (0, 1):
        return pytest_status
    if result["decision"] == verdict.ACCEPTED:
        return pytest_status
    if result["decision"] == verdict.INCOMPLETE:
        failed = any(c["status"] in (verdict.BLOCKED, verdict.LIMITED_CAP, verdict.UNCONFIRMED)
                     for c in result["capabilities"])
        return 1 if failed else INCOMPLETE
    return 1
