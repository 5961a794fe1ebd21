"""Comparing one version across nodes: the table every node's value, and the odd one out."""

from __future__ import annotations

from collections import Counter

from rackproof.judging.failure import Failure, NotVerified, together

# the packages a Thor's engines are built against (dpkg), each with its pin in [expect]
JETPACK_PACKAGES = {"nvidia-jetpack": "jetpack_version", "tensorrt": "tensorrt_version"}


def matches(value: str, expected: str) -> bool:
    """A pin "7.0" is met by "7.0" and by its builds "7.0-b128", "7.0+b38", not by "7.0.1"."""
    return value == expected or value.startswith((expected + "-", expected + "+"))


def table(found: dict[str, str]) -> str:
    width = max(len(n) for n in found)
    return "\n".join(f"  {node:<{width}}  {value}" for node, value in found.items())


def version_mismatch(what: str, found: dict[str, str | None], pinned: str | None, cause: str, *,
                     missing: str = "not reported", how: str = "") -> Failure | NotVerified | None:
    """None when every node has the same value (the pinned one where pinned); else the failure
    naming the odd nodes, with every node's value in a table. A node without a value (None,
    shown as `missing`) is odd; with no value on any node and no pin there is nothing to compare:
    not verified (`how`: what gives the nodes a value), never a pass."""
    values = [value for value in found.values() if value is not None]
    shown = {node: missing if value is None else value for node, value in found.items()}
    if not values and not pinned:
        return NotVerified("every node", what, f"{missing} on any of {', '.join(found) or 'them'}: no value to compare",
                           how or "make the nodes report it")
    expected = pinned or Counter(values).most_common(1)[0][0]
    odd = [node for node, value in found.items() if value is None or not matches(value, expected)]
    if not odd:
        return None
    basis = "pinned in the inventory" if pinned else "on most nodes"
    return Failure("", f"{what} differs on {', '.join(odd)}", f"{expected} ({basis})",
                   ", ".join(f"{shown[n]} on {n}" for n in odd), cause, details=table(shown))


def first_problem(problems: list[Failure | NotVerified | None]) -> Failure | NotVerified | None:
    """Several comparisons of one check: their failures as one, else the first not verified."""
    return together([p for p in problems if isinstance(p, Failure)]) or next((p for p in problems if p), None)
