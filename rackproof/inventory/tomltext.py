"""TOML text for the cluster.toml files rackproof writes (the simulated rack's, `discover`'s):
values written so that tomllib reads back exactly the value given, whatever a node put in it
(a quote, a backslash, a control character)."""

from __future__ import annotations

import datetime
import math
import re

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if not math.isfinite(v):
            raise ValueError(f"{v!r} is not a finite number")
        return repr(v)
    if isinstance(v, datetime.datetime):
        if v.tzinfo is None:
            raise ValueError(f"{v!r} has no time zone: a cluster.toml time carries its offset")
        return v.isoformat()
    if isinstance(v, str):
        return '"' + "".join(c if " " <= c and c not in '"\\\x7f' else f"\\u{ord(c):04x}" for c in v) + '"'
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{key(k)} = {value(x)}" for k, x in v.items()) + " }"
    raise TypeError(f"no TOML form for {type(v).__name__}")


def key(k: str) -> str:
    return k if _BARE_KEY.fullmatch(k) else value(k)
