"""rackproof bundle / verify: a bundle of a real run's report folder verifies and says who signed
what verdict for which ticket, and the run's scope (a replay says REPLAY, a --node run names its
nodes); one changed byte in any file inside fails naming that file; a signature by a key not in
the allowed signers fails; a bundle re-signed by an allowed key after a member was deleted, added
or edited (its digest, its inventory, its verdict, its page) fails naming what does not hold;
`bundle` refuses a folder whose files disagree (an edited page, an edited results.json); hostile
archives are refused in one line."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from rackproof.ticket import bundle
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
    assert decision == "INCOMPLETE"   # narrowed to tests_ssh
    assert result.stdout.count("\n") == 1
    assert result.stdout.startswith(f"verified: ticket CHG-1234, signed by alice@example.com, verdict REPLAY {decision} (")
    # the scope: which recording, the step and nodes, why incomplete, the bounds the inventory set, waivers
    for words in (f"replay of {REPLAYS / 'thor5-healthy'}, step 9, all 5 nodes", "incomplete: narrowed by test paths",
                  "[expect] changed: lane_rate_gbps 0.25 (no default)", "iperf_seconds 3 (default 5)",
                  "no waiver applied"):
        assert words in result.stdout, result.stdout
    members = bundle.read_tar(path)
    manifest = json.loads(members["manifest.json"])
    assert sorted(members) == sorted(bundle.MEMBERS)
    assert sorted(manifest["files"]) == ["inventory.toml", "junit.xml", "pytest-html.html", "report.html", "results.json"]
    assert (manifest["ticket"], manifest["operator"], manifest["verdict"]) == ("CHG-1234", "alice", decision)
    assert (manifest["verdict_words"], manifest["scope"]["run"]) == (f"REPLAY {decision}", "replay")
    # SHA256SUMS, in sha256sum's format, lists the manifest and every file
    assert members["SHA256SUMS"].decode().splitlines() == [f"{bundle.sha256(members[n])}  {n}" for n in
                                                         sorted(bundle.LISTED)]
    # the packed page shows the contents digest verify prints; the run's own page keeps the empty slot
    digest = manifest["contents_digest"]
    assert f"contents digest {digest}" in result.stdout
    assert f'<td id="bundle-digest"><code>{digest}</code></td>' in members["report.html"].decode()
    assert "not bundled" in (root / "run" / "report.html").read_text()
    # the inventory as used: the copy the run kept beside its report
    assert members["inventory.toml"] == (REPLAYS / "thor5-healthy" / "cluster.toml").read_bytes() == \
        (root / "run" / "inventory.toml").read_bytes()


def _run(root: Path, name: str, *args: str) -> Path:
    """A run's report folder under root/name."""
    run = subprocess.run(
        [str(BIN / "pytest"), "-c", str(REPO / "pytest.ini"), "--rootdir", str(REPO), "-q", "-p", "no:cacheprovider",
         "--ticket", "CHG-7", f"--html={root / name / 'report.html'}", *args],
        cwd=REPO, capture_output=True, text=True, timeout=300)
    assert (root / name / "results.json").exists(), run.stdout + run.stderr
    return root / name


def test_a_node_runs_bundle_says_which_nodes_only(made):
    root, alice, _ = made
    folder = _run(root, "node-run", "--replay", str(REPLAYS / "thor5-healthy"), "--node", "thor-3")
    made_ = rackproof("bundle", str(folder), "--key", str(alice), "-o", str(root / "node.tar"))
    assert made_.returncode == 0, made_.stderr
    result = rackproof("verify", str(root / "node.tar"), "--allowed-signers", str(root / "allowed"))
    assert result.returncode == 0, result.stderr
    decision = json.loads((folder / "results.json").read_text())["verdict"]["decision"]
    assert decision in ("ACCEPTED", "ACCEPTED WITH LIMITS"), decision
    assert f"verdict REPLAY {decision} for thor-3 only (--node) (" in result.stdout, result.stdout
    assert "step 9, thor-3 only (1 of 5 nodes, --node)" in result.stdout, result.stdout
    assert "for thor-3 only" in made_.stdout


def test_a_live_runs_scope_says_live_and_no_replay():
    """The words and scope of a live run's results (no rack needed: the fields a live run writes)."""
    results = {"run": {"replay": None, "step": 3, "expectations_changed": []},
               "verdict": {"decision": "ACCEPTED", "coverage": {"nodes": [], "complete": True, "reason": ""}},
               "nodes": [{"name": "thor-1"}, {"name": "thor-2"}], "tests": [
                   {"id": "t::a", "waiver": {"status": "applied", "approved_by": "carol", "expires": "2027-01-01"}},
                   {"id": "t::b", "waiver": None}]}
    assert bundle.verdict_words(results) == "ACCEPTED"
    assert bundle.describe(bundle.scope_of(results)) == (
        "live, step 3, all 2 nodes; 2 checks; [expect] as the defaults; 1 waived: t::a (by carol until 2027-01-01)")


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
    one_line_error(result, 1, "NOT VERIFIED", "SHA256SUMS.sig", "not made by a key of")


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
    "a path out of the folder": ([("../manifest.json", b"{}")], "is not a flat file name"),
    "an absolute path": ([("/etc/cron.d/x", b"x")], "is not a flat file name"),
    "a symlink": ([_link("report.html", "/etc/shadow")], "not a regular file"),
    "a hard link": ([("results.json", b"{}"), _link("report.html", "results.json", tarfile.LNKTYPE)],
                    "not a regular file"),
    "a member twice": ([("manifest.json", b"{}"), ("manifest.json", b"{}")], "appears twice"),
    "no signature": ([("SHA256SUMS", b"")], "no SHA256SUMS.sig"),
    "no SHA256SUMS (a bundle of format 1)": ([("manifest.json", b"{}"), ("manifest.json.sig", b"")],
                                             "no SHA256SUMS: not a rackproof bundle (of format rackproof-bundle/2)"),
    "too many members": ([(f"f{i}", b"") for i in range(bundle.MAX_MEMBERS + 1)], "more than"),
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


def _resealed(members: dict[str, bytes], key: Path, output: Path, manifest_change=None) -> Path:
    """The members written as a bundle signed again with `key` (an allowed signer forging a bundle):
    files, contents digest, the page's slot, SHA256SUMS and its signature made to fit the members
    as they now are; then `manifest_change` edits the manifest."""
    manifest = json.loads(members["manifest.json"])
    slot = manifest["page_slot"].encode()
    page = bundle.DIGEST_SLOT.sub(lambda m: m.group(1) + slot + m.group(3), members["report.html"])
    files = {n: {"sha256": bundle.sha256(d), "size": len(d)} for n, d in members.items()
             if n in bundle.LISTED[1:] and n != "report.html"}
    manifest["contents_digest"] = bundle.contents_digest(files)
    members["report.html"] = bundle.with_digest(page, manifest["contents_digest"])
    files["report.html"] = {"sha256": bundle.sha256(members["report.html"]), "size": len(members["report.html"])}
    manifest["files"] = files
    if manifest_change:
        manifest_change(manifest)
    members["manifest.json"] = json.dumps(manifest).encode()
    members["SHA256SUMS"] = bundle.sums(members)
    members["SHA256SUMS.sig"] = bundle.sign(members["SHA256SUMS"], key)
    bundle.write_tar(members, output)
    return output


def _edit_results(members: dict[str, bytes], change) -> None:
    doc = json.loads(members["results.json"])
    change(doc)
    members["results.json"] = json.dumps(doc).encode()


def _edit_page(members: dict[str, bytes]) -> None:
    members["report.html"] = members["report.html"].replace(b"</h1>", b" (figures checked)</h1>", 1)


def _set(doc: dict, path: tuple, value) -> None:
    for key in path[:-1]:
        doc = doc[key]
    doc[path[-1]] = value


def _accepted(doc: dict) -> None:
    """results.json edited to ACCEPTED with its checks' outcomes to fit (only junit.xml still knows)."""
    for test in doc["tests"]:
        test["outcome"] = "passed" if test["outcome"] in ("failed", "error") else test["outcome"]
    doc["verdict"]["decision"] = "ACCEPTED"
    doc["verdict"]["coverage"].update(complete=True, reason="", narrowed_by=[], not_run=[], cut_short=[])


# (what was done, to the members, to the manifest, the words verify says)
FORGED = {
    "a member deleted": (lambda m: m.pop("junit.xml"), None, "junit.xml: in the signed SHA256SUMS but not in the bundle"),
    "a contents digest that is not its files'": (
        None, lambda man: man.update(contents_digest="0" * 64),
        "manifest.json: its contents digest is not the one its files give"),
    "the inventory's sha256 in results.json": (
        lambda m: _edit_results(m, lambda d: _set(d, ("run", "inventory", "sha256"), "1" * 64)), None,
        "inventory.toml: not the inventory the run used"),
    "the manifest's verdict not results.json's": (
        None, lambda man: man.update(verdict="ACCEPTED"), "results.json: its verdict INCOMPLETE is not the manifest's ACCEPTED"),
    "the manifest's scope not results.json's": (
        None, lambda man: man["scope"].update(node_option=True, nodes=["thor-3"]),
        "manifest.json: its verdict words or scope are not the ones results.json gives"),
    "results.json's verdict edited to ACCEPTED": (
        lambda m: _edit_results(m, lambda d: _set(d, ("verdict", "decision"), "ACCEPTED")),
        lambda man: man.update(verdict="ACCEPTED", verdict_words="REPLAY ACCEPTED"),
        "results.json: its verdict ACCEPTED is not the one its checks give (INCOMPLETE)"),
    "results.json's verdict and outcomes edited to ACCEPTED": (
        lambda m: _edit_results(m, _accepted),
        lambda man: man.update(verdict="ACCEPTED", verdict_words="REPLAY ACCEPTED",
                               scope={**man["scope"], "complete": True, "incomplete": ""}),
        "results.json: its sha256 is not the one junit.xml recorded at the end of the run"),
    "the page edited": (_edit_page, None, "report.html: its sha256 is not the one results.json recorded"),
}


@pytest.mark.parametrize("case", FORGED)
def test_a_bundle_resigned_after_a_change_fails_naming_what_does_not_hold(made, case, tmp_path):
    root, alice, _ = made
    members = bundle.read_tar(_bundled(made, alice, "alice.tar"))
    change, manifest_change, words = FORGED[case]
    if change:
        change(members)
    if case == "a member deleted":   # the signed list as it was: only the member is gone
        bundle.write_tar(members, tmp_path / "forged.tar")
    else:
        _resealed(members, alice, tmp_path / "forged.tar", manifest_change)
    result = rackproof("verify", str(tmp_path / "forged.tar"), "--allowed-signers", str(root / "allowed"))
    one_line_error(result, 1, "NOT VERIFIED", words)


def test_an_unknown_extra_member_fails_naming_it(made, tmp_path):
    root, alice, _ = made
    members = bundle.read_tar(_bundled(made, alice, "alice.tar"))
    members["notes.txt"] = b"approved, trust me\n"
    bundle.write_tar(members, tmp_path / "extra.tar")
    result = rackproof("verify", str(tmp_path / "extra.tar"), "--allowed-signers", str(root / "allowed"))
    one_line_error(result, 1, "NOT VERIFIED", "notes.txt: in the bundle but not in its signed SHA256SUMS")
    # the same bundle without it verifies (the other side)
    members.pop("notes.txt")
    bundle.write_tar(members, tmp_path / "plain.tar")
    assert rackproof("verify", str(tmp_path / "plain.tar"), "--allowed-signers", str(root / "allowed")).returncode == 0


def _folder_copy(made, into: Path) -> Path:
    copy = into / "run"
    copy.mkdir()
    for name in ("results.json", "report.html", "junit.xml", "inventory.toml"):
        (copy / name).write_bytes((made[0] / "run" / name).read_bytes())
    return copy


# (what was done to the folder, the words bundle refuses with)
DISAGREE = {
    "a figure edited on the page": (
        lambda run: (run / "report.html").write_bytes((run / "report.html").read_bytes().replace(b"</h1>", b"!</h1>", 1)),
        "report.html: its sha256 is not the one results.json recorded"),
    "results.json's verdict edited": (
        lambda run: (run / "results.json").write_text((run / "results.json").read_text().replace(
            '"decision": "INCOMPLETE"', '"decision": "ACCEPTED"', 1)),
        "results.json: its verdict ACCEPTED is not the one its checks give (INCOMPLETE)"),
    "results.json edited beside its verdict": (
        lambda run: (run / "results.json").write_text((run / "results.json").read_text().replace(
            '"operator": "alice"', '"operator": "mallory"', 1)),
        "results.json: its sha256 is not the one junit.xml recorded"),
    "junit.xml without the results' sha256": (
        lambda run: (run / "junit.xml").write_text(re.sub(r'<property name="rackproof.results_sha256"[^>]*>', "",
                                                          (run / "junit.xml").read_text())),
        "junit.xml: names no sha256 of results.json"),
}


@pytest.mark.parametrize("case", DISAGREE)
def test_bundle_refuses_a_folder_whose_files_disagree(made, case, tmp_path):
    root, alice, _ = made
    run = _folder_copy(made, tmp_path)
    assert rackproof("bundle", str(run), "--key", str(alice), "-o", str(tmp_path / "good.tar")).returncode == 0
    change, words = DISAGREE[case]
    change(run)
    one_line_error(rackproof("bundle", str(run), "--key", str(alice), "-o", str(tmp_path / "b.tar")), 2,
                   "rackproof bundle:", str(run), words, "refused")
    assert not (tmp_path / "b.tar").exists()


def test_a_rejected_run_edited_to_accepted_does_not_sign(made, tmp_path):
    root, alice, _ = made
    run = _run(tmp_path, "rejected", "--replay", str(REPLAYS / "thor5-ssh-thor2-to-thor4"))
    doc = json.loads((run / "results.json").read_text())
    assert doc["verdict"]["decision"] == "REJECTED"
    doc["verdict"]["decision"] = "ACCEPTED"
    (run / "results.json").write_text(json.dumps(doc))
    one_line_error(rackproof("bundle", str(run), "--key", str(alice)), 2,
                   "results.json: its verdict ACCEPTED is not the one its checks give (REJECTED)")
    _accepted(doc)
    (run / "results.json").write_text(json.dumps(doc))
    one_line_error(rackproof("bundle", str(run), "--key", str(alice)), 2,
                   "results.json: its sha256 is not the one junit.xml recorded")
    assert not (run / "bundle.tar").exists()


def _offline_commands() -> str:
    """The commands docs/bundle.md gives for verifying without rackproof, exactly as written."""
    text = (REPO / "docs" / "bundle.md").read_text()
    section = text[text.index("## Verifying without rackproof"):]
    return re.search(r"```sh\n(.*?)```", section, re.S).group(1)


def _offline(bundle_path: Path, allowed: Path, where: Path) -> subprocess.CompletedProcess:
    where.mkdir()
    env = {"PATH": "/usr/bin:/bin", "BUNDLE": str(bundle_path), "ALLOWED_SIGNERS": str(allowed)}
    return subprocess.run(["bash", "-e", "-c", _offline_commands()], cwd=where, env=env, capture_output=True, text=True,
                          timeout=60)


def test_the_documented_offline_commands_verify_a_bundle_without_rackproof(made, tmp_path):
    root, alice, _ = made
    result = _offline(_bundled(made, alice, "alice.tar"), root / "allowed", tmp_path / "good")
    assert result.returncode == 0, result.stdout + result.stderr
    assert 'Good "rackproof-bundle@rackproof" signature for alice@example.com' in result.stdout + result.stderr
    assert sorted(result.stdout.split("\n")[-7:-1]) == sorted(f"{n}: OK" for n in bundle.LISTED), result.stdout


def _offline_fails(made, tmp_path, path: Path, words: str) -> None:
    result = _offline(path, made[0] / "allowed", tmp_path / "check")
    assert result.returncode != 0 and words in result.stdout + result.stderr, result.stdout + result.stderr


def test_the_offline_commands_fail_on_a_changed_byte(made, tmp_path):
    members = bundle.read_tar(_bundled(made, made[1], "alice.tar"))
    members["results.json"] = members["results.json"].replace(b'"INCOMPLETE"', b'"ACCEPTED__"', 1)
    bundle.write_tar(members, tmp_path / "changed.tar")
    _offline_fails(made, tmp_path, tmp_path / "changed.tar", "results.json: FAILED")


def test_the_offline_commands_fail_on_a_list_changed_after_signing(made, tmp_path):
    members = bundle.read_tar(_bundled(made, made[1], "alice.tar"))
    members["results.json"] = members["results.json"].replace(b'"INCOMPLETE"', b'"ACCEPTED__"', 1)
    members["SHA256SUMS"] = bundle.sums(members)
    bundle.write_tar(members, tmp_path / "relisted.tar")
    _offline_fails(made, tmp_path, tmp_path / "relisted.tar", "Signature verification failed")


def test_the_offline_commands_fail_on_a_key_not_allowed(made, tmp_path):
    _offline_fails(made, tmp_path, _bundled(made, made[2], "bob.tar"), "No principal matched")


def test_the_offline_commands_fail_on_an_extra_file(made, tmp_path):
    members = bundle.read_tar(_bundled(made, made[1], "alice.tar"))
    members["notes.txt"] = b"approved\n"
    bundle.write_tar(members, tmp_path / "extra.tar")
    result = _offline(tmp_path / "extra.tar", made[0] / "allowed", tmp_path / "check")
    assert result.returncode == 1 and "Good" not in result.stderr, result.stdout + result.stderr


@pytest.mark.parametrize("change", [
    lambda d: _set(d, ("verdict", "coverage", "nodes"), [1, 2]),
    lambda d: _set(d, ("run", "expectations_changed"), "none"),
    lambda d: _set(d, ("tests",), [{"id": "x"}]),
    lambda d: _set(d, ("nodes",), None),
], ids=["nodes not names", "expectations not a list", "a test without outcome", "no nodes"])
def test_a_signed_results_json_of_another_shape_is_refused_in_one_line(made, change, tmp_path):
    root, alice, _ = made
    members = bundle.read_tar(_bundled(made, alice, "alice.tar"))
    _edit_results(members, change)
    _resealed(members, alice, tmp_path / "odd.tar")
    one_line_error(rackproof("verify", str(tmp_path / "odd.tar"), "--allowed-signers", str(root / "allowed")), 2,
                   "rackproof verify: results.json: not a rackproof results.json")


def test_many_waivers_are_counted_beyond_the_first_three():
    results = {"run": {"replay": None, "step": 3, "expectations_changed": []},
               "verdict": {"decision": "ACCEPTED", "coverage": {"nodes": [], "complete": True, "reason": ""}},
               "nodes": [{"name": "thor-1"}],
               "tests": [{"id": f"t::{i}", "waiver": {"status": "applied", "approved_by": "carol", "expires": "2027-01-01"}}
                         for i in range(5)]}
    assert bundle.describe(bundle.scope_of(results)).endswith(
        "5 waived: t::0 (by carol until 2027-01-01), t::1 (by carol until 2027-01-01), t::2 (by carol until 2027-01-01) "
        "and 2 more")
