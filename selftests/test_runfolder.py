"""rackproof.nodes.runfolder: what a run shares lives in a folder nobody else could have made, held or
swapped; anything else is refused with a clear error, never used."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from rackproof.nodes import runfolder
from rackproof.measuring.schedule import LockBusy, holding

NOBODY = 65534
OTHER_GROUP = 65533   # no group of this machine: nobody's own, outside the lock folder's
REPO = Path(__file__).resolve().parents[1]


def test_a_run_folder_is_new_private_and_the_operators(tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", None)
    first, second = runfolder.made(), runfolder.made()
    assert first != second and first.parent == second.parent == tmp_path
    st = os.lstat(first)
    assert stat.S_IMODE(st.st_mode) == 0o700 and st.st_uid == os.geteuid()
    runfolder.removed(first)
    assert not first.exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a folder to another user needs root")
def test_a_folder_of_another_user_is_refused(tmp_path):
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o700)
    os.chown(theirs, NOBODY, NOBODY)
    with pytest.raises(runfolder.RunFolderError, match=r"belongs to uid 65534, not to this run's user"):
        runfolder.private(theirs)


def test_a_symlink_or_an_open_folder_is_refused(tmp_path):
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    (tmp_path / "link").symlink_to(real)
    with pytest.raises(runfolder.RunFolderError, match="is not a folder"):
        runfolder.private(tmp_path / "link")
    real.chmod(0o777)
    with pytest.raises(runfolder.RunFolderError, match="can be written by other users"):
        runfolder.private(real)


def test_without_a_controller_lock_folder_cluster_locks_live_in_the_operators_own(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(runfolder, "CONTROLLER_LOCKS", tmp_path / "no such folder")
    folder = runfolder.cluster_locks("thor-shelf:['thor-1', 'thor-2']")
    assert folder.parent == tmp_path / ".cache" / "rackproof" / "locks"
    assert folder == runfolder.cluster_locks("thor-shelf:['thor-1', 'thor-2']")
    (tmp_path / ".cache" / "rackproof" / "locks").chmod(0o777)
    with pytest.raises(runfolder.RunFolderError, match="can be written by other users"):
        runfolder.cluster_locks("thor-shelf:['thor-1', 'thor-2']")


# a second operator of the controller: `nobody`, in the group of the controller's lock folder or not;
# it takes the cluster's folder as any run does, holds thor-1's lock, says so, and lets go when its
# stdin closes
OPERATOR = r'''
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from rackproof.measuring import schedule
from rackproof.nodes import runfolder
runfolder.CONTROLLER_LOCKS = Path(sys.argv[2])
try:
    folder = runfolder.cluster_locks("thor-shelf:['thor-1', 'thor-2']")
except runfolder.RunFolderError as e:
    print(e, flush=True)
    sys.exit(3)
with schedule.holding(folder, ["thor-1"]):
    print("held", flush=True)
    sys.stdin.read()
'''


@pytest.fixture
def controller_locks(monkeypatch):
    """A controller's lock folder as scripts/setup.sh makes it (root's, 2770), of nobody's group,
    under a folder of root's that everyone may enter."""
    import shutil
    import tempfile
    base = Path(tempfile.mkdtemp(prefix="rackproof-selftest-"))
    base.chmod(0o755)
    locks = base / "locks"
    locks.mkdir()
    os.chown(locks, 0, NOBODY)
    locks.chmod(0o2770)
    monkeypatch.setattr(runfolder, "CONTROLLER_LOCKS", locks)
    yield locks
    shutil.rmtree(base)


def another_operator(locks: Path, *groups: str) -> subprocess.Popen:
    membership = ["--groups", ",".join(groups)] if groups else ["--clear-groups"]
    return subprocess.Popen(["setpriv", f"--reuid={NOBODY}", f"--regid={OTHER_GROUP}", *membership,
                             sys.executable, "-S", "-c", OPERATOR, str(REPO), str(locks)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd="/")


@pytest.mark.skipif(os.geteuid() != 0, reason="a second operator needs root to be made")
def test_with_a_controller_lock_folder_the_runs_of_two_operators_take_turns(controller_locks):
    theirs = another_operator(controller_locks, str(NOBODY))
    try:
        assert theirs.stdout.readline() == "held\n"
        mine = runfolder.cluster_locks("thor-shelf:['thor-1', 'thor-2']")
        assert mine.parent == controller_locks
        st = os.lstat(mine)
        assert st.st_gid == NOBODY and stat.S_IMODE(st.st_mode) == 0o2770
        with pytest.raises(LockBusy, match="the lock of thor-1 in .* was not free within 0.3 s"):
            with holding(mine, ["thor-2", "thor-1"], wait=0.3):
                pass
    finally:
        theirs.communicate(timeout=30)
    assert theirs.returncode == 0
    with holding(mine, ["thor-1"], wait=0.3):    # theirs is let go: mine at once
        pass
    lock = os.lstat(mine / "thor-1.lock")
    assert lock.st_uid == NOBODY and lock.st_gid == NOBODY and stat.S_IMODE(lock.st_mode) == 0o660


@pytest.mark.skipif(os.geteuid() != 0, reason="a second operator needs root to be made")
def test_an_operator_outside_the_group_is_told_to_join_it(controller_locks):
    theirs = another_operator(controller_locks)
    said = theirs.communicate(timeout=30)[0]
    assert theirs.returncode == 3
    assert said == (f"{controller_locks} keeps the runs of this controller's operators apart, and uid {NOBODY} may "
                    "not write to it: ask to be added to its group nogroup\n")


@pytest.mark.skipif(os.geteuid() != 0, reason="a lock folder of another user needs root to be made")
def test_a_controller_lock_folder_anyone_may_write_to_or_not_roots_is_refused(controller_locks):
    controller_locks.chmod(0o2777)
    with pytest.raises(runfolder.RunFolderError, match="is not a folder of root's that only root"):
        runfolder.cluster_locks("thor-shelf:['thor-1', 'thor-2']")
    controller_locks.chmod(0o2770)
    os.chown(controller_locks, NOBODY, NOBODY)
    with pytest.raises(runfolder.RunFolderError, match="is not a folder of root's that only root"):
        runfolder.cluster_locks("thor-shelf:['thor-1', 'thor-2']")
