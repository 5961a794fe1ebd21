"""rackproof.runfolder: what a run shares lives in a folder nobody else could have made, held or
swapped; anything else is refused with a clear error, never used."""

from __future__ import annotations

import os
import stat

import pytest

from rackproof import runfolder

NOBODY = 65534


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


def test_cluster_locks_live_in_the_operators_own_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    folder = runfolder.cluster_locks("thor-shelf:['thor-1', 'thor-2']")
    assert folder.parent == tmp_path / ".cache" / "rackproof" / "locks"
    assert folder == runfolder.cluster_locks("thor-shelf:['thor-1', 'thor-2']")
    (tmp_path / ".cache" / "rackproof" / "locks").chmod(0o777)
    with pytest.raises(runfolder.RunFolderError, match="can be written by other users"):
        runfolder.cluster_locks("thor-shelf:['thor-1', 'thor-2']")
