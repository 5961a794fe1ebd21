"""rackproof bundle / verify: a bundle of a real run's report folder verifies and says who signed
what verdict for which ticket; one changed byte in any file inside fails naming that file; a
signature by a key not in the allowed signers fails; hostile archives are refused in one line."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from rackproof import bundle
from selftests.suite import REPLAYS, REPO

BIN = Path(sys.executable).parent


def _key(folder: Path, name: str) -> Path:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(folder / name)], check=True,
                   timeout=30)
    return folder / name


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """A run's report folder (a recording, narrowed to the SSH checks: quick), alice's and bob's
    keys, the allowed signers (alice only) and alice's bundle of the folder."""
    root = tmp_path_factory.mktemp("bundle")
    run = subprocess.run(
        [str(BIN / "pytest"), "-c", str(REPO / "pytest.ini"), "--rootdir", str(REPO), "-q", "-p", "no:cacheprovider",
         "--replay", str(REPLAYS / "thor5-healthy"), "--ticket", "CHG-1234", "--operator", "alice",
         f"--html={root / 'run' / 'report.html'}", str(REPO / "tests_ssh")],
        cwd=root, capture_output=True, text=True, timeout=300)
    assert (root / "run" / "results.json").exists(), run.stdout + run.stderr
    alice, bob = _key(root, "alice"), _key(root, "bob")
    (root / "allowed").write_text("alice@example.com " + " ".join(Path(f"{alice}.pub").read_text().split()[:2]) + "\n")
    return root, alice, bob


def rackproof(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / "rackproof"), *args], capture_output=True, text=True, timeout=120)


def _bundled(made, key, name: str) -> Path:
    root = made[0]
    output = root / name
    if not output.exists():
        made_ = rackproof("bundle", str(root / "run"), "--key", str(key), "-o", str(output))
        assert made_.returncode == 0, made_.stderr
    return output


def one_line_error(result: subprocess.CompletedProcess, status: int, *words: str) -> str:
    assert result.returncode == status, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


def test_a_bundle_verifies_in_one_line_with_ticket_signer_and_verdict(made):
    root, alice, _ = made
    path = _bundled(made, alice, "alice.tar")
    result = rackproof("verify", str(path), "--allowed-signers", str(root / "allowed"))
    assert result.returncode == 0, result.stderr
    decision = json.loads((root / "run" / "results.json").read_text())["verdict"]["decision"]
    assert result.stdout.count("\n") == 1
    assert result.stdout.startswith(f"verified: ticket CHG-1234, signed by alice@example.com, verdict {decision} (")
    members = bundle.read_tar(path)
    manifest = json.loads(members["manifest.json"])
    assert sorted(manifest["files"]) == ["inventory.toml", "junit.xml", "pytest-html.html", "report.html", "results.json"]
    assert (manifest["ticket"], manifest["operator"], manifest["verdict"]) == ("CHG-1234", "alice", decision)
    # the packed page shows the contents digest verify prints; the run's own page keeps the empty slot
    digest = manifest["contents_digest"]
    assert f"contents digest {digest}" in result.stdout
    assert f'<td id="bundle-digest"><code>{digest}</code></td>' in members["report.html"].decode()
    assert "not bundled" in (root / "run" / "report.html").read_text()
    # the inventory as used: the copy the run kept beside its report
    assert members["inventory.toml"] == (REPLAYS / "thor5-healthy" / "cluster.toml").read_bytes() == \
        (root / "run" / "inventory.toml").read_bytes()


def test_a_folder_given_relative_to_where_the_command_runs(made):
    root, alice, _ = made
    result = subprocess.run([str(BIN / "rackproof"), "bundle", "run", "--key", str(alice), "-o", "relative.tar"],
                            cwd=root, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and (root / "relative.tar").is_file(), result.stderr
    assert rackproof("verify", str(root / "relative.tar"), "--allowed-signers", str(root / "allowed")).returncode == 0


@pytest.mark.parametrize("member", bundle.MEMBERS)
def test_one_changed_byte_in_any_member_fails_naming_it(made, member, tmp_path):
    root, alice, _ = made
    raw = bytearray(_bundled(made, alice, "alice.tar").read_bytes())
    with tarfile.open(fileobj=io.BytesIO(bytes(raw))) as tar:
        info = tar.getmember(member)
    # a byte in the middle of the member's data (the armour's base64 for the signature)
    where = info.offset_data + info.size // 2
    raw[where] = ord("A") if raw[where] != ord("A") else ord("B")
    changed = tmp_path / "changed.tar"
    changed.write_bytes(bytes(raw))
    result = rackproof("verify", str(changed), "--allowed-signers", str(root / "allowed"))
    line = one_line_error(result, 1, "NOT VERIFIED", member)
    assert "verified:" not in result.stdout, line


def test_a_bundle_signed_by_a_key_not_allowed_fails(made):
    root, _, bob = made
    result = rackproof("verify", str(_bundled(made, bob, "bob.tar")), "--allowed-signers", str(root / "allowed"))
    one_line_error(result, 1, "NOT VERIFIED", "manifest.json.sig", "not made by a key of")


def _tar(path: Path, entries: list[tarfile.TarInfo | tuple[str, bytes]]) -> Path:
    with tarfile.open(path, "w") as tar:
        for entry in entries:
            if isinstance(entry, tarfile.TarInfo):
                tar.addfile(entry)
            else:
                info = tarfile.TarInfo(entry[0])
                info.size = len(entry[1])
                tar.addfile(info, io.BytesIO(entry[1]))
    return path


def _link(name: str, target: str, kind: bytes = tarfile.SYMTYPE) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    return info


HOSTILE = {
    "a path out of the folder": ([("../manifest.json", b"{}")], "is not one a bundle has"),
    "an absolute path": ([("/etc/cron.d/x", b"x")], "is not one a bundle has"),
    "a symlink": ([_link("report.html", "/etc/shadow")], "not a regular file"),
    "a hard link": ([("results.json", b"{}"), _link("report.html", "results.json", tarfile.LNKTYPE)],
                    "not a regular file"),
    "a member twice": ([("manifest.json", b"{}"), ("manifest.json", b"{}")], "appears twice"),
    "no signature": ([("manifest.json", b"{}")], "no manifest.json.sig"),
}


@pytest.mark.parametrize("case", HOSTILE)
def test_a_hostile_archive_is_refused_in_one_line(made, case, tmp_path):
    entries, words = HOSTILE[case]
    path = _tar(tmp_path / "hostile.tar", entries)
    one_line_error(rackproof("verify", str(path), "--allowed-signers", str(made[0] / "allowed")), 2, "rackproof verify:",
                   str(path), words)


def test_garbage_a_folder_and_an_oversized_member_are_refused(made, tmp_path, monkeypatch):
    allowed = str(made[0] / "allowed")
    garbage = tmp_path / "garbage.tar"
    garbage.write_bytes(os.urandom(4096))
    one_line_error(rackproof("verify", str(garbage), "--allowed-signers", allowed), 2, "not a readable tar")
    one_line_error(rackproof("verify", str(tmp_path), "--allowed-signers", allowed), 2, "not a regular file")
    one_line_error(rackproof("verify", str(garbage), "--allowed-signers", str(tmp_path / "none")), 2,
                   "no allowed signers there")
    monkeypatch.setattr(bundle, "MAX_MEMBER_BYTES", 10)
    with pytest.raises(bundle.BundleError, match="member results.json is larger than"):
        bundle.read_tar(_tar(tmp_path / "big.tar", [("results.json", b"x" * 11)]))


def test_bundle_refuses_bad_input_in_one_line(made, tmp_path):
    root, alice, _ = made
    one_line_error(rackproof("bundle", str(tmp_path / "nowhere"), "--key", str(alice)), 2, "not a report folder")
    one_line_error(rackproof("bundle", str(tmp_path), "--key", str(alice)), 2, "no report.html there")
    one_line_error(rackproof("bundle", str(root / "run"), "--key", str(tmp_path / "nokey"), "-o", str(tmp_path / "b.tar")),
                   2, "no SSH private key there")
    existing = _bundled(made, alice, "alice.tar")
    one_line_error(rackproof("bundle", str(root / "run"), "--key", str(alice), "-o", str(existing)), 2,
                   "exists: not overwritten")
    assert not list(existing.parent.glob(".rackproof-bundle-*"))   # nothing half-written left beside it
    # the inventory changed since the run: not the inventory as used
    copy = tmp_path / "run"
    copy.mkdir()
    for name in ("results.json", "report.html"):
        (copy / name).write_bytes((root / "run" / name).read_bytes())
    (copy / "inventory.toml").write_text((root / "run" / "inventory.toml").read_text() + "# edited\n")
    one_line_error(rackproof("bundle", str(copy), "--key", str(alice)), 2, "changed since the run")
    # gone: never the file results.json names instead (a path anyone who wrote results.json chose)
    (copy / "inventory.toml").unlink()
    one_line_error(rackproof("bundle", str(copy), "--key", str(alice)), 2, "no inventory.toml there")
