"""rackproof bundle reads only the run's own regular files: a report folder in which someone
planted a link to a secret (junit.xml -> /etc/shadow, pytest-html.html -> a private key), a hard
link, a FIFO, or a folder reached through a symbolic link is refused in one line naming it, and
no bundle is written. The untouched folder bundles (the other side)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from selftests.test_bundle import made, one_line_error, rackproof  # noqa: F401 (made: the fixture)


def _copy(made, into: Path) -> Path:
    run = into / "run"
    shutil.copytree(made[0] / "run", run, symlinks=True)
    return run


def _bundle(folder: Path, key: Path, output: Path):
    return rackproof("bundle", str(folder), "--key", str(key), "-o", str(output))


def test_the_untouched_folder_bundles(made, tmp_path):
    result = _bundle(_copy(made, tmp_path), made[1], tmp_path / "b.tar")
    assert result.returncode == 0 and (tmp_path / "b.tar").is_file(), result.stderr


PLANTED = {
    "junit.xml to /etc/shadow": ("junit.xml", lambda run, key: os.symlink("/etc/shadow", run / "junit.xml"),
                                 "a symbolic link (to /etc/shadow)"),
    "pytest-html.html to a private key": ("pytest-html.html",
                                          lambda run, key: os.symlink(key, run / "pytest-html.html"),
                                          "a symbolic link (to "),
    "inventory.toml to a key, relative": ("inventory.toml",
                                          lambda run, key: os.symlink(os.path.relpath(key, run), run / "inventory.toml"),
                                          "a symbolic link (to ../"),
    "report.html a hard link": ("report.html", lambda run, key: os.link(run / "results.json", run / "report.html"),
                                "a hard link"),
    "junit.xml a FIFO": ("junit.xml", lambda run, key: os.mkfifo(run / "junit.xml"), "not a regular file"),
    "results.json a folder": ("results.json", lambda run, key: (run / "results.json").mkdir(), "not a regular file"),
}


@pytest.mark.parametrize("case", PLANTED)
def test_a_planted_file_is_refused_naming_it(made, case, tmp_path):
    name, plant, words = PLANTED[case]
    run = _copy(made, tmp_path)
    (run / name).unlink()
    plant(run, made[1])
    line = one_line_error(_bundle(run, made[1], tmp_path / "b.tar"), 2, "rackproof bundle:", f"{run / name}:", words,
                          "refused")
    assert "PRIVATE KEY" not in line
    assert not (tmp_path / "b.tar").exists()


def test_a_symbolic_link_on_the_folders_path_is_refused(made, tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    run = _copy(made, real)
    # the folder itself a link, and a link to a folder above it
    (tmp_path / "linked-run").symlink_to(run)
    (tmp_path / "linked-parent").symlink_to(real)
    for given, link in ((tmp_path / "linked-run", tmp_path / "linked-run"),
                        (tmp_path / "linked-parent" / "run", tmp_path / "linked-parent")):
        one_line_error(_bundle(given, made[1], tmp_path / "b.tar"), 2, f"{link}: a symbolic link (to {real}",
                       "on the report folder's path", "refused")
        assert not (tmp_path / "b.tar").exists()
