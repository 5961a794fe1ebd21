"""Folders a run shares between its processes, and with later runs on the same cluster.

The suite often runs as root on a controller that other people log in to, so nothing it shares
may live at a name another account could guess and make first, hold, or swap:

- the run's own folder (what its xdist workers measured for each other, the counters noted
  before load) is made fresh by the controller with a random name (mkdtemp: mode 0700), checked
  after it is made, and handed to the workers, which check it again; it is removed at the end;
- the locks that keep two runs on one cluster apart live in the controller's lock folder when
  it has one (/var/lib/rackproof/locks: root's, writable only by the group of its operators, so
  every operator's runs are kept apart and no one else can make, hold or swap a lock), and
  otherwise in the operator's own folder (~/.cache/rackproof/locks, refused with a clear error
  when another user owns any part of it).

Every check is on the folder itself (lstat: no symlink followed), after it exists.
"""

from __future__ import annotations

import grp
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


# made by root when rackproof is installed on a shared controller (scripts/setup.sh, the README's
# "Before the first run"):
# root:rackproof, mode 2770 (setgid: what is made in it is the group's)
CONTROLLER_LOCKS = Path("/var/lib/rackproof/locks")


def cluster_locks(key: str) -> Path:
    """The folder of one cluster's locks (keyed by its inventory), shared by every run on that
    cluster: <controller's lock folder>/<digest> when the controller has one (the runs of all its
    operators kept apart), else the operator's own ~/.cache/rackproof/locks/<digest>."""
    digest = hashlib.sha256(key.encode()).hexdigest()[:12]
    if os.path.lexists(CONTROLLER_LOCKS):
        return made_again(CONTROLLER_LOCKS / digest)
    base = Path.home() / ".cache"
    folder = base / "rackproof" / "locks" / digest
    for part in (base, base / "rackproof", base / "rackproof" / "locks"):
        _made(part)
    return made_again(folder)


def made_again(folder: Path) -> Path:
    """A cluster's lock folder, made (again, when another run just removed it) and checked: the
    operators' group's inside the controller's lock folder, the operator's own anywhere else."""
    if folder.parent != CONTROLLER_LOCKS:
        return _made(folder)
    gid = _controller_group()
    try:
        folder.mkdir(mode=0o770)
        os.chown(folder, -1, gid)
        os.chmod(folder, 0o2770)          # mkdir's mode goes through the umask
    except FileExistsError:
        pass
    except OSError as e:
        raise RunFolderError(f"{folder}: {e.strerror}") from None
    st = os.lstat(folder)
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode) or st.st_gid != gid or st.st_mode & 0o002:
        raise RunFolderError(f"{folder} is not a folder of group {_group_name(gid)} that only its members may "
                             "write to: refusing to keep this run's locks in it")
    return folder


def lock_file_mode(folder: Path) -> int:
    """Who may open a lock file made in `folder`: the operators' group in the controller's."""
    return 0o660 if folder.parent == CONTROLLER_LOCKS else 0o600


def _made(part: Path) -> Path:
    try:
        part.mkdir(mode=0o700, exist_ok=True)
    except OSError as e:
        raise RunFolderError(f"{part}: {e.strerror}") from None
    return private(part)


def _controller_group() -> int:
    """The group of the controller's lock folder, once the folder and every folder above it are
    known to be root's (no one else could swap them) and the operator may write in it."""
    for part in (CONTROLLER_LOCKS, *CONTROLLER_LOCKS.parents):
        st = os.lstat(part)
        # the group may write only in the lock folder, others nowhere; above it, a sticky folder (/tmp)
        # is root's alone as far as its root-owned entries go: nobody else can swap them
        if part == CONTROLLER_LOCKS:
            open_to = st.st_mode & 0o002
        else:
            open_to = st.st_mode & 0o022 and not st.st_mode & stat.S_ISVTX
        if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode) or st.st_uid != 0 or open_to:
            raise RunFolderError(f"{part} is not a folder of root's that only root (and the operators' group, for "
                                 f"{CONTROLLER_LOCKS}) may write to: refusing to keep the cluster's locks under it")
    st = os.lstat(CONTROLLER_LOCKS)
    if not os.access(CONTROLLER_LOCKS, os.W_OK | os.X_OK):
        raise RunFolderError(f"{CONTROLLER_LOCKS} keeps the runs of this controller's operators apart, and uid "
                             f"{os.geteuid()} may not write to it: ask to be added to its group "
                             f"{_group_name(st.st_gid)}")
    return st.st_gid


def _group_name(gid: int) -> str:
    try:
        return grp.getgrgid(gid).gr_name
    except KeyError:
        return str(gid)
