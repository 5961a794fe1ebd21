"""Which throughput tests run together, and locks that keep the others apart.

Lanes are full duplex and the switch does not block: a node can send to one peer while it
receives from another. So the ordered pairs come in rounds in which every node sends once and
receives once (a derangement: node i sends to node i+r in round r: the pair kinds' rounds,
rackproof.inventory.kinds), and a round is measured all at once (rackproof.nodes.together): all
n*(n-1) pairs in n-1 rounds. Two measurements that share a node
must never overlap otherwise: each takes a file lock per node, in sorted order so that two can
never each hold what the other waits for; file locks work across xdist workers and runs, of
every operator of the controller (in its lock folder, else the operator's own: rackproof.nodes.runfolder).
A disruptive
test (a lane taken down) must overlap nothing at all: every test holds the whole rack's lock
shared, a disruptive one holds it alone, and that lock comes first.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import stat
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Sequence

from rackproof.nodes.runfolder import lock_file_mode, made_again

WHOLE_RACK = "@rack"  # not a hostname, so no node's lock
# a lock is waited on at most this long: the longest a check holds one (a throughput round, a
# disruptive check) is well under it; past it, another run on the cluster is holding on
LOCK_WAIT_S = 900.0


class LockBusy(Exception):
    """A lock that was not free within LOCK_WAIT_S: the check could not run, nothing was judged."""


@contextmanager
def holding(directory: Path, names: Sequence[str], shared: bool = False, wait: float | None = None) -> Iterator[None]:
    """Hold the lock of every name, taken in sorted order (no deadlock), released on exit;
    `shared` locks may be held by several tests at once, but not beside an exclusive one.
    `directory` is the cluster's (rackproof.nodes.runfolder.cluster_locks); no lock is waited on past
    `wait` (LOCK_WAIT_S unless given)."""
    handles = []
    wait = LOCK_WAIT_S if wait is None else wait
    deadline = time.monotonic() + wait
    try:
        for name in sorted(set(names)):
            handles.append(_locked(directory, name, shared, deadline, wait))
        yield
    finally:
        for fd in reversed(handles):
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)


def _locked(directory: Path, name: str, shared: bool, deadline: float, wait: float) -> int:
    """The lock file of `name`, open and locked; LockBusy past the deadline. A lock on a file the
    holder removed meanwhile (an idle folder: remove_when_idle) keeps no one out: the file that is
    there now is taken instead."""
    while True:
        fd = _opened(directory, name)
        try:
            free = _waited_for(fd, shared, deadline)
        except BaseException:      # Ctrl-C while waiting: nothing is held
            os.close(fd)
            raise
        if not free:
            os.close(fd)
            raise LockBusy(f"the lock of {name} in {directory} was not free within {wait:g} s: "
                           "another run on this cluster (or a stuck one) holds it")
        if _still_there(directory / f"{name}.lock", fd):
            return fd
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def _waited_for(fd: int, shared: bool, deadline: float) -> bool:
    """Whether the lock on `fd` was taken before the deadline."""
    while True:
        try:
            fcntl.flock(fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.05)


def _opened(directory: Path, name: str) -> int:
    """The lock file of `name`, its folder made again if another run just removed it; one the
    operators of the controller share can be opened by each of them (runfolder.lock_file_mode)."""
    mode = lock_file_mode(directory)
    while True:
        try:
            fd = os.open(directory / f"{name}.lock", os.O_CREAT | os.O_RDWR | os.O_NOFOLLOW, mode)
            break
        except FileNotFoundError:
            made_again(directory)
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise LockBusy(f"the lock of {name} in {directory} is not a file: no check that needs it can run")
    if st.st_uid == os.geteuid() and stat.S_IMODE(st.st_mode) != mode:
        os.fchmod(fd, mode)   # the umask took the group's bits away
    return fd


def _still_there(path: Path, fd: int) -> bool:
    """Whether the lock file open as `fd` is still the one at `path`."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (st.st_dev, st.st_ino) == (held.st_dev, held.st_ino)


def remove_when_idle(directory: Path) -> None:
    """Remove the cluster's lock folder unless another run on it is in the middle of a test
    (every test holds the whole-rack lock, shared): then the last one to end removes it."""
    try:
        fd = os.open(directory / f"{WHOLE_RACK}.lock", os.O_RDWR | os.O_NOFOLLOW)
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
