"""Small helpers shared by the parsers (private)."""

import json
import math
import re

from . import ParseError

# A 64-bit counter has at most 20 digits; the bound also keeps int() clear of Python's
# 4300-digit limit on arbitrary text.
_UNSIGNED = re.compile(r"[0-9]{1,20}")


def int_value(tool: str, value: str, what: str, text: str) -> int:
    """A non-negative decimal the tool printed, or the tool's ParseError naming the field."""
    if not _UNSIGNED.fullmatch(value):
        raise ParseError(tool, f"{what} is not a number: {value!r}", text)
    return int(value)


def finite_float(tool: str, value: str, what: str, text: str) -> float:
    """A figure the tool printed, or the tool's ParseError naming the field. float() reads
    "inf", "nan" and "1e999" (as inf): none of them is a measurement a check can judge."""
    try:
        number = float(value)
    except ValueError:
        raise ParseError(tool, f"{what} is not a number: {value!r}", text) from None
    if not math.isfinite(number):
        raise ParseError(tool, f"{what} is not a finite number: {value!r}", text)
    return number


def load_json(tool: str, text: str):
    """json.loads that fails with the tool's ParseError instead of a JSON error."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as error:  # JSONDecodeError is a ValueError
        raise ParseError(tool, f"not JSON: {error}", text) from error


def json_field(tool: str, obj, key: str, kind, text: str, *, optional: bool = False):
    """obj[key], checked to be an instance of `kind` (a type or a tuple of types).

    JSON true/false never pass as numbers: bool is an int subclass in Python.
    """
    if not isinstance(obj, dict):
        raise ParseError(tool, f"expected a JSON object holding {key!r}, got {type(obj).__name__}", text)
    value = obj.get(key)
    if value is None and optional:
        return None
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        wanted = " or ".join(k.__name__ for k in kinds)
        raise ParseError(tool, f"field {key!r} missing or not {wanted}: {value!r}", text)
    return value


def matched_lines(tool: str, pattern: re.Pattern, text: str, expected: str):
    """The match of `pattern` for each non-blank line of `text`, or the tool's ParseError
    naming the first line that is not `expected`."""
    for line in text.splitlines():
        if not line.strip():
            continue
        match = pattern.fullmatch(line)
        if match is None:
            raise ParseError(tool, f"expected {expected}, got {line[:200]!r}", text)
        yield match
