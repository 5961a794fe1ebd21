"""`chronyc tracking` -> how far this node's clock is from NTP time, and whether chrony is
synchronised to a time server. Format of chrony's client.c ("System time     : %.9O of NTP time": an
absolute offset, then "slow" or "fast"); example in chronyc(1), real ones in selftests/samples/chronyc_*.

A node whose sources are all unreachable and whose chrony.conf has `local` follows its own clock:
Reference ID 7F7F0101 (127.127.1.1, chrony's local reference), stratum 10 by default, offset
0.000000000 and Leap status Normal. Its offset is against itself, so it says nothing of NTP time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from . import ParseError
from ._text import finite_float
from rackproof.probes.probe import Probe

TOOL = "chronyc tracking"

LOCAL_REFERENCE_ID = "7F7F0101"
_SYSTEM_TIME = re.compile(r"(?P<seconds>[0-9.]+) seconds (?P<side>slow|fast) of NTP time")


@dataclass(frozen=True)
class Tracking:
    offset_s: float          # the clock minus NTP time: > 0 the clock is ahead (fast)
    leap_status: str         # "Normal", "Insert second", "Delete second", "Not synchronised"
    reference: str           # "C39AAED1 (leeto.nicolbolas.org)", "7F7F0101 ()"
    stratum: int | None = None

    @property
    def synchronised(self) -> bool:
        return self.leap_status != "Not synchronised"

    @property
    def local_reference(self) -> bool:
        """chrony follows the node's own clock (its `local` directive), not a time server."""
        return self.reference.split(" ", 1)[0] == LOCAL_REFERENCE_ID


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
    stratum = fields.get("Stratum")
    if stratum is not None and not re.fullmatch(r"[0-9]{1,2}", stratum):
        raise ParseError(TOOL, f"Stratum is not a number: {stratum[:80]!r}", text)
    return Tracking(seconds if match["side"] == "fast" else -seconds, fields["Leap status"],
                    fields.get("Reference ID", ""), int(stratum) if stratum is not None else None)


TRACKING = Probe("chronyc tracking", "how far the clock is from NTP time (chrony)", "chronyc tracking", parse_tracking,
                 seen_on=("CentOS 7", "a Linux container"),
                 unseen="no chronyc tracking of a Jetson AGX Thor, a DGX Spark or Ubuntu/Debian was found; the layout "
                        "is chrony's own (client.c), and its manual's example reads alike")
