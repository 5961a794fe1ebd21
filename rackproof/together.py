"""Measure a group at once, judge each part in its own test.

Some checks cost little per part once the group is measured together: every node's SSH attempts
to all its peers (one command per node, all nodes at once), or a round of throughput pairs in
which every node sends once and receives once. The first test of a group measures the whole
group, every part in its own thread with its own evidence; each test of the group then judges
its part from what was kept, with that part's evidence. Under pytest-xdist the workers share
the kept results as JSON in the run's private folder, under a lock per group: one worker
measures, the others read.
"""

from __future__ import annotations

import hashlib
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Generic, Hashable, Sequence, TypeVar

from . import portable, schedule
from .remote import Evidence, EvidenceLog

K = TypeVar("K", bound=Hashable)
T = TypeVar("T")


@dataclass
class Part(Generic[T]):
    """What one part of a group gave: its value or the exception it raised, and its evidence."""
    value: T | None
    error: BaseException | None
    evidence: list[Evidence]

    def get(self, log: EvidenceLog) -> T:
        """The part's value (or its exception, raised), its evidence added to the current test's."""
        for ev in self.evidence:
            log.add(ev)
        if self.error is not None:
            raise self.error
        return self.value


def at_once(keys: Sequence[K], measure: Callable[[K], T], log: EvidenceLog, workers: int) -> dict[K, Part[T]]:
    """measure(key) for every key at the same time (at most `workers` threads), each part's
    evidence kept apart; an exception is kept as that part's answer, never raised here."""

    def one(key: K) -> Part[T]:
        with log.captured() as evidence:
            try:
                return Part(measure(key), None, evidence)
            except Exception as e:     # the part's test raises it; the other parts go on
                return Part(None, e, evidence)

    if not keys:
        return {}
    with ThreadPoolExecutor(max_workers=max(1, min(workers, len(keys)))) as pool:
        return dict(zip(keys, pool.map(one, keys)))


class Kept:
    """Groups measured once per run: in memory, and in `directory` (the run's private folder,
    rackproof.runfolder: one JSON file per group) when the run's xdist workers share it; None
    keeps them in this process only."""

    def __init__(self, directory: Path | None):
        self.directory = directory
        self._here: dict[str, object] = {}

    def get(self, group: str, measure: Callable[[], T]) -> T:
        """The group's results: measured by the first test that asks, in any worker."""
        if group in self._here:
            return self._here[group]
        if self.directory is None:
            found = self._here[group] = measure()
            return found
        name = hashlib.sha256(group.encode()).hexdigest()[:24]
        path = self.directory / f"{name}.json"
        with schedule.holding(self.directory, [f"kept-{name}"]):   # the other workers wait for the one measuring
            if path.exists():
                found = portable.loads(path.read_text())
            else:
                found = measure()
                partial = path.with_suffix(".partial")
                partial.write_text(portable.dumps(found))
                os.replace(partial, path)
        self._here[group] = found
        return found
