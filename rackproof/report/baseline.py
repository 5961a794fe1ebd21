"""What changed since an earlier run (`--baseline results.json`): checks that fail now and did
not then, checks that failed then and pass now, and figures that moved by more than a
tolerance (a fraction of the earlier value), each marked better or worse by its expectation.
"""

from __future__ import annotations

from .measurements import rows
from .outcomes import PROBLEMS

GOOD = ("passed", "warned")


def _figures(doc: dict, by_reference: bool) -> dict[tuple, dict]:
    """Measurements by what they measured: their reference key ("lane.rate", which a new label
    for the figure leaves alone) when `by_reference`, else their label (results.json before 2.7
    has no key); a figure measured twice keeps its first value."""
    figures: dict[tuple, dict] = {}
    for row in rows(doc["tests"]):
        name = (row.get("reference") or row["kind"]) if by_reference else row["kind"]
        figures.setdefault((name, row["subject"], row["unit"]), row)
    return figures


def _direction(row: dict, change: float) -> str:
    better = (row.get("expectation") or {}).get("better", "higher")
    return "better" if (change > 0) == (better == "higher") else "worse"


def compare(current: dict, baseline: dict, tolerance: float, path: str) -> dict:
    before = {t["id"]: t for t in baseline["tests"]}
    new_failures, fixed = [], []
    for test in current["tests"]:
        was = before.get(test["id"], {}).get("outcome")
        if test["outcome"] in PROBLEMS and was not in PROBLEMS:
            new_failures.append({"test": test["id"], "outcome": test["outcome"], "was": was,
                                 "message": test["message"]})
        elif test["outcome"] in GOOD and was in PROBLEMS:
            fixed.append({"test": test["id"], "outcome": test["outcome"], "was": was})
    by_reference = any(row.get("reference") for row in rows(baseline["tests"]))
    old = _figures(baseline, by_reference)
    moved = []
    for key, row in _figures(current, by_reference).items():
        earlier = old.get(key)
        if earlier is None or not earlier["value"]:
            continue
        change = (row["value"] - earlier["value"]) / abs(earlier["value"])
        if abs(change) > tolerance:
            moved.append({"kind": row["kind"], "subject": row["subject"], "unit": row["unit"],
                          "before": earlier["value"], "after": row["value"], "change": round(change, 4),
                          "direction": _direction(row, change), "test": row["test"]})
    return {
        "path": path, "cluster": baseline["run"]["cluster"], "started": baseline["run"]["started"],
        "verdict": baseline["verdict"]["decision"], "tolerance": tolerance,
        "new_failures": new_failures, "fixed": fixed, "moved": moved,
    }
