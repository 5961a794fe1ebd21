"""Measurements grouped for the report's tables and charts: one group per kind and unit (lane
rates, bonded rates, RoCE, tokens/s), in the order the checks ran.

A check that measures a kind for some subjects owes that figure for all of them: each of its
tests that recorded none (a node that could not be reached, a run that failed before it
measured) still gets its row, with the test's outcome instead of a value.
"""

from __future__ import annotations


def _param_id(test_id: str) -> str:
    """thor-1->thor-5 of test_iperf[thor-1->thor-5]: what the test was about."""
    name = test_id.rpartition("::")[2]
    return name.partition("[")[2].removesuffix("]") or name


def rows(tests: list[dict]) -> list[dict]:
    """Every measurement of the run, with the test that took it."""
    return [{"test": t["id"], **m} for t in tests for m in t["measurements"]]


def groups(tests: list[dict]) -> list[dict]:
    """[{"kind", "unit", "rows": [...]}]; a missing figure's row has value None and the
    outcome and message of its test."""
    found: dict[tuple[str, str], dict] = {}
    for row in rows(tests):
        group = found.setdefault((row["kind"], row["unit"]), {"kind": row["kind"], "unit": row["unit"], "checks": set()})
        group["checks"].add(row["test"].partition("[")[0])
    out = []
    for (kind, unit), group in found.items():
        group_rows = []
        for test in tests:
            mine = [m for m in test["measurements"] if (m["kind"], m["unit"]) == (kind, unit)]
            group_rows += [{"test": test["id"], "outcome": test["outcome"], **m} for m in mine]
            if not mine and test["id"].partition("[")[0] in group["checks"]:
                group_rows.append({"test": test["id"], "outcome": test["outcome"], "kind": kind,
                                   "subject": _param_id(test["id"]), "value": None, "unit": unit,
                                   "expectation": None, "verdict": None, "message": test["message"]})
        out.append({"kind": kind, "unit": unit, "rows": group_rows})
    return out


# figures measured over each link in each direction ("A dev -> B dev"), shown side by side per link
PER_LINK = ("roce.link", "roce.latency")


def per_link(tests: list[dict]) -> list[dict]:
    """Each link's figures both ways, for the references of PER_LINK: [{"ends": (first, second),
    "figures": {(reference, "forward" | "back"): measurement row}}], each link once, in the order
    it was first measured (forward: from its first end to its second)."""
    links: dict[frozenset, dict] = {}
    for row in rows(tests):
        if row.get("reference") not in PER_LINK or " -> " not in row["subject"]:
            continue
        src, _, dst = row["subject"].partition(" -> ")
        link = links.setdefault(frozenset((src, dst)), {"ends": (src, dst), "figures": {}})
        link["figures"][(row["reference"], "forward" if link["ends"] == (src, dst) else "back")] = row
    return list(links.values())
