"""A lane's health under load: its error counters before the run's first throughput test over it,
and after the last. A marginal DAC links at full speed and passes a short iperf3 while its FEC
corrects thousands of blocks a second; the counters show it, the rate does not.

The counters are the node's, of what its end received: a lane that only sent under test (a pair
tested one way) is judged on what came back meanwhile; the switch's counters of the other
direction are not read.

The run's measurement plan (rackproof.measuring.plan) notes the counters of every loaded node's lanes
before its first throughput round and reads them again after its last; the checks only judge
the change.
"""

from __future__ import annotations

from dataclasses import dataclass

from rackproof.judging.failure import Failure, NotVerified
from rackproof.nodes.host import Host, ProbeFailed
from rackproof.inventory.model import Expect
from rackproof.probes.counters import BYTES, DRIVER, DRIVERS, STATS, lane_errors
from rackproof.probes.fec import FEC_STATS
from rackproof.inventory.references import lane_gbps
from rackproof.nodes.remote import NoAnswer, NodeUnreachable

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


def read(host: Host, lanes: list[str]) -> dict[str, Counters]:
    """Each lane's counters: four round trips for all of them (three once the drivers are known)."""
    drivers = host.read_each(DRIVER, lanes)
    stats = host.read_each(STATS, lanes)
    fec = host.read_each(FEC_STATS, lanes)
    traffic = host.read_each(BYTES, lanes)
    out = {}
    for lane in lanes:
        errors = lane_errors(drivers[lane], stats[lane])
        kinds = (errors.crc, errors.symbol, errors.dropped, errors.pause) if errors else (None,) * 4
        out[lane] = Counters(*traffic[lane], *kinds, fec[lane].corrected_blocks, fec[lane].uncorrectable_blocks,
                             drivers[lane])
    return out


class LoadLedger:
    """The counters of each lane before the run's first load on it, kept by the controller that
    measures the plan (the checks only judge what it measured after the load)."""

    def __init__(self):
        self._noted: dict[tuple[str, str], Counters | str] = {}

    def note(self, host: Host, lanes: list[str]) -> None:
        """Before the first load: the counters of those of `lanes` not noted yet in this run, or
        noted unreadable (a late node, away at the run's first load, is noted before its own)."""
        new = [lane for lane in lanes if not isinstance(self.before(host.name, lane), Counters)]
        if not new:
            return
        try:
            noted: dict[str, Counters | str] = dict(read(host, new))
        except (ProbeFailed, NodeUnreachable, NoAnswer) as e:
            # the load goes on; the check of these lanes says why it cannot judge them
            noted = {lane: str(e).splitlines()[0] for lane in new}
        self._noted.update({(host.name, lane): counters for lane, counters in noted.items()})

    def before(self, node: str, lane: str) -> Counters | str | None:
        """The counters noted before load, why they could not be read, or None (no load)."""
        return self._noted.get((node, lane))


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


def since_load(ledger: LoadLedger, host: Host, lane: str, where: str, expect: Expect) -> Change:
    """The lane's counters now against the ones before the run's first load on it; NotVerified
    when no throughput measurement carried load over it (or too little: under a second at its rate)."""
    before = ledger.before(host.name, lane)
    if before is None:
        raise NotVerified(where, WHAT, "no throughput test carried load over it in this run",
                          "run the throughput checks with it (step 3 or later, without -k or paths that leave them out)")
    after = read(host, [lane])[lane]
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
