"""One file to attach to a change-control ticket: a run's report folder packed with a manifest of
what the run was and a list of every file's sha256, signed with the operator's SSH key
(`ssh-keygen -Y sign`), and its check.

The bundle is a plain (uncompressed) tar of flat members:

    SHA256SUMS          every other member's sha256, in sha256sum's format (`sha256sum -c` reads it)
    SHA256SUMS.sig      ssh-keygen's signature over SHA256SUMS, namespace NAMESPACE
    manifest.json       what the run was (verdict, ticket, operator, inventory sha, its scope: live
                        or replay, the nodes and step, narrowed or interrupted, bounds set in
                        [expect], waivers applied) and every run file's sha256 and size
    report.html, results.json, junit.xml, pytest-html.html, inventory.toml

What is signed is SHA256SUMS, so that a reviewer without rackproof checks a bundle with
ssh-keygen and sha256sum alone (docs/bundle.md); `rackproof verify` checks the same and more.

Uncompressed so that a changed byte stays inside the member it changed: the check names that
member (in a compressed stream it would only break the stream).

report.html cannot show the digest of a list that covers report.html. The bundle therefore
writes into the run's page (in the element the page keeps for it) the *contents digest*: the
sha256 of the manifest's list of every file except report.html. That list holds results.json,
which holds the sha256 of the page as the run wrote it, so the digest on the page covers the page
and the data both. `verify` prints the same digest, so a printed page is matched to its bundle.

The files must agree with each other, or the folder is not bundled (and a bundle not verified):
report.html is the page whose sha256 results.json recorded; results.json is the file whose sha256
junit.xml recorded at the end of the run; its verdict is the one its checks' outcomes give.

A bundle is hostile input: it is never extracted; members are read into memory only when they are
regular files with a flat name, once each, within size and count bounds.

A report folder is untrusted too (anyone who can write into it could plant `junit.xml ->
/etc/shadow` for root's `rackproof bundle` to sign): only regular files directly inside it are
read, each opened without following a link (O_NOFOLLOW, relative to the folder's own descriptor)
and checked to be the file listed (same device and inode), with one link only; the folder's path
is walked from / the same way, so a symbolic link anywhere on it is refused.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import json
import os
import re
import stat
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

import rackproof
from rackproof.report import junit, verdict
from rackproof.probes.safetext import one_line

NAMESPACE = "rackproof-bundle@rackproof"   # ssh-keygen -n: a signature made for this use only
FORMAT = "rackproof-bundle/2"   # 2: SHA256SUMS is what is signed; the manifest states the run's scope
SUMS, SIGNATURE, MANIFEST = "SHA256SUMS", "SHA256SUMS.sig", "manifest.json"
INVENTORY = "inventory.toml"
# the run's files (name in the report folder = name in the bundle); report.html and results.json must be there
RUN_FILES = ("report.html", "results.json", "junit.xml", "pytest-html.html")
REQUIRED = ("report.html", "results.json")
LISTED = (MANIFEST, *RUN_FILES, INVENTORY)    # what SHA256SUMS lists
MEMBERS = (SUMS, SIGNATURE, *LISTED)
MAX_MEMBERS = 2 * len(MEMBERS)    # an unknown extra member is named as such; hundreds of them are not a bundle
FLAT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
SUMS_LINE = re.compile(r"([0-9a-f]{64})  (" + FLAT_NAME.pattern + ")")
MAX_MEMBER_BYTES = 256 << 20      # results.json of a 32-node run with its evidence is tens of MiB
MAX_BUNDLE_BYTES = 1 << 30
SSH_KEYGEN_TIMEOUT_S = 30
SHOWN = 3       # waivers named in verify's line; the rest are counted (the manifest lists them all)
# the element of report.html that holds the contents digest (rackproof.report.html writes it)
DIGEST_SLOT = re.compile(rb'(<td id="bundle-digest">)(.*?)(</td>)', re.S)


class BundleError(Exception):
    """A bundle (or what goes into one) that cannot be made or read: one line naming what and where."""


class NotVerified(Exception):
    """A readable bundle whose signature or contents do not hold: one line naming the member."""


class _Disagree(Exception):
    """Two files of a run that do not agree (bundle: refused; verify: not verified)."""


@dataclass(frozen=True)
class Verified:
    ticket: str
    signer: str
    words: str           # the verdict as the bundle states it: "REPLAY ACCEPTED for thor-3 only (--node)"
    cluster: str
    started: str
    scope: dict
    contents_digest: str
    manifest_sha256: str

    def __str__(self) -> str:
        return (f"verified: ticket {self.ticket or '(none given)'}, signed by {self.signer}, verdict {self.words} "
                f"({self.cluster}, run {self.started}; {describe(self.scope)}; contents digest {self.contents_digest}, "
                f"manifest sha256 {self.manifest_sha256})")


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def contents_digest(files: dict[str, dict]) -> str:
    """The digest a printed report.html shows: over every listed member's sha256 but report.html's."""
    listed = {name: entry["sha256"] for name, entry in sorted(files.items()) if name != "report.html"}
    return sha256(json.dumps(listed, sort_keys=True, separators=(",", ":")).encode())


def with_digest(page: bytes, digest: str) -> bytes:
    """report.html with the contents digest in its slot; BundleError if the page has none."""
    if len(DIGEST_SLOT.findall(page)) != 1:
        raise BundleError("report.html has no bundle-digest slot (not a report of this rackproof): cannot show the "
                          "bundle's digest in it")
    return DIGEST_SLOT.sub(lambda m: m.group(1) + f"<code>{digest}</code>".encode() + m.group(3), page)


def _run(args: list[str], stdin: bytes, what: str) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(args, input=stdin, capture_output=True, timeout=SSH_KEYGEN_TIMEOUT_S)
    except FileNotFoundError:
        raise BundleError("ssh-keygen is not installed (package openssh-client)") from None
    except subprocess.TimeoutExpired:
        raise BundleError(f"ssh-keygen took more than {SSH_KEYGEN_TIMEOUT_S} s to {what} (a passphrase prompt? use "
                          "ssh-agent)") from None


def _said(result: subprocess.CompletedProcess) -> str:
    """What ssh-keygen said, its lines joined into one."""
    lines = (result.stderr or result.stdout).decode(errors="replace").splitlines()
    return one_line("; ".join(line.strip() for line in lines if line.strip())) or f"exit {result.returncode}"


def _refused(where: str, why: str) -> BundleError:
    return BundleError(f"{one_line(where)}: {why}: refused (a bundle holds only the run's own regular files)")


def _open_folder(folder: Path) -> int:
    """A descriptor of the report folder, reached from / one component at a time without following
    a symbolic link (BundleError naming the first link or non-folder on the way)."""
    path = Path(os.path.abspath(folder))   # getcwd() is already free of links
    fd = os.open("/", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    walked = Path("/")
    try:
        for part in path.parts[1:]:
            walked = walked / part
            try:
                listed = os.stat(part, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                raise BundleError(f"{one_line(str(folder))}: not a report folder") from None
            if stat.S_ISLNK(listed.st_mode):
                raise _refused(str(walked), f"a symbolic link (to {os.readlink(part, dir_fd=fd)}) on the report "
                                            "folder's path (give the folder's real path if it is yours)")
            if not stat.S_ISDIR(listed.st_mode):
                raise BundleError(f"{one_line(str(folder))}: not a report folder ({one_line(str(walked))} is not a "
                                  "folder)")
            inner = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
            os.close(fd)
            fd = inner
            opened = os.fstat(fd)
            if (opened.st_dev, opened.st_ino) != (listed.st_dev, listed.st_ino):
                raise _refused(str(walked), "replaced while it was opened")
        return fd
    except BundleError:
        os.close(fd)
        raise
    except OSError as e:
        os.close(fd)
        raise BundleError(f"{one_line(str(walked))}: cannot open it: {e.strerror}") from None


def _read_inside(folder_fd: int, folder: Path, name: str) -> bytes | None:
    """The regular file `name` directly inside the folder (None if there is none), refused when it
    is a symbolic link, a hard link, anything but a regular file, swapped while opened, or too large."""
    where = str(folder / name)
    try:
        listed = os.stat(name, dir_fd=folder_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise BundleError(f"{one_line(where)}: cannot read it: {e.strerror}") from None
    if stat.S_ISLNK(listed.st_mode):
        raise _refused(where, f"a symbolic link (to {os.readlink(name, dir_fd=folder_fd)})")
    if not stat.S_ISREG(listed.st_mode):
        raise _refused(where, "not a regular file")
    if listed.st_nlink != 1:
        raise _refused(where, f"a hard link ({listed.st_nlink} names for one file)")
    if listed.st_size > MAX_MEMBER_BYTES:
        raise _refused(where, f"larger than {MAX_MEMBER_BYTES >> 20} MiB")
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC, dir_fd=folder_fd)
    except OSError as e:
        raise BundleError(f"{one_line(where)}: cannot read it: {e.strerror}") from None
    with os.fdopen(fd, "rb") as f:
        opened = os.fstat(fd)
        if (opened.st_dev, opened.st_ino) != (listed.st_dev, listed.st_ino) or not stat.S_ISREG(opened.st_mode):
            raise _refused(where, "replaced while it was opened")
        data = f.read(MAX_MEMBER_BYTES + 1)
    if len(data) > MAX_MEMBER_BYTES:
        raise _refused(where, f"larger than {MAX_MEMBER_BYTES >> 20} MiB")
    return data


def _results(data: bytes, where: str) -> dict:
    try:
        doc = json.loads(data)
        needed = (doc["verdict"]["decision"], doc["run"]["cluster"], doc["run"]["inventory"]["sha256"],
                  doc["run"]["started"])
        describe(scope_of(doc))
        verdict_words(doc)
        _decided(doc)
    except (ValueError, TypeError, KeyError, AttributeError):
        raise BundleError(f"{where}: not a rackproof results.json") from None
    if not all(isinstance(field, str) for field in needed):
        raise BundleError(f"{where}: not a rackproof results.json")
    return doc


def scope_of(results: dict) -> dict:
    """What the run covered, from its results: live or replay (and which recording), the step, the
    nodes, how many checks, narrowed or interrupted (and why), bounds set in [expect], waivers applied."""
    run, coverage = results["run"], results["verdict"]["coverage"]
    return {
        "run": "replay" if run["replay"] else "live", "recording": run["replay"], "step": run["step"],
        "nodes": list(coverage["nodes"]) or [n["name"] for n in results["nodes"]], "of_nodes": len(results["nodes"]),
        "node_option": bool(coverage["nodes"]), "checks": len(results["tests"]), "complete": coverage["complete"],
        "incomplete": coverage["reason"],
        "expectations_changed": [{k: e[k] for k in ("setting", "value", "default")}
                                 for e in run["expectations_changed"]],
        "waivers_applied": [{"test": t["id"], "approved_by": t["waiver"]["approved_by"],
                             "expires": t["waiver"]["expires"]}
                            for t in results["tests"] if t["waiver"] and t["waiver"]["status"] == "applied"],
    }


def verdict_words(results: dict) -> str:
    """The verdict as the bundle states it: the terminal's line, and REPLAY before it for a replay."""
    words = verdict.line(results["verdict"])
    return f"REPLAY {words}" if results["run"]["replay"] else words


def describe(scope: dict) -> str:
    """The scope in a few words for verify's one line."""
    step = f"step {scope['step']}" if scope["step"] is not None else "every step"
    if scope["node_option"]:
        nodes = f"{', '.join(scope['nodes'])} only ({len(scope['nodes'])} of {scope['of_nodes']} nodes, --node)"
    else:
        nodes = f"all {scope['of_nodes']} nodes"
    parts = [f"{'replay of ' + str(scope['recording']) if scope['run'] == 'replay' else 'live'}, {step}, {nodes}",
             f"{scope['checks']} checks" + ("" if scope["complete"] else f", incomplete: {scope['incomplete']}")]
    changed = scope["expectations_changed"]
    parts.append("[expect] as the defaults" if not changed else "[expect] changed: " + ", ".join(
        f"{e['setting']} {e['value']}" + (f" (default {e['default']})" if e["default"] is not None else " (no default)")
        for e in changed))
    waived = scope["waivers_applied"]
    parts.append("no waiver applied" if not waived else f"{len(waived)} waived: " + ", ".join(
        f"{w['test']} (by {w['approved_by']} until {w['expires']})" for w in waived[:SHOWN])
        + (f" and {len(waived) - SHOWN} more" if len(waived) > SHOWN else ""))
    return one_line("; ".join(parts))


def _decided(results: dict) -> str:
    """The verdict results.json's own checks and coverage give (rackproof.report.verdict's rules)."""
    c = results["verdict"]["coverage"]
    coverage = verdict.Coverage(tuple(c["nodes"]), tuple(c["narrowed_by"]), c["interrupted"], tuple(c["not_run"]),
                                tuple(c["cut_short"]))
    return verdict.decide(results["tests"], coverage)["decision"]


def _agree(members: dict[str, bytes], results: dict, page_as_run: bytes) -> None:
    """The run's files agree with each other (_Disagree naming the file that does not)."""
    decision, decided = results["verdict"]["decision"], _decided(results)
    if decision != decided:
        raise _Disagree(f"results.json: its verdict {one_line(decision)} is not the one its checks give ({decided}): "
                        "edited after the run")
    if sha256(page_as_run) != results.get("report_html_sha256"):
        raise _Disagree("report.html: its sha256 is not the one results.json recorded for the run's page: not the "
                        "page the run wrote")
    if "junit.xml" in members:
        named = junit.results_sha256(members["junit.xml"])
        if named is None:
            raise _Disagree(f"junit.xml: names no sha256 of results.json ({junit.RESULTS_SHA256}): not the junit.xml "
                            "of a run of this rackproof")
        if named != sha256(members["results.json"]):
            raise _Disagree("results.json: its sha256 is not the one junit.xml recorded at the end of the run: "
                            "edited after the run")


def sums(members: dict[str, bytes]) -> bytes:
    """SHA256SUMS: `SHA256  NAME` for every listed member, as sha256sum writes it."""
    return "".join(f"{sha256(members[name])}  {name}\n" for name in sorted(members) if name in LISTED).encode()


def parse_sums(data: bytes) -> dict[str, str]:
    """SHA256SUMS's {name: sha256}, checked (NotVerified: it is signed, so a bad one was signed so)."""
    listed: dict[str, str] = {}
    for number, line in enumerate(data.decode("ascii", errors="replace").split("\n")[:-1], 1):
        match = SUMS_LINE.fullmatch(line)
        if not match or match.group(2) not in LISTED or match.group(2) in listed:
            raise NotVerified(f"{SUMS}: line {number} is not `SHA256  NAME` of a member a bundle has, once")
        listed[match.group(2)] = match.group(1)
    if not data.endswith(b"\n") or MANIFEST not in listed:
        raise NotVerified(f"{SUMS}: does not list {MANIFEST} (or its last line is cut)")
    return listed


def make(folder: str | Path, key: str | Path, output: str | Path, now: dt.datetime | None = None) -> dict:
    """Write the signed bundle of the report folder to `output`; returns its manifest."""
    folder = Path(folder)
    folder_fd = _open_folder(folder)
    try:
        members = {name: _read_inside(folder_fd, folder, name) for name in (*RUN_FILES, INVENTORY)}
    finally:
        os.close(folder_fd)
    for name in (*REQUIRED, INVENTORY):
        if members[name] is None:
            raise BundleError(f"{one_line(str(folder / name))}: no {name} there" + (
                " (the run keeps the inventory it used beside its report)" if name == INVENTORY else ""))
    members = {name: data for name, data in members.items() if data is not None}
    doc = _results(members["results.json"], one_line(str(folder / "results.json")))
    run = doc["run"]
    if sha256(members[INVENTORY]) != run["inventory"]["sha256"]:
        raise BundleError(f"{one_line(str(folder / INVENTORY))}: changed since the run (its sha256 is not the one "
                          "results.json recorded): not the inventory as used")
    try:
        _agree(members, doc, members["report.html"])
    except _Disagree as e:
        raise BundleError(f"{one_line(str(folder))}/{e}: refused") from None
    slot = DIGEST_SLOT.search(members["report.html"])
    files = {name: {"sha256": sha256(data), "size": len(data)} for name, data in members.items() if name != "report.html"}
    digest = contents_digest(files)
    members["report.html"] = with_digest(members["report.html"], digest)
    files["report.html"] = {"sha256": sha256(members["report.html"]), "size": len(members["report.html"])}
    manifest = {
        "format": FORMAT, "cluster": run["cluster"], "step": run.get("step"), "verdict": doc["verdict"]["decision"],
        "verdict_words": verdict_words(doc), "scope": scope_of(doc),
        "ticket": run.get("ticket") or "", "operator": run.get("operator") or "", "started": run["started"],
        "finished": run.get("finished"), "inventory": {"path": run["inventory"]["path"], "sha256": run["inventory"]["sha256"]},
        "rackproof_version": run.get("rackproof_version"), "bundled_by": rackproof.__version__,
        "bundled": (now or dt.datetime.now().astimezone()).isoformat(timespec="seconds"),
        # what the page held where the digest now is: verify puts it back to match results.json's sha256
        "page_slot": slot.group(2).decode(),
        "contents_digest": digest, "files": dict(sorted(files.items())),
    }
    members[MANIFEST] = (json.dumps(manifest, indent=1, ensure_ascii=False) + "\n").encode()
    members[SUMS] = sums(members)
    members[SIGNATURE] = sign(members[SUMS], key)
    write_tar(members, Path(output))
    return manifest


def sign(data: bytes, key: str | Path) -> bytes:
    """ssh-keygen's signature (armoured text) over `data` (SHA256SUMS) with the private key at `key`."""
    if not Path(key).is_file():
        raise BundleError(f"{one_line(str(key))}: no SSH private key there (--key)")
    with tempfile.TemporaryDirectory(prefix="rackproof-sign-") as tmp:
        # ssh-keygen -Y sign writes FILE.sig beside the file it signs: a private folder of ours
        target = Path(tmp, SUMS)
        target.write_bytes(data)
        result = _run(["ssh-keygen", "-q", "-Y", "sign", "-f", str(key), "-n", NAMESPACE, str(target)], b"", "sign")
        signature = Path(tmp, SIGNATURE)
        if result.returncode != 0 or not signature.is_file():
            raise BundleError(f"{one_line(str(key))}: ssh-keygen could not sign with it: {_said(result)}")
        return signature.read_bytes()


def write_tar(members: dict[str, bytes], output: Path) -> None:
    """The members in a new tar at `output` (never over an existing file), written whole or not at all."""
    if output.exists():
        raise BundleError(f"{one_line(str(output))} exists: not overwritten (another -o)")
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name in [*(n for n in MEMBERS if n in members), *sorted(n for n in members if n not in MEMBERS)]:
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(members[name]), 0o644, 0
            tar.addfile(info, io.BytesIO(members[name]))
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=".rackproof-bundle-", dir=output.parent)
        with os.fdopen(fd, "wb") as f:
            f.write(buffer.getvalue())
        os.link(tmp, output)   # fails if the name was taken meanwhile: never replaces a file
    except OSError as e:
        raise BundleError(f"{one_line(str(output))}: cannot be written: {e.strerror}") from None
    finally:
        if tmp:
            os.unlink(tmp)


def read_tar(path: str | Path) -> dict[str, bytes]:
    """The members of the bundle at `path`, checked for shape only (BundleError): regular files with
    flat names, each once, within the size and count bounds. A flat name a bundle does not have is
    read too, for verify to name it. Nothing is written to disk."""
    where = one_line(str(path))
    try:
        size = os.stat(path).st_size
        if not Path(path).is_file():
            raise BundleError(f"{where}: not a regular file")
        if size > MAX_BUNDLE_BYTES:
            raise BundleError(f"{where}: larger than {MAX_BUNDLE_BYTES >> 20} MiB: not a rackproof bundle")
        members: dict[str, bytes] = {}
        with tarfile.open(path, mode="r:") as tar:
            for count, info in enumerate(tar):
                name = one_line(info.name)
                if count >= MAX_MEMBERS:
                    raise BundleError(f"{where}: more than {MAX_MEMBERS} members: not a rackproof bundle")
                if not FLAT_NAME.fullmatch(info.name):
                    raise BundleError(f"{where}: member {name!r} is not a flat file name (a path or a link): refused")
                if not info.isreg():
                    raise BundleError(f"{where}: member {name} is not a regular file (a link or a device): refused")
                if info.name in members:
                    raise BundleError(f"{where}: member {name} appears twice: refused")
                if info.size > MAX_MEMBER_BYTES:
                    raise BundleError(f"{where}: member {name} is larger than {MAX_MEMBER_BYTES >> 20} MiB: refused")
                members[info.name] = tar.extractfile(info).read()
    except BundleError:
        raise
    except OSError as e:
        raise BundleError(f"{where}: cannot read it: {e.strerror or e}") from None
    except (tarfile.TarError, EOFError) as e:
        raise BundleError(f"{where}: not a readable tar ({one_line(str(e))}): not a rackproof bundle") from None
    for name in (SUMS, SIGNATURE):
        if name not in members:
            raise BundleError(f"{where}: no {name}: not a rackproof bundle (of format {FORMAT})")
    return members


def parse_manifest(data: bytes) -> dict:
    """The manifest's fields, checked (BundleError): a pure reader."""
    try:
        manifest = json.loads(data)
    except ValueError as e:
        raise BundleError(f"{MANIFEST}: not JSON ({one_line(str(e))})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise BundleError(f"{MANIFEST}: not a manifest of format {FORMAT}")
    files = manifest.get("files")
    strings = ("verdict", "verdict_words", "ticket", "operator", "cluster", "started", "contents_digest", "page_slot")
    if not isinstance(files, dict) or not isinstance(manifest.get("scope"), dict) or \
            not all(isinstance(manifest.get(k), str) for k in strings):
        raise BundleError(f"{MANIFEST}: misses its files, its scope or one of {', '.join(strings)}")
    for name, entry in files.items():
        if name not in LISTED[1:] or not isinstance(entry, dict) or not re.fullmatch(r"[0-9a-f]{64}", str(entry.get("sha256"))):
            raise BundleError(f"{MANIFEST}: its entry for {one_line(name)!r} is not a known member with a sha256")
    for name in (*REQUIRED, INVENTORY):
        if name not in files:
            raise BundleError(f"{MANIFEST}: lists no {name}")
    return manifest


def _signer(signed: bytes, signature: bytes, allowed_signers: Path) -> str:
    """The principal of `allowed_signers` whose key made `signature` over `signed`; NotVerified otherwise."""
    with tempfile.TemporaryDirectory(prefix="rackproof-verify-") as tmp:
        sig = Path(tmp, SIGNATURE)
        sig.write_bytes(signature)
        found = _run(["ssh-keygen", "-Y", "find-principals", "-s", str(sig), "-f", str(allowed_signers)], b"",
                     "find the signer")
        principals = found.stdout.decode(errors="replace").split()
        if found.returncode != 0 or not principals:
            raise NotVerified(f"{SIGNATURE}: not made by a key of {one_line(str(allowed_signers))} "
                              f"({_said(found)})")
        for principal in principals:
            checked = _run(["ssh-keygen", "-Y", "verify", "-f", str(allowed_signers), "-I", principal, "-n", NAMESPACE,
                            "-s", str(sig)], signed, "verify")
            if checked.returncode == 0:
                return one_line(principal)
        raise NotVerified(f"{SUMS}: the signature in {SIGNATURE} does not match it (changed after signing, or "
                          f"signed for another use than {NAMESPACE}): {_said(checked)}")


def verify(path: str | Path, allowed_signers: str | Path) -> Verified:
    """Check the bundle's signature (a key of `allowed_signers`), every member's sha256, and that the
    run's files agree with each other and with the manifest."""
    allowed = Path(allowed_signers)
    try:
        if not allowed.is_file() or not allowed.read_bytes().strip():
            raise BundleError(f"{one_line(str(allowed))}: no allowed signers there (ssh-keygen's allowed_signers "
                              "format: PRINCIPAL KEYTYPE KEY, one a line)")
    except OSError as e:
        raise BundleError(f"{one_line(str(allowed))}: cannot read it: {e.strerror}") from None
    members = read_tar(path)
    signer = _signer(members[SUMS], members[SIGNATURE], allowed)
    listed = parse_sums(members[SUMS])
    for name, data in members.items():
        if name in (SUMS, SIGNATURE):
            continue
        if name not in listed:
            raise NotVerified(f"{one_line(name)}: in the bundle but not in its signed {SUMS}")
        if sha256(data) != listed[name]:
            raise NotVerified(f"{name}: its sha256 differs from the signed {SUMS}'s: changed after signing")
    if missing := [n for n in listed if n not in members]:
        raise NotVerified(f"{missing[0]}: in the signed {SUMS} but not in the bundle")
    manifest = parse_manifest(members[MANIFEST])
    files = manifest["files"]
    if {n: e["sha256"] for n, e in files.items()} != {n: sha for n, sha in listed.items() if n != MANIFEST}:
        raise NotVerified(f"{MANIFEST}: its files are not the ones {SUMS} lists")
    if contents_digest(files) != manifest["contents_digest"]:
        raise NotVerified(f"{MANIFEST}: its contents digest is not the one its files give")
    results = _results(members["results.json"], "results.json")
    if results["run"]["inventory"]["sha256"] != files[INVENTORY]["sha256"]:
        raise NotVerified(f"{INVENTORY}: not the inventory the run used (results.json names another sha256)")
    decision = results["verdict"]["decision"]
    if decision != manifest["verdict"]:
        raise NotVerified(f"results.json: its verdict {one_line(decision)} is not the manifest's "
                          f"{one_line(manifest['verdict'])}")
    if manifest["verdict_words"] != verdict_words(results) or manifest["scope"] != scope_of(results):
        raise NotVerified(f"{MANIFEST}: its verdict words or scope are not the ones results.json gives")
    page = members["report.html"]
    slot = manifest["page_slot"].encode(errors="replace")
    if len(DIGEST_SLOT.findall(page)) != 1:
        raise NotVerified("report.html: has no bundle-digest slot: not the page the run wrote")
    page_as_run = DIGEST_SLOT.sub(lambda m: m.group(1) + slot + m.group(3), page)
    if with_digest(page_as_run, manifest["contents_digest"]) != page:
        raise NotVerified("report.html: does not show the bundle's contents digest")
    try:
        _agree(members, results, page_as_run)
    except _Disagree as e:
        raise NotVerified(str(e)) from None
    return Verified(one_line(manifest["ticket"]), signer, one_line(manifest["verdict_words"]),
                    one_line(manifest["cluster"]), one_line(manifest["started"]), manifest["scope"],
                    manifest["contents_digest"], sha256(members[MANIFEST]))
