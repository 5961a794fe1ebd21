"""The decision, by capability (as in the Cordatus preflight): each check guards a capability,
and its failure either blocks the cluster or only takes that capability away.

    REJECTED              a blocking capability failed, or could not be confirmed (an error),
                          or no check reached a verdict at all
    ACCEPTED WITH LIMITS  only non-blocking capabilities failed or are unconfirmed; each is
                          listed with the messages of the checks that took it away. Also when
                          nothing failed but a check could not be made (not verified: no lldpd
                          on a node): the verdict names what was not proven
    INCOMPLETE            nothing blocks the cluster so far, but the run did not cover its scope:
                          interrupted (Ctrl-C, SIGTERM, a crashed worker, -x, --maxfail) or
                          narrowed (-k, -m, --deselect, --ignore, test paths); what did not run
                          is listed. A check that failed is still reported: REJECTED stays REJECTED.
    ACCEPTED              every check of the run's scope passed (warned and waived ones included)

Whatever the decision, a figure that drifted below its recent median (rackproof.ticket.history) is
listed in the summary with both numbers: an ACCEPTED run with warnings still says what warned.

The scope is the build step and, when given, the nodes of `--node`: a declared scope, which the
verdict line always names ("ACCEPTED for thor-3 only (--node)"), never a plain ACCEPTED.

A check that declares no capability counts as blocking: nothing is waved through unclassified.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

ACCEPTED, LIMITED, REJECTED, INCOMPLETE = "ACCEPTED", "ACCEPTED WITH LIMITS", "REJECTED", "INCOMPLETE"
UNDECLARED = {"name": "the cluster as a whole (checks that declare no capability)", "blocks": True}

# status of a capability, worst first
BLOCKED, LIMITED_CAP, UNCONFIRMED, NOT_VERIFIED, AVAILABLE, NOT_CHECKED = (
    "blocked", "limited", "unconfirmed", "not verified", "available", "not checked")


# the words rackproof.nodes.remote.Rebooted cuts a check short with: the node and when it rebooted
_REBOOTED = re.compile(r"measured before (\S+) rebooted at (\S+)")


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


def capabilities(tests: list[dict], cut_short: tuple[str, ...] = ()) -> list[dict]:
    """Every capability the run's checks guard, in order of first appearance. A check cut short
    by a transient fault judged nothing: it makes the run incomplete, not a capability unconfirmed."""
    caps: dict[str, dict] = {}
    for test in tests:
        if test["id"] in cut_short:
            continue
        declared = test["capability"] or UNDECLARED
        cap = caps.setdefault(declared["name"], {"name": declared["name"], "blocks": False, "counts": {}, "why": []})
        cap["blocks"] = cap["blocks"] or declared["blocks"]
        cap["counts"][test["outcome"]] = cap["counts"].get(test["outcome"], 0) + 1
        if test["outcome"] in ("failed", "error", "not verified"):
            cap["why"].append({"test": test["id"], "outcome": test["outcome"], "message": _first_line(test["message"])})
    for cap in caps.values():
        counts = cap["counts"]
        if counts.get("failed"):
            cap["status"] = BLOCKED if cap["blocks"] else LIMITED_CAP
        elif counts.get("error"):
            cap["status"] = UNCONFIRMED
        elif counts.get("not verified"):
            cap["status"] = NOT_VERIFIED
        elif any(counts.get(o) for o in ("passed", "warned", "waived")):
            cap["status"] = AVAILABLE
        else:
            cap["status"] = NOT_CHECKED
    return list(caps.values())


@dataclass(frozen=True)
class Coverage:
    """How much of its scope a run covered, as the plugin saw it."""

    nodes: tuple[str, ...] = ()          # --node: a declared scope
    narrowed_by: tuple[str, ...] = ()    # "-k lane", "test paths tests_physical": checks left out by choice
    interrupted: str = ""                # why the run stopped early, "" if it did not
    not_run: tuple[str, ...] = field(default=())   # test ids in scope that reached no outcome
    cut_short: tuple[str, ...] = field(default=())  # test ids a transient fault stopped (no verdict)

    @property
    def complete(self) -> bool:
        return not (self.narrowed_by or self.interrupted or self.not_run or self.cut_short)

    def as_dict(self, rebooted: dict[str, tuple[str, str]] | None = None) -> dict:
        return {"complete": self.complete, "reason": self.describe(rebooted), "nodes": list(self.nodes),
                "narrowed_by": list(self.narrowed_by), "interrupted": self.interrupted, "not_run": list(self.not_run),
                "cut_short": list(self.cut_short)}

    def describe(self, rebooted: dict[str, tuple[str, str]] | None = None) -> str:
        """Why the run is incomplete, in one sentence ("" when it is complete). `rebooted`: the
        cut-short checks a node's reboot cut short ({test id: (node, when)}, `rebooted_under`),
        named as that reboot rather than as a transient fault."""
        rebooted = rebooted or {}
        parts = []
        if self.interrupted:
            parts.append(self.interrupted)
        if self.narrowed_by:
            parts.append("narrowed by " + ", ".join(self.narrowed_by))
        if self.not_run:
            parts.append(f"{len(self.not_run)} check{'s' * (len(self.not_run) != 1)} of its scope did not run")
        by_reboot: dict[tuple[str, str], int] = {}
        for test in self.cut_short:
            if test in rebooted:
                by_reboot[rebooted[test]] = by_reboot.get(rebooted[test], 0) + 1
        for (node, when), n in by_reboot.items():
            parts.append(f"{n} check{'s' * (n != 1)} cut short as {node} rebooted at {when} (measured before it, "
                         "never judged on facts from before a reboot): run again")
        if transient := sum(test not in rebooted for test in self.cut_short):
            parts.append(f"{transient} check{'s' * (transient != 1)} cut short by a transient "
                         "fault (a dropped SSH connection, a refused channel, a busy lock): run again")
        return "; ".join(parts)


def rebooted_under(tests: list[dict], cut_short: tuple[str, ...]) -> dict[str, tuple[str, str]]:
    """{test id: (node, when)} of the checks cut short because their node rebooted, read from
    their messages (rackproof.nodes.remote.Rebooted's words)."""
    found = {}
    for test in tests:
        if test["id"] in cut_short and (m := _REBOOTED.search(test["message"])):
            found[test["id"]] = (m[1], m[2])
    return found


def line(result: dict) -> str:
    """The verdict as one line for the terminal, the page's banner and its title."""
    scope = result["coverage"]["nodes"]
    if scope and result["decision"] in (ACCEPTED, LIMITED):
        return f"{result['decision']} for {', '.join(scope)} only (--node)"
    return result["decision"]


def decide(tests: list[dict], coverage: Coverage = Coverage(), unreachable: dict[str, dict] | None = None) -> dict:
    """{"decision", "summary", "capabilities", "coverage"}: the verdict and the one sentence that
    explains it; a node declared unreachable ({node: {reason, since}}) is named in it once."""
    caps = capabilities(tests, coverage.cut_short)
    rebooted = rebooted_under(tests, coverage.cut_short)
    blocking = [c for c in caps if c["blocks"] and c["status"] in (BLOCKED, UNCONFIRMED)]
    limited = [c for c in caps if not c["blocks"] and c["status"] in (LIMITED_CAP, UNCONFIRMED)]
    judged = [t for t in tests if t["outcome"] not in ("skipped", "not verified")]
    unverified = [c for c in caps if c["status"] == NOT_VERIFIED]
    if blocking:
        decision = REJECTED
        summary = "; ".join(
            f"{c['name']}: {'failed' if c['status'] == BLOCKED else 'could not be confirmed'} "
            f"({len(c['why'])} check{'s' * (len(c['why']) != 1)})" for c in blocking) + " — this blocks the cluster"
        if not coverage.complete:
            summary += f" (and the run is incomplete: {coverage.describe(rebooted)})"
    elif not coverage.complete:
        decision = INCOMPLETE
        summary = f"the run did not cover its scope: {coverage.describe(rebooted)}; nothing can be accepted from it"
    elif not judged:
        decision, summary = REJECTED, "no check reached a verdict, so nothing can be accepted"
    elif limited or unverified:
        decision = LIMITED
        summary = "; ".join(filter(None, (
            limited and "not available: " + "; ".join(
                c["name"] + (" (unconfirmed)" if c["status"] == UNCONFIRMED else "") for c in limited),
            unverified and "not verified: " + "; ".join(
                f"{c['name']} for {', '.join(w['message'].partition(':')[0] for w in c['why'])}" for c in unverified))))
    else:
        decision = ACCEPTED
        counts = {o: sum(t["outcome"] == o for t in judged) for o in ("passed", "warned", "waived")}
        summary = (f"{counts['passed'] + counts['warned']} checks passed"
                   + (f" ({counts['warned']} warned)" if counts["warned"] else "")
                   + (f"; {counts['waived']} failed under a valid waiver" if counts["waived"] else ""))
    if coverage.nodes and decision in (ACCEPTED, LIMITED):
        summary = f"only checks involving {', '.join(coverage.nodes)} (--node): " + summary
    if unreachable:
        summary += "; " + "; ".join(f"{node} unreachable since {reach['since']}: {reach['reason']}"
                                    for node, reach in unreachable.items())
    drifted = [{**d, "test": t["id"]} for t in tests for d in t.get("drift", [])]
    if drifted:
        summary += "; drifted from the run history: " + "; ".join(map(drift_line, drifted))
    return {"decision": decision, "summary": summary, "capabilities": caps, "coverage": coverage.as_dict(rebooted),
            "drift": drifted}


def drift_line(d: dict) -> str:
    """A drifted figure with both numbers, as the verdict and the terminal say it."""
    return (f"{d['reference']} {d['subject']} {d['value']:g} {d['unit']}, {-d['change']:.1%} below its median "
            f"{d['median']:g} {d['unit']} of the last {d['runs']} runs")
