"""`chronyc tracking` -> how far this node's clock is from NTP time, and whether chrony is
synchronised. Format of chrony's client.c ("System time     : %.9O of NTP time": an
absolute offset, then "slow" or "fast"); example in chronyc(1), selftests/samples/chrony.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from . import ParseError
from ._text import finite_float
from rackproof.probe import Probe

TOOL = "chronyc tracking"

_SYSTEM_TIME = re.compile(r"(?P<seconds>[0-9.]+) seconds (?P<side>slow|fast) of NTP time")


@dataclass(frozen=True)
class Tracking:
    offset_s: float          # the clock minus NTP time: > 0 the clock is ahead (fast)
    leap_status: str         # "Normal", "Insert second", "Delete second", "Not synchronised"
    reference: str

    @property
    def synchronised(self) -> bool:
        return self.leap_status != "Not synchronised"


def parse_tracking(text: str) -> Tracking:
    fields = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            fields.setdefault(key.strip(), value.strip())
    for key in ("System time", "Leap status"):
        if key not in fields:
            raise ParseError(TOOL, f"no {key!r} line", text)
    match = _SYSTEM_TIME.fullmatch(fields["System time"])
    if not match:
        raise ParseError(TOOL, f"System time is not 'N seconds slow|fast of NTP time': {fields['System time'][:80]!r}",
                         text)
    seconds = finite_float(TOOL, match["seconds"], "System time", text)
    return Tracking(seconds if match["side"] == "fast" else -seconds, fields["Leap status"],
                    fields.get("Reference ID", ""))


TRACKING = Probe("chronyc tracking", "how far the clock is from NTP time (chrony)", "chronyc tracking", parse_tracking)
