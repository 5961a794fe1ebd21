"""`ps -eo pid=,args=` -> the running thor-tigress-agent's command line and its `--engine` routes.

The agent may run as a binary or as a script under an interpreter, so the program is looked
for among the first two words of each process; arguments come as `--flag value` or `--flag=value`.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import PurePosixPath

from . import ParseError
from rackproof.probe import Probe

TOOL = "ps"
# ASCII digits, bounded: str.isdigit() also takes "²", which int() refuses, and int() refuses
# more than 4300 digits.
_PID = re.compile(r"[0-9]{1,10}")


@dataclass(frozen=True)
class AgentCommand:
    pid: int
    args: str
    listen: str | None
    engines: tuple[tuple[str, str], ...]   # (MODEL, HOST:PORT) in command-line order


def parse_agent_process(text: str, program: str = "thor-tigress-agent") -> AgentCommand | None:
    """The first process running `program`, or None when none does."""
    for line in text.splitlines():
        pid, _, args = line.strip().partition(" ")
        if not _PID.fullmatch(pid):
            continue
        try:
            words = shlex.split(args)
        except ValueError:
            words = args.split()
        if not any(PurePosixPath(w).name == program for w in words[:2]):
            continue
        options = _options(words)
        engines = []
        for value in options.get("--engine", []):
            model, sep, target = value.partition("=")
            if not sep or not model or ":" not in target:
                raise ParseError(TOOL, f"--engine {value!r} is not MODEL=HOST:PORT", text)
            engines.append((model, target))
        listen = options.get("--listen", [None])[-1]
        return AgentCommand(int(pid), args.strip(), listen, tuple(engines))
    return None


def _options(words: list[str]) -> dict[str, list[str]]:
    options: dict[str, list[str]] = {}
    i = 0
    while i < len(words):
        word = words[i]
        if word.startswith("--"):
            name, eq, value = word.partition("=")
            if not eq and i + 1 < len(words) and not words[i + 1].startswith("--"):
                value, i = words[i + 1], i + 1
            options.setdefault(name, []).append(value)
        i += 1
    return options


PROCESSES = Probe("ps", "the agent's process and its --engine arguments", "ps -eo pid=,args=",
                  parse_agent_process, ("program",))
