"""A lane's health under load: its error counters before the run's first throughput test over it,
and after the last. A marginal DAC links at full speed and passes a short iperf3 while its FEC
corrects thousands of blocks a second; the counters show it, the rate does not.

The counters are the node's, of what its end received: a lane that only sent under test (a pair
tested one way) is judged on what came back meanwhile; the switch's counters of the other
direction are not read.

The run's measurement plan (rackproof.measuring.plan) notes the counters of every loaded node's lanes
before its first throughput round and reads them again after its last (rackproof.measuring.linkhealth);
the checks only judge the change.
"""

from __future__ import annotations

from dataclasses import dataclass

from rackproof.judging.failure import Failure, NotVerified
from rackproof.inventory.model import Expect
from rackproof.probes.counters import DRIVERS
from rackproof.inventory.references import lane_gbps

WHAT = "error counters under load"
CAUSES = ("a damaged or over-bent DAC, a plug not fully seated, or a cable longer than the port's FEC mode allows: "
          "reseat the plug at both ends, then replace the cable")


@dataclass(frozen=True)
class Counters:
    received: int                 # bytes the lane received
    sent: int
    crc: int | None               # None: the driver keeps no such counter
    symbol: int | None
    dropped: int | None
    pause: int | None
    corrected: int | None         # FEC blocks (ethtool -I --show-fec)
    uncorrectable: int | None
    driver: str                   # which names the counters above (all None: a driver DRIVERS does not know)


@dataclass(frozen=True)
class Change:
    """What a lane's counters did under load (None: the driver keeps no such counter)."""
    received: int
    sent: int
    crc: int | None
    symbol: int | None
    dropped: int | None
    pause: int | None
    corrected: int | None
    uncorrectable: int | None
    driver: str = ""           # whose names were read (the one after load)

    @classmethod
    def between(cls, before: Counters, after: Counters) -> Change:
        counted = [f for f in cls.__dataclass_fields__ if f != "driver"]
        return cls(*(_grown(getattr(before, f), getattr(after, f)) for f in counted), driver=after.driver)

    @property
    def carried(self) -> int:
        return self.received + self.sent

    @property
    def corrected_per_gb(self) -> float | None:
        """Per GB carried: the PHY decodes codewords whichever way the frames go (idles too)."""
        return None if self.corrected is None else self.corrected / (self.carried / 1e9)

    def describe(self) -> str:
        parts = [f"{self.received / 1e6:.0f} MB received and {self.sent / 1e6:.0f} MB sent"]
        for name, value in (("uncorrectable FEC blocks", self.uncorrectable), ("corrected FEC blocks", self.corrected),
                            ("CRC/FCS errors", self.crc), ("symbol errors", self.symbol), ("drops", self.dropped),
                            ("pause frames received", self.pause)):
            parts.append(f"{name} +{value}" if value is not None else f"{name}: not counted by the driver")
        return ", ".join(parts)


def _grown(before: int | None, after: int | None) -> int | None:
    if before is None or after is None:
        return None
    return after - before if after >= before else after   # a counter reset (driver reload) starts again at 0


def change_under_load(before: Counters | str, after: Counters, where: str, expect: Expect) -> Change:
    """What the lane's counters did between `before` (noted before the run's first load on it, or
    why they could not be read) and `after` (read after its last); NotVerified when the driver's
    counters are not known, the ones before could not be read, or too little passed the lane
    (under a second at its rate) for counters to mean something."""
    if after.driver not in DRIVERS:
        raise NotVerified(where, WHAT, f"counters of driver {after.driver} are not known",
                          "add the names its `ethtool -S` gives CRC/FCS errors, symbol errors, discards and pause "
                          "frames to DRIVERS in rackproof/probes/counters.py, from a real sample of it")
    if isinstance(before, str):
        raise NotVerified(where, WHAT, f"its counters could not be read before load ({before})",
                          "see that message; the counters read now are in the evidence")
    change = Change.between(before, after)
    least = lane_gbps(expect) * 1e9 / 8
    if change.carried < least:
        raise NotVerified(where, WHAT, f"only {change.carried / 1e6:.1f} MB passed it under test (at least "
                          f"{least / 1e6:.0f} MB, a second at its rate, makes counters mean something)",
                          "run the throughput checks with it")
    return change


def fail_on_errors(change: Change, where: str) -> None:
    """No uncorrectable block and no CRC error under load (the corrected rate is a measurement
    with its reference, judged by the check). A counter it judges that the lane's output did not
    have is not verified, naming what was looked for: an error that was not counted is no pass."""
    bad = [f"{value} {name}" for name, value in (("uncorrectable FEC blocks", change.uncorrectable),
                                                 ("CRC/FCS errors", change.crc)) if value]
    if bad:
        raise Failure(where, WHAT, "no uncorrectable FEC block and no CRC/FCS error", f"{', '.join(bad)} ({change.describe()})",
                      CAUSES)
    missing, how = [], []
    if change.crc is None:
        names = DRIVERS[change.driver].crc if change.driver in DRIVERS else ()
        missing.append(f"no CRC/FCS counter in `ethtool -S` (driver {change.driver or 'unknown'}: "
                       f"{', '.join(names) or 'no name known'})")
        how.append("add the name this driver's `ethtool -S` gives CRC/FCS errors to DRIVERS in "
                   "rackproof/probes/counters.py, from a real sample of it")
    if change.uncorrectable is None or change.corrected is None:
        missing.append("no FEC block counters (corrected_blocks, uncorrectable_blocks) in `ethtool -I --show-fec`")
        how.append("a driver and ethtool (6.0 or later) that report FEC statistics")
    if missing:
        raise NotVerified(where, WHAT, "; ".join(missing) + f" ({change.describe()})", "; ".join(how))
