"""`ps -eo pid=,args=` -> the running thor-tigress-agent's command line and its `--engine` routes.

The agent may run as a binary or as a script under an interpreter, so the program is looked
for among the first two words of each process; arguments come as `--flag value` or `--flag=value`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import islice
from pathlib import PurePosixPath

from . import ParseError
from rackproof.probes.probe import Probe

TOOL = "ps"
# ASCII digits, bounded: str.isdigit() also takes "²", which int() refuses, and int() refuses
# more than 4300 digits.
_PID = re.compile(r"[0-9]{1,10}")
# where the agent listens without --listen: its usage line, "thor-tigress-agent [--listen 127.0.0.1:8080]"
# (the Thor chapter)
DEFAULT_LISTEN = "127.0.0.1:8080"


@dataclass(frozen=True)
class AgentCommand:
    pid: int
    args: str
    listen: str | None
    engines: tuple[tuple[str, str], ...]   # (MODEL, HOST:PORT) in command-line order


def parse_agent_process(text: str, program: str = "thor-tigress-agent") -> AgentCommand | None:
    """The first process running `program`, or None when none does."""
    for line in text.splitlines():
        if program not in line:   # most lines, read at C speed
            continue
        pid, _, args = line.strip().partition(" ")
        if not _PID.fullmatch(pid):
            continue
        words = _words(args)
        first = list(islice(words, 2))   # the program: the rest of a line that is not it is never split
        if not any(PurePosixPath(w).name == program for w in first):
            continue
        options = _options(first + list(words))
        engines = []
        for value in options.get("--engine", []):
            model, sep, target = value.partition("=")
            if not sep or not model or ":" not in target:
                raise ParseError(TOOL, f"--engine {value!r} is not MODEL=HOST:PORT", text)
            engines.append((model, target))
        listen = options.get("--listen", [None])[-1]
        return AgentCommand(int(pid), args.strip(), listen, tuple(engines))
    return None


# One POSIX shell word, as shlex.split (posix mode, no comments) reads it: unquoted characters,
# 'single-quoted' text, "double-quoted" text where a backslash escapes only " and \, and a
# backslash escaping any character. One character per repetition: no two ways to split a run.
_WORD = re.compile(r"""(?:[^ \t\r\n'"\\]|'[^']*'|"(?:[^"\\]|\\.)*"|\\.)+""", re.S)
# what is left of a line without its words: blanks, unless a quote is unclosed or a backslash ends it
_NOT_BLANK = re.compile(r"[^ \t\r\n]")
_QUOTING = re.compile(r"""['"\\]""")
_DOUBLE_QUOTED_ESCAPE = re.compile(r'\\([\\"])')
_PART = re.compile(r"""'([^']*)'|"((?:[^"\\]|\\.)*)"|\\(.)|([^'"\\]+)""", re.S)


def _words(args: str) -> Iterator[str]:
    """shlex.split(args) one word at a time, in linear time (shlex builds each word a character
    at a time: quadratic in a long word; and a Python loop per word costs seconds on a line of a
    million); a line it cannot split (an unclosed quote, a trailing backslash) is split at
    whitespace instead."""
    if _NOT_BLANK.search(_WORD.sub("", args)):   # a word is the longest run: two never touch
        return iter(args.split())
    return (_unquoted_word(m[0]) for m in _WORD.finditer(args))


def _unquoted_word(word: str) -> str:
    return "".join(map(_unquoted, _PART.finditer(word))) if _QUOTING.search(word) else word


def _unquoted(part: re.Match) -> str:
    text = part[part.lastindex]   # the one group of the alternative that matched
    return _DOUBLE_QUOTED_ESCAPE.sub(r"\1", text) if part.lastindex == 2 else text


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


AGENT_PROCESS = Probe("ps", "the agent's process and its --engine arguments", "ps -eo pid=,args=",
                  parse_agent_process, ("program",), seen_on=("RHEL 7", "Debian 12"),
                  unseen="of another machine only a RHEL 7 one (an insights-core fixture, some of its lines its "
                         "test authors' own); none of a Jetson AGX Thor or a DGX Spark was found")
