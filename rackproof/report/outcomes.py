"""A test's outcome in the report's words, from its pytest phases (setup, call, teardown).

    passed    the check reached its verdict and the cluster met it
    warned    passed, but a figure is under its target (still over its hard floor), or the
              tool the check reads calls something a warning (its messages are the text)
    failed    the cluster does not meet the check
    error     the check could not reach a verdict (a timeout, no recorded answer, a broken
              fixture): unconfirmed, never passed
    skipped   not judged, with the reason
    not verified  the check could not be made for a reason that is no fault of the cluster (no
              lldpd on the node): neither passed nor failed; the text says how to make it
    waived    failed, and a valid waiver accepts that failure
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rackproof.judging.failure import Failure, NotVerified
from rackproof.probes.safetext import shown

OUTCOMES = ("passed", "warned", "failed", "error", "skipped", "waived", "not verified")
PROBLEMS = ("failed", "error")


@dataclass(frozen=True)
class PytestReport:
    """One pytest phase report, as plain data that crosses from xdist workers."""

    when: str                     # setup / call / teardown
    outcome: str                  # pytest's: passed / failed / skipped
    text: str = ""                # the failure's text or the skip's reason
    duration: float = 0.0
    properties: dict = field(default_factory=dict)   # the rackproof_* user properties


def merged_properties(phases: list[PytestReport]) -> dict:
    merged: dict = {}
    for phase in phases:
        merged.update(phase.properties)
    return merged


def outcome_of(phases: list[PytestReport]) -> tuple[str, str]:
    """(outcome, text): the failure's or skip's text that goes with the outcome, else ""."""
    by_when = {p.when: p for p in phases}
    setup, call, teardown = (by_when.get(w) for w in ("setup", "call", "teardown"))
    props = merged_properties(phases)
    if setup and setup.outcome == "failed":
        return "error", setup.text
    if call and props.get("rackproof_outcome") == "error":
        return "error", call.text
    if call and call.outcome == "failed":
        return "failed", call.text
    if teardown and teardown.outcome == "failed":
        return "error", teardown.text
    if "rackproof_waiver" in props:
        return "waived", call.text if call else ""
    if "rackproof_not_verified" in props:
        return "not verified", shown(str(NotVerified(**props["rackproof_not_verified"])))
    skipped = next((p for p in phases if p.outcome == "skipped"), None)
    if skipped:
        return "skipped", skipped.text
    if props.get("rackproof_warnings"):
        return "warned", "\n".join(shown(str(Failure(**w))) for w in props["rackproof_warnings"])
    if any(m.get("verdict") == "warned" for m in props.get("rackproof_measurements", [])):
        return "warned", ""
    return "passed", ""

