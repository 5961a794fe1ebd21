"""One file to attach to a change-control ticket: a run's report folder packed with a manifest of
every file's sha256, signed with the operator's SSH key (`ssh-keygen -Y sign`), and its check.

The bundle is a plain (uncompressed) tar of flat members:

    manifest.json       what the run was (verdict, ticket, operator, inventory sha, ...) and every
                        other member's sha256 and size
    manifest.json.sig   ssh-keygen's signature over manifest.json, namespace NAMESPACE
    report.html, results.json, junit.xml, pytest-html.html, inventory.toml

Uncompressed so that a changed byte stays inside the member it changed: the check names that
member (in a compressed stream it would only break the stream).

report.html cannot show the digest of a manifest that covers report.html. The bundle therefore
writes into the run's page (in the element the page keeps for it) the *contents digest*: the
sha256 of the manifest's list of every member except report.html. `verify` prints the same digest,
so a printed page is matched to its bundle; the signed manifest covers the page itself.

A bundle is hostile input: it is never extracted; members are read into memory only when they are
regular files with a known flat name, once each, within size bounds.

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
from rackproof.safetext import one_line

NAMESPACE = "rackproof-bundle@rackproof"   # ssh-keygen -n: a signature made for this use only
FORMAT = "rackproof-bundle/1"
MANIFEST, SIGNATURE = "manifest.json", "manifest.json.sig"
INVENTORY = "inventory.toml"
# the run's files (name in the report folder = name in the bundle); report.html and results.json must be there
RUN_FILES = ("report.html", "results.json", "junit.xml", "pytest-html.html")
REQUIRED = ("report.html", "results.json")
MEMBERS = (MANIFEST, SIGNATURE, *RUN_FILES, INVENTORY)
MAX_MEMBER_BYTES = 256 << 20      # results.json of a 32-node run with its evidence is tens of MiB
MAX_BUNDLE_BYTES = 1 << 30
SSH_KEYGEN_TIMEOUT_S = 30
# the element of report.html that holds the contents digest (rackproof.report.html writes it)
DIGEST_SLOT = re.compile(rb'(<td id="bundle-digest">)(.*?)(</td>)', re.S)


class BundleError(Exception):
    """A bundle (or what goes into one) that cannot be made or read: one line naming what and where."""


class NotVerified(Exception):
    """A readable bundle whose signature or contents do not hold: one line naming the member."""


@dataclass(frozen=True)
class Verified:
    ticket: str
    signer: str
    verdict: str
    cluster: str
    step: int | None
    started: str
    contents_digest: str
    manifest_sha256: str

    def __str__(self) -> str:
        return (f"verified: ticket {self.ticket or '(none given)'}, signed by {self.signer}, verdict {self.verdict} "
                f"({self.cluster}, step {self.step}, run {self.started}; contents digest {self.contents_digest}, "
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
                                            "folder's path")
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
    except (ValueError, TypeError, KeyError):
        raise BundleError(f"{where}: not a rackproof results.json") from None
    if not all(isinstance(field, str) for field in needed):
        raise BundleError(f"{where}: not a rackproof results.json")
    return doc


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
    files = {name: {"sha256": sha256(data), "size": len(data)} for name, data in members.items() if name != "report.html"}
    digest = contents_digest(files)
    members["report.html"] = with_digest(members["report.html"], digest)
    files["report.html"] = {"sha256": sha256(members["report.html"]), "size": len(members["report.html"])}
    manifest = {
        "format": FORMAT, "cluster": run["cluster"], "step": run.get("step"), "verdict": doc["verdict"]["decision"],
        "ticket": run.get("ticket") or "", "operator": run.get("operator") or "", "started": run["started"],
        "finished": run.get("finished"), "inventory": {"path": run["inventory"]["path"], "sha256": run["inventory"]["sha256"]},
        "rackproof_version": run.get("rackproof_version"), "bundled_by": rackproof.__version__,
        "bundled": (now or dt.datetime.now().astimezone()).isoformat(timespec="seconds"),
        "contents_digest": digest, "files": dict(sorted(files.items())),
    }
    members[MANIFEST] = (json.dumps(manifest, indent=1, ensure_ascii=False) + "\n").encode()
    members[SIGNATURE] = sign(members[MANIFEST], key)
    write_tar(members, Path(output))
    return manifest


def sign(manifest: bytes, key: str | Path) -> bytes:
    """ssh-keygen's signature (armoured text) over the manifest with the private key at `key`."""
    if not Path(key).is_file():
        raise BundleError(f"{one_line(str(key))}: no SSH private key there (--key)")
    with tempfile.TemporaryDirectory(prefix="rackproof-sign-") as tmp:
        # ssh-keygen -Y sign writes FILE.sig beside the file it signs: a private folder of ours
        target = Path(tmp, MANIFEST)
        target.write_bytes(manifest)
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
        for name in MEMBERS:
            if name in members:
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
    the known flat names, each once, within the size bounds. Nothing is written to disk."""
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
                if count >= len(MEMBERS):
                    raise BundleError(f"{where}: more than {len(MEMBERS)} members: not a rackproof bundle")
                if info.name not in MEMBERS:
                    raise BundleError(f"{where}: member {name!r} is not one a bundle has (a path, a link or an "
                                      "unknown file): refused")
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
    for name in (MANIFEST, SIGNATURE):
        if name not in members:
            raise BundleError(f"{where}: no {name}: not a rackproof bundle")
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
    strings = ("verdict", "ticket", "operator", "cluster", "started", "contents_digest")
    if not isinstance(files, dict) or not all(isinstance(manifest.get(k), str) for k in strings):
        raise BundleError(f"{MANIFEST}: misses its files or one of {', '.join(strings)}")
    for name, entry in files.items():
        if name not in MEMBERS[2:] or not isinstance(entry, dict) or not re.fullmatch(r"[0-9a-f]{64}", str(entry.get("sha256"))):
            raise BundleError(f"{MANIFEST}: its entry for {one_line(name)!r} is not a known member with a sha256")
    for name in (*REQUIRED, INVENTORY):
        if name not in files:
            raise BundleError(f"{MANIFEST}: lists no {name}")
    return manifest


def _signer(manifest: bytes, signature: bytes, allowed_signers: Path) -> str:
    """The principal of `allowed_signers` whose key made `signature` over `manifest`; NotVerified otherwise."""
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
                            "-s", str(sig)], manifest, "verify")
            if checked.returncode == 0:
                return one_line(principal)
        raise NotVerified(f"{MANIFEST}: the signature in {SIGNATURE} does not match it (changed after signing, or "
                          f"signed for another use than {NAMESPACE}): {_said(checked)}")


def verify(path: str | Path, allowed_signers: str | Path) -> Verified:
    """Check the bundle's signature (a key of `allowed_signers`) and every member's sha256."""
    allowed = Path(allowed_signers)
    try:
        if not allowed.is_file() or not allowed.read_bytes().strip():
            raise BundleError(f"{one_line(str(allowed))}: no allowed signers there (ssh-keygen's allowed_signers "
                              "format: PRINCIPAL KEYTYPE KEY, one a line)")
    except OSError as e:
        raise BundleError(f"{one_line(str(allowed))}: cannot read it: {e.strerror}") from None
    members = read_tar(path)
    signer = _signer(members[MANIFEST], members[SIGNATURE], allowed)
    manifest = parse_manifest(members[MANIFEST])
    files = manifest["files"]
    for name, data in members.items():
        if name in (MANIFEST, SIGNATURE):
            continue
        if name not in files:
            raise NotVerified(f"{name}: in the bundle but not in its signed manifest")
        if sha256(data) != files[name]["sha256"]:
            raise NotVerified(f"{name}: its sha256 differs from the signed manifest's: changed after signing")
    if missing := [n for n in files if n not in members]:
        raise NotVerified(f"{missing[0]}: in the signed manifest but not in the bundle")
    if contents_digest(files) != manifest["contents_digest"]:
        raise NotVerified(f"{MANIFEST}: its contents digest is not the one its files give")
    results = _results(members["results.json"], "results.json")
    if results["run"]["inventory"]["sha256"] != files[INVENTORY]["sha256"]:
        raise NotVerified(f"{INVENTORY}: not the inventory the run used (results.json names another sha256)")
    decision = results["verdict"]["decision"]
    if decision != manifest["verdict"]:
        raise NotVerified(f"results.json: its verdict {one_line(decision)} is not the manifest's {manifest['verdict']}")
    return Verified(one_line(manifest["ticket"]), signer, one_line(manifest["verdict"]), one_line(manifest["cluster"]),
                    manifest.get("step"), one_line(manifest["started"]), manifest["contents_digest"],
                    sha256(members[MANIFEST]))
