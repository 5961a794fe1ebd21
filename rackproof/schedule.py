"""Which throughput tests may run together, and locks that keep the others apart.

Pairs are ordered as rounds of disjoint pairs (the circle method of a round-robin
tournament), so that with pytest-xdist one round runs at once. Two tests that share a
node must never overlap: each takes a file lock per node, in sorted order so that two
tests can never each hold what the other waits for; file locks work across xdist workers.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Sequence, TypeVar

T = TypeVar("T")


def round_robin(items: Sequence[T]) -> list[list[tuple[T, T]]]:
    """Every unordered pair exactly once, grouped into rounds in which no item appears twice."""
    players: list[T | None] = list(items)
    if len(players) % 2:
        players.append(None)  # the bye
    n = len(players)
    rounds = []
    for r in range(n - 1):
        pairs = []
        for i in range(n // 2):
            a, b = players[i], players[n - 1 - i]
            if a is not None and b is not None:
                # alternate who sends, so every node is a sender and a receiver over the rounds
                pairs.append((a, b) if (r + i) % 2 == 0 else (b, a))
        rounds.append(pairs)
        players = [players[0], players[-1], *players[1:-1]]
    return [r for r in rounds if r]


def covering_pairs(items: Sequence[T]) -> list[list[tuple[T, T]]]:
    """Fewer pairs for a large rack: every item in at least one pair (the first round, plus
    the odd one out paired with the first)."""
    first = round_robin(items)[0] if len(items) > 1 else []
    covered = {x for pair in first for x in pair}
    extra = [(x, items[0]) for x in items if x not in covered]
    return [first] + ([extra] if extra else [])


def lock_dir(key: str) -> Path:
    """One lock folder per cluster (keyed by its inventory), shared by every process of the run;
    made on first use, removed by the run's controller at the end."""
    digest = hashlib.sha256(key.encode()).hexdigest()[:12]
    return Path(tempfile.gettempdir()) / f"rackproof-locks-{digest}"


@contextmanager
def holding(directory: Path, names: Sequence[str]) -> Iterator[None]:
    """Hold the lock of every name, taken in sorted order (no deadlock), released on exit."""
    handles = []
    directory.mkdir(mode=0o700, exist_ok=True)
    try:
        for name in sorted(set(names)):
            fd = os.open(directory / f"{name}.lock", os.O_CREAT | os.O_RDWR, 0o600)
            handles.append(fd)
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        for fd in reversed(handles):
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
