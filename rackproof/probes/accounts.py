"""Logins on a node: `getent passwd LOGIN` (does it exist, where is its home) and
`ps -eo user:32=,pid=,comm=` (whose processes run there)."""

from __future__ import annotations

from dataclasses import dataclass

from . import ParseError
from ._text import int_value
from rackproof.probes.probe import Probe

TOOL = "accounts"


@dataclass(frozen=True)
class Account:
    login: str
    uid: int
    home: str


def parse_passwd(text: str) -> Account | None:
    """One passwd line (name:x:uid:gid:gecos:home:shell); None when getent found nothing."""
    line = text.strip()
    if not line:
        return None
    fields = line.split(":")
    if "\n" in line or len(fields) != 7:
        raise ParseError(TOOL, f"not one passwd entry of 7 fields: {line[:200]!r}", text)
    return Account(fields[0], int_value(TOOL, fields[2], "uid", text), fields[5])


@dataclass(frozen=True)
class Process:
    user: str
    pid: int
    command: str


def parse_processes(text: str) -> tuple[Process, ...]:
    rows = []
    for line in text.splitlines():
        fields = line.split(None, 2)
        if not fields:
            continue
        if len(fields) != 3:
            raise ParseError(TOOL, f"not 'USER PID COMMAND': {line[:200]!r}", text)
        rows.append(Process(fields[0], int_value(TOOL, fields[1], "pid", text), fields[2]))
    return tuple(rows)


PASSWD = Probe("getent passwd", "whether a login exists on the node, and its home", "getent passwd {login}",
               parse_passwd, ok_exit=(0, 2), once=True, seen_on=("Ubuntu 24.04", "Debian 12"),
               unseen="no real output of a Jetson AGX Thor or a DGX Spark was found; glibc prints the entry as "
                      "stored, alike on every glibc distribution")
PROCESS_OWNERS = Probe("ps owners", "every process on the node and its owner", "ps -eo user:32=,pid=,comm=", parse_processes,
                  seen_on=("Kubernetes pod", "RHEL", "Debian 12"),
                  unseen="others' outputs were of `ps -eo user,pid,comm`, with the header this probe leaves out; "
                         "none of a Jetson AGX Thor or a DGX Spark was found")
