"""A lane's error counters read: before the run's first throughput test over it (LoadLedger, in the
memory of the controller that measures the plan) and after the last; rackproof.judging.linkhealth
judges what they did under load."""

from __future__ import annotations

from rackproof.judging.failure import NotVerified
from rackproof.judging.linkhealth import WHAT, Change, Counters, change_under_load
from rackproof.nodes.host import Host, ProbeFailed
from rackproof.inventory.model import Expect
from rackproof.probes.counters import BYTES, DRIVER, STATS, lane_errors
from rackproof.probes.fec import FEC_STATS
from rackproof.nodes.remote import NoAnswer, NodeUnreachable


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


def since_load(ledger: LoadLedger, host: Host, lane: str, where: str, expect: Expect) -> Change:
    """The lane's counters now against the ones before the run's first load on it; NotVerified
    when no throughput measurement carried load over it (or too little: under a second at its rate)."""
    before = ledger.before(host.name, lane)
    if before is None:
        raise NotVerified(where, WHAT, "no throughput test carried load over it in this run",
                          "run the throughput checks with it (step 3 or later, without -k or paths that leave them out)")
    return change_under_load(before, read(host, [lane])[lane], where, expect)
