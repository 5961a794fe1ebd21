"""A test's parameters as JSON, for results.json (what they touched: rackproof.inventory.kinds)."""

from __future__ import annotations


def plain(value):
    """A parameter value as JSON: tuples become lists, anything else unknown its text."""
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if value is None or type(value) in (str, int, float, bool):
        return value
    return str(value)   # an enum (IntEnum too), a path, an object: its text
