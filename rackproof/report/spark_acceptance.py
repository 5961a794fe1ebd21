"""The Spark guide's minimal acceptance ("Prueba mínima de aceptación"): the five things a Spark
cluster must show before agents are pointed at a multi-node endpoint, each with its state from
the checks behind it. An item is passed only when every check it needs ran and passed (or, for
"the NCCL or link check", one of them did): a check that was skipped or left out of the run
leaves the item not checked, never passed."""

from __future__ import annotations

from dataclasses import dataclass

PASSED, WAIVED, NOT_CHECKED, UNCONFIRMED, FAILED = "passed", "waived", "not checked", "unconfirmed", "failed"
_GOOD = ("passed", "warned")


@dataclass(frozen=True)
class Item:
    text: str
    checks: tuple[str, ...]
    any_of: bool = False       # one green check proves it (the guide's "NCCL or link check")


ITEMS = (
    Item("Both nodes answer ping on the CX7 subnet", ("test_cx7_ping_on_its_subnet",)),
    Item("Passwordless SSH in both directions as the shared user",
         ("test_same_login_on_every_node", "test_passwordless_ssh", "test_passwordless_ssh_over_cx7")),
    Item("The NCCL or link check is green", ("test_nccl_across_the_nodes", "test_roce_bandwidth_over_the_port"),
         any_of=True),
    Item("The serving recipe's node list uses CX7 addresses, not Wi-Fi ones",
         ("test_the_multi_node_path_uses_cx7_addresses",)),
    Item("Backup and restore steps tested without losing the management path",
         ("test_cx7_netplan_files_are_backed_up", "test_management_path_does_not_ride_on_the_cx7_link",
          "test_nothing_changed_since_the_snapshot")),
)


def _state(item: Item, tests: list[dict], left_out: dict[str, list[str]]) -> tuple[str, str]:
    """(state, why) of one item from its checks' tests; `left_out`: check -> why the run did not
    make it (the report's scope)."""
    mine = [t for t in tests if t["check"] in item.checks]
    if any(t["outcome"] == "failed" for t in mine):
        return FAILED, ""
    if any(t["outcome"] == "error" for t in mine):
        return UNCONFIRMED, "a check could not reach its verdict"
    proven = [c for c in item.checks
              if (runs := [t for t in mine if t["check"] == c]) and all(t["outcome"] in (*_GOOD, "waived") for t in runs)]
    missing = [c for c in item.checks if c not in proven]
    if (item.any_of and not proven) or (not item.any_of and missing):
        return NOT_CHECKED, "; ".join(f"{c}: {', '.join(left_out.get(c, ['did not run or was skipped']))}"
                                      for c in missing)
    waived = any(t["outcome"] == "waived" for t in mine if t["check"] in proven)
    return (WAIVED, "a failure was waived") if waived else (PASSED, "")


def build(platform: str, tests: list[dict], scope: list[dict] = ()) -> list[dict] | None:
    """The five items on a Spark cluster; None on a Thor (the guide is about Sparks). `scope`
    is the report's list of checks not made, with their reasons."""
    if platform != "spark":
        return None
    left_out = {s["check"]: s["reasons"] for s in scope}
    out = []
    for item in ITEMS:
        state, why = _state(item, tests, left_out)
        out.append({"item": item.text, "state": state, "why": why,
                    "tests": [t["id"] for t in tests if t["check"] in item.checks]})
    return out
