"""Comparing one version across nodes: the table every node's value, and the odd one out."""

from __future__ import annotations

from collections import Counter

from .failure import Failure

# the packages a Thor's engines are built against (dpkg), each with its pin in [expect]
JETPACK_PACKAGES = {"nvidia-jetpack": "jetpack_version", "tensorrt": "tensorrt_version"}


def matches(value: str, expected: str) -> bool:
    """A pin "7.0" is met by "7.0" and by its builds "7.0-b128", "7.0+b38", not by "7.0.1"."""
    return value == expected or value.startswith((expected + "-", expected + "+"))


def odd_ones(found: dict[str, str], pinned: str | None) -> tuple[str, list[str]]:
    """(the expected value, nodes that differ): the pin if given, else the majority's value."""
    expected = pinned or Counter(found.values()).most_common(1)[0][0]
    return expected, [node for node, value in found.items() if not matches(value, expected)]


def table(found: dict[str, str]) -> str:
    width = max(len(n) for n in found)
    return "\n".join(f"  {node:<{width}}  {value}" for node, value in found.items())


def version_mismatch(what: str, found: dict[str, str], pinned: str | None, cause: str) -> Failure | None:
    """None when every node has the same value (the pinned one where pinned); else the failure
    naming the odd nodes, with every node's value in a table."""
    expected, odd = odd_ones(found, pinned)
    if not odd:
        return None
    basis = "pinned in the inventory" if pinned else "on most nodes"
    return Failure("", f"{what} differs on {', '.join(odd)}", f"{expected} ({basis})",
                   ", ".join(f"{found[n]} on {n}" for n in odd), cause, details=table(found))
