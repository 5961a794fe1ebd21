"""Measure a group at once, each part with its own evidence and its own answer.

Some measurements cost little per part once the group is measured together: every node's SSH
attempts to all its peers (one command per node, all nodes at once), or a round of throughput
pairs in which every node sends once and receives once. Each part runs in its own thread and
keeps its own evidence; an exception is that part's answer (rackproof.measuring.plan keeps the parts, and
each check judges its own).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Callable, Generic, Hashable, Sequence, TypeVar

from rackproof.nodes.remote import Evidence, EvidenceLog

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
