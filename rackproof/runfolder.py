"""Folders a run shares between its processes, and with later runs on the same cluster.

The suite often runs as root on a controller that other people log in to, so nothing it shares
may live at a name another account could guess and make first, hold, or swap:

- the run's own folder (what its xdist workers measured for each other, the counters noted
  before load) is made fresh by the controller with a random name (mkdtemp: mode 0700), checked
  after it is made, and handed to the workers, which check it again; it is removed at the end;
- the locks that keep two runs on one cluster apart live in the operator's own folder
  (~/.cache/rackproof/locks), refused with a clear error when another user owns any part of it.

Every check is on the folder itself (lstat: no symlink followed), after it exists.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import tempfile
from pathlib import Path


class RunFolderError(Exception):
    """A folder the run would share through is not the operator's alone."""


def private(path: Path) -> Path:
    """`path`, once it is known to be a real folder (not a symlink) that the operator owns
    and nobody else may write to; RunFolderError otherwise."""
    try:
        st = os.lstat(path)
    except OSError as e:
        raise RunFolderError(f"{path}: {e.strerror}") from None
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
        raise RunFolderError(f"{path} is not a folder (a symlink or a file): refusing to share the run's data through it")
    if st.st_uid != os.geteuid():
        raise RunFolderError(f"{path} belongs to uid {st.st_uid}, not to this run's user (uid {os.geteuid()}): "
                             "refusing to share the run's data through it; remove it or run as its owner")
    if st.st_mode & 0o022:
        raise RunFolderError(f"{path} can be written by other users (mode {stat.S_IMODE(st.st_mode):o}): "
                             "refusing to share the run's data through it")
    return path


def made() -> Path:
    """A new folder for one run, under the temp directory, with a name nobody could guess."""
    path = Path(tempfile.mkdtemp(prefix="rackproof-run-"))
    if stat.S_IMODE(os.lstat(path).st_mode) != 0o700:
        raise RunFolderError(f"{path} was made with mode {stat.S_IMODE(os.lstat(path).st_mode):o}, not 700")
    return private(path)


def removed(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)


def cluster_locks(key: str) -> Path:
    """The operator's folder of one cluster's locks (keyed by its inventory), shared by every
    run of that operator on that cluster: ~/.cache/rackproof/locks/<digest>."""
    base = Path.home() / ".cache"
    folder = base / "rackproof" / "locks" / hashlib.sha256(key.encode()).hexdigest()[:12]
    for part in (base, base / "rackproof", base / "rackproof" / "locks", folder):
        try:
            part.mkdir(mode=0o700, exist_ok=True)
        except OSError as e:
            raise RunFolderError(f"{part}: {e.strerror}") from None
        private(part)
    return folder
