"""Which throughput tests may run together, and locks that keep the others apart.

Pairs are ordered as rounds of disjoint pairs (the circle method of a round-robin
tournament), so that with pytest-xdist one round runs at once. Two tests that share a
node must never overlap: each takes a file lock per node, in sorted order so that two
tests can never each hold what the other waits for; file locks work across xdist workers.
A disruptive test (a lane taken down) must overlap nothing at all: every test holds the
whole rack's lock shared, a disruptive one holds it alone, and that lock comes first.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Sequence, TypeVar

T = TypeVar("T")


def round_robin(items: Sequence[T]) -> list[list[tuple[T, T]]]:
    """Every unordered pair exactly once, grouped into rounds in which no item appears twice,
    each pair oriented by `_sends` so that every item sends as often as it receives, give or
    take one: a node's transmit side is measured as much as its receive side."""
    players: list[int | None] = list(range(len(items)))
    if len(players) % 2:
        players.append(None)  # the bye
    n = len(players)
    rounds = []
    for _ in range(n - 1):
        pairs = []
        for i in range(n // 2):
            a, b = players[i], players[n - 1 - i]
            if a is not None and b is not None:
                src, dst = (a, b) if _sends(a, b, len(items)) else (b, a)
                pairs.append((items[src], items[dst]))
        rounds.append(pairs)
        players = [players[0], players[-1], *players[1:-1]]
    return [r for r in rounds if r]


def _sends(a: int, b: int, count: int) -> bool:
    """Whether item a sends to item b: on an odd number m of items, each sends to the (m-1)/2
    after it (modulo m); with an even count, the last item sends to the first half."""
    m = count if count % 2 else count - 1
    if b == m:
        return a >= m // 2
    if a == m:
        return b < m // 2
    return 0 < (b - a) % m <= (m - 1) // 2


def covering_pairs(items: Sequence[T]) -> list[list[tuple[T, T]]]:
    """Fewer pairs for a large rack: every item in at least one pair (the first round, plus
    the odd one out sending to the first pair's receiver)."""
    if len(items) < 2:
        return []
    first = round_robin(items)[0]
    covered = {x for pair in first for x in pair}
    extra = [(x, first[0][1]) for x in items if x not in covered]
    return [first] + ([extra] if extra else [])


def lock_dir(key: str) -> Path:
    """One lock folder per cluster (keyed by its inventory), shared by every process of the run
    and by other runs on the same cluster; made on first use, removed by the last run to end."""
    digest = hashlib.sha256(key.encode()).hexdigest()[:12]
    return Path(tempfile.gettempdir()) / f"rackproof-locks-{digest}"


WHOLE_RACK = "@rack"  # not a hostname, so no node's lock


@contextmanager
def holding(directory: Path, names: Sequence[str], shared: bool = False) -> Iterator[None]:
    """Hold the lock of every name, taken in sorted order (no deadlock), released on exit;
    `shared` locks may be held by several tests at once, but not beside an exclusive one."""
    handles = []
    try:
        for name in sorted(set(names)):
            fd = _open_lock(directory, name)
            handles.append(fd)
            fcntl.flock(fd, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
        yield
    finally:
        for fd in reversed(handles):
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)


def _open_lock(directory: Path, name: str) -> int:
    """The lock file of `name`, made with its folder if another run just removed them."""
    while True:
        directory.mkdir(mode=0o700, exist_ok=True)
        try:
            return os.open(directory / f"{name}.lock", os.O_CREAT | os.O_RDWR, 0o600)
        except FileNotFoundError:
            continue


def remove_when_idle(directory: Path) -> None:
    """Remove the lock folder unless another run on the same cluster is in the middle of a
    test (every test holds the whole-rack lock, shared): then the last one to end removes it."""
    try:
        fd = os.open(directory / f"{WHOLE_RACK}.lock", os.O_RDWR)
    except FileNotFoundError:
        shutil.rmtree(directory, ignore_errors=True)
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return
    try:
        shutil.rmtree(directory, ignore_errors=True)
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
