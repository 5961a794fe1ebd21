"""What a run's exit status means: one table, shown by `rackproof --help` and docs/report.md
(selftests/test_ci.py checks both against it and against what runs really exit with).

pytest's own statuses end at 5; rackproof adds 6 for a run that did not cover its scope.
"""

INCOMPLETE = 6   # a run that did not cover its scope and failed nothing

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
)


def text() -> str:
    """The table as `rackproof --help` prints it."""
    return "exit statuses:\n" + "\n".join(f"  {status}  {meaning}" for status, meaning in TABLE)
