"""Recorded answers instead of a live rack: `--record DIR` writes them, `--replay DIR` reads them.

A recording is one JSON file per node (`DIR/<node>.json`: a list of
{command, exit_status, stdout, stderr}) plus the inventory it was made with
(`DIR/cluster.toml`). Commands are matched by a key in which incidental arguments
(ports, durations, temp names) are masked, so a recording stays valid when they
change. A recording can inherit another (`DIR/replay.json`: {"base": "../other"})
and hold only the answers that differ, which is how a fault is recorded.
A node recorded as unreachable is an entry {"unreachable": "reason"}.
"""

from __future__ import annotations

import fcntl
import json
import re
from pathlib import Path

from rackproof.nodes.http import HttpRequest, HttpResponse
from rackproof.nodes.remote import CommandTimeout, NodeUnreachable, Result, Transport
from rackproof.inventory.userinput import read_regular_file

# a recording's file is read whole: larger than any real one (thor5's largest is 0.3 MB)
MAX_FILE_BYTES = 64 << 20

# option value or name pattern -> mask; options whose values are incidental to the check
_INCIDENTAL = [
    (re.compile(r"(?<=\s)(-p|--port|--cport|-t|--time|-D|--duration|-W|--timeout|-i|--interval"
                r"|-o ConnectTimeout=|ConnectTimeout=)\s*\d+(\.\d+)?"), r"\1 <n>"),
    (re.compile(r"/tmp/[\w.@-]+"), "<tmp>"),
    (re.compile(r"\bkill (-\w+ )?\d+"), r"kill \1<pid>"),
    (re.compile(r"sport = :\d+"), "sport = :<port>"),
    # a poll's count and interval (a server's start)
    (re.compile(r"\b(seq|sleep) \d+(\.\d+)?"), r"\1 <n>"),
    (re.compile(r"rackproof-section-[0-9a-f]{16} "), "rackproof-section-<nonce> "),
]
# a batch's section markers carry a nonce of their own (rackproof.nodes.host): an answer is replayed
# with the markers of the command asked now
_NONCE = re.compile(r"rackproof-section-[0-9a-f]{16}")


class ReplayError(Exception):
    pass


# the C locale every command runs in (rackproof.probes.probe): once for the line, or before a tool as
# recordings made before that hold it; how a command runs, not which, so never part of its key
_LOCALE = re.compile(r"^export LC_ALL=C; |(?<![^\s;|&(])LC_ALL=C ")


def command_key(command: str) -> str:
    key = _LOCALE.sub("", " ".join(command.split()))
    for pattern, mask in _INCIDENTAL:
        key = pattern.sub(mask, key)
    return key


def _read_dir(directory: Path, chain: list[Path]) -> dict[str, dict[str, dict]]:
    """Answers of a recording and the ones it inherits; `chain` collects the directories."""
    directory = directory.resolve()
    if directory in chain:
        raise ReplayError(f"{directory}: replay.json inherits in a circle")
    chain.append(directory)
    answers: dict[str, dict[str, dict]] = {}
    meta = directory / "replay.json"
    if meta.exists():
        inherits = _json(meta)
        if not isinstance(inherits, dict) or not isinstance(inherits.get("base", ""), str):
            raise ReplayError(f'{meta}: not {{"base": "../other-recording"}}')
        if inherits.get("base"):
            answers = _read_dir(directory / inherits["base"], chain)
    for path in sorted(directory.glob("*.json")):
        if path.name == "replay.json":
            continue
        entries = _json(path)
        node = answers.setdefault(path.stem, {})
        if isinstance(entries, dict) and "unreachable" in entries:
            node.clear()
            node["<unreachable>"] = entries
            continue
        node.pop("<unreachable>", None)
        if not isinstance(entries, list) or not all(isinstance(e, dict) and isinstance(e.get("command"), str)
                                                    for e in entries):
            raise ReplayError(f"{path}: not a list of answers ({{command, exit_status, stdout, stderr}})")
        for entry in entries:
            node[command_key(entry["command"])] = entry
    return answers


def _json(path: Path):
    """A recording's file, read only if it is a regular file (a FIFO would wait for a writer
    forever) of a sane size."""
    try:
        data = read_regular_file(path, MAX_FILE_BYTES)
    except OSError as e:
        raise ReplayError(f"{path}: {e.strerror}") from None
    if len(data) > MAX_FILE_BYTES:
        raise ReplayError(f"{path}: larger than {MAX_FILE_BYTES >> 20} MiB, not a recording")
    try:
        return json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ReplayError(f"{path}: not valid JSON ({e})") from None


class Recording:
    def __init__(self, directory: str | Path):
        self.directory = Path(directory)
        if not self.directory.is_dir():
            raise ReplayError(f"{self.directory}: no such recording directory")
        self.chain: list[Path] = []
        self.answers = _read_dir(self.directory, self.chain)

    @property
    def inventory_path(self) -> Path:
        """The recording's own cluster.toml, else the one of the recording it inherits."""
        return next((d / "cluster.toml" for d in self.chain if (d / "cluster.toml").exists()),
                    self.directory / "cluster.toml")


class ReplayTransport:
    def __init__(self, node: str, recording: Recording):
        self.node = node
        self.answers = recording.answers.get(node, {})

    def _answer(self, command: str) -> dict:
        if "<unreachable>" in self.answers:
            raise NodeUnreachable(self.node, self.answers["<unreachable>"]["unreachable"])
        entry = self.answers.get(command_key(command))
        if entry is None:
            raise ReplayError(f"the recording has no answer from {self.node} for `{command_key(command)}`")
        if entry.get("timed_out"):
            raise TimeoutError(command)
        return entry

    def execute(self, command: str, timeout: float, repeatable: bool = False) -> Result:
        try:
            entry = self._answer(command)
        except TimeoutError:
            raise CommandTimeout(self.node, command, timeout) from None
        stdout, now, then = entry.get("stdout", ""), _NONCE.search(command), _NONCE.search(entry["command"])
        if now and then:
            stdout = stdout.replace(then[0], now[0])
        return Result(command, entry["exit_status"], stdout, entry.get("stderr", ""), entry.get("duration", 0.0))

    def http(self, request: HttpRequest, timeout: float) -> HttpResponse:
        entry = self._answer(request.describe())
        return HttpResponse(entry["exit_status"], entry.get("stdout", ""), entry.get("first_byte_s"),
                            entry.get("duration", 0.0), entry.get("stopped"))

    def close(self) -> None:
        pass


class RecordingTransport:
    """Wraps a live transport and appends each answer to DIR/<node>.json."""

    def __init__(self, inner: Transport, node: str, directory: str | Path, redact=lambda text: text):
        self.inner, self.node, self.redact = inner, node, redact
        self.path = Path(directory) / f"{node}.json"
        self.path.parent.mkdir(parents=True, exist_ok=True)

    def _append(self, entry: dict) -> None:
        # xdist workers record into the same files: lock across processes
        with open(self.path.parent / ".record.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            entries = json.loads(self.path.read_text()) if self.path.exists() else []
            entries = [e for e in entries if command_key(e["command"]) != command_key(entry["command"])]
            self.path.write_text(json.dumps(entries + [entry], indent=1) + "\n")

    def _record(self, what: str, call):
        try:
            answer = call()
        except NodeUnreachable as e:
            self.path.write_text(json.dumps({"unreachable": e.reason}) + "\n")
            raise
        except (CommandTimeout, TimeoutError):
            self._append({"command": what, "timed_out": True})
            raise
        return answer

    def execute(self, command: str, timeout: float, repeatable: bool = False) -> Result:
        result = self._record(command, lambda: self.inner.execute(command, timeout, repeatable))
        self._append({"command": command, "exit_status": result.exit_status, "stdout": self.redact(result.stdout),
                      "stderr": self.redact(result.stderr), "duration": round(result.duration, 3)})
        return result

    def http(self, request: HttpRequest, timeout: float) -> HttpResponse:
        response = self._record(request.describe(), lambda: self.inner.http(request, timeout))
        self._append({"command": request.describe(), "exit_status": response.status,
                      "stdout": self.redact(response.text), "first_byte_s": response.first_byte_s,
                      "duration": round(response.duration_s, 3),
                      **({"stopped": response.stopped} if response.stopped else {})})
        return response

    def close(self) -> None:
        self.inner.close()
