"""The decision, by capability (as in the Cordatus preflight): each check guards a capability,
and its failure either blocks the cluster or only takes that capability away.

    REJECTED              a blocking capability failed, or could not be confirmed (an error),
                          or no check reached a verdict at all
    ACCEPTED WITH LIMITS  only non-blocking capabilities failed or are unconfirmed; each is
                          listed with the messages of the checks that took it away
    ACCEPTED              every check passed (warned and waived ones included)

A check that declares no capability counts as blocking: nothing is waved through unclassified.
"""

from __future__ import annotations

ACCEPTED, LIMITED, REJECTED = "ACCEPTED", "ACCEPTED WITH LIMITS", "REJECTED"
UNDECLARED = {"name": "the cluster as a whole (checks that declare no capability)", "blocks": True}

# status of a capability, worst first
BLOCKED, LIMITED_CAP, UNCONFIRMED, AVAILABLE, NOT_CHECKED = (
    "blocked", "limited", "unconfirmed", "available", "not checked")


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


def capabilities(tests: list[dict]) -> list[dict]:
    """Every capability the run's checks guard, in order of first appearance."""
    caps: dict[str, dict] = {}
    for test in tests:
        declared = test["capability"] or UNDECLARED
        cap = caps.setdefault(declared["name"], {"name": declared["name"], "blocks": False, "counts": {}, "why": []})
        cap["blocks"] = cap["blocks"] or declared["blocks"]
        cap["counts"][test["outcome"]] = cap["counts"].get(test["outcome"], 0) + 1
        if test["outcome"] in ("failed", "error"):
            cap["why"].append({"test": test["id"], "outcome": test["outcome"], "message": _first_line(test["message"])})
    for cap in caps.values():
        counts = cap["counts"]
        if counts.get("failed"):
            cap["status"] = BLOCKED if cap["blocks"] else LIMITED_CAP
        elif counts.get("error"):
            cap["status"] = UNCONFIRMED
        elif any(counts.get(o) for o in ("passed", "warned", "waived")):
            cap["status"] = AVAILABLE
        else:
            cap["status"] = NOT_CHECKED
    return list(caps.values())


def decide(tests: list[dict]) -> dict:
    """{"decision", "summary", "capabilities"}: the verdict and the one sentence that explains it."""
    caps = capabilities(tests)
    blocking = [c for c in caps if c["blocks"] and c["status"] in (BLOCKED, UNCONFIRMED)]
    limited = [c for c in caps if not c["blocks"] and c["status"] in (LIMITED_CAP, UNCONFIRMED)]
    judged = [t for t in tests if t["outcome"] != "skipped"]
    if blocking:
        decision = REJECTED
        summary = "; ".join(
            f"{c['name']}: {'failed' if c['status'] == BLOCKED else 'could not be confirmed'} "
            f"({len(c['why'])} check{'s' * (len(c['why']) != 1)})" for c in blocking) + " — this blocks the cluster"
    elif not judged:
        decision, summary = REJECTED, "no check reached a verdict, so nothing can be accepted"
    elif limited:
        decision = LIMITED
        summary = "not available: " + "; ".join(
            c["name"] + (" (unconfirmed)" if c["status"] == UNCONFIRMED else "") for c in limited)
    else:
        decision = ACCEPTED
        counts = {o: sum(t["outcome"] == o for t in judged) for o in ("passed", "warned", "waived")}
        summary = (f"{counts['passed'] + counts['warned']} checks passed"
                   + (f" ({counts['warned']} with a figure under its target)" if counts["warned"] else "")
                   + (f"; {counts['waived']} failed under a valid waiver" if counts["waived"] else ""))
    return {"decision": decision, "summary": summary, "capabilities": caps}
