"""The rack's own life while the suite runs: an sshd restarting, a node rebooting. Named as what
it is, never a verdict about a healthy rack (docs/checks.md, "The rack's own life").

- A fresh connect is tried again with backoff through the connect budget (rackproof.nodes.remote);
  the SSH mesh's own connects that sshd refused or shed are asked again the same way (`mesh_again`).
- Before the verdict (`settle`), a node declared unreachable is tried once more: if it answers,
  what the run measured of it is measured again then (a late node). Every node's boot id is
  known on each of its connections (Remote.boots); a node whose boot id changed during the run
  rebooted, and what was measured of it before is marked (Rebooted), never judged.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

from rackproof.nodes.host import Host
from rackproof.probes import ParseError
from rackproof.probes.boot import BOOT_ID, parse_boot_id
from rackproof.probes.sshcheck import CONNECTION_CLOSED, CONNECTION_REFUSED, NO_ROUTE, TIMED_OUT, classify_ssh_failure
from rackproof.nodes.remote import CONNECT_BACKOFF, Evidence, EvidenceLog, NodeUnreachable, Rebooted, Result
from rackproof.nodes.together import Part, at_once

# what an `ssh` between nodes meets while a peer's sshd restarts or the peer reboots
PEER_CONNECT_FAILURES = (CONNECTION_REFUSED, CONNECTION_CLOSED, NO_ROUTE, TIMED_OUT)


@dataclass(frozen=True)
class Reboot:
    node: str
    after: float     # the old boot was last seen answering then
    at: float        # the connection that found the new boot id was made then
    old: str
    new: str

    def between(self) -> tuple[str, str]:
        return _clock(self.after), _clock(self.at)

    def describe(self) -> str:
        return (f"{self.node} rebooted between {_clock(self.after)} and {_clock(self.at)} "
                f"(boot id {self.old[:8]}… then {self.new[:8]}…)")


def reboots(host: Host) -> list[Reboot]:
    """The node's reboots this run, from the boot ids its connections read."""
    known = []
    for text, at in host.remote.boots:
        try:
            known.append((parse_boot_id(text), at))
        except ParseError:   # an answer that is no boot id says nothing either way
            continue
    return [Reboot(host.name, ta, tb, a, b) for (a, ta), (b, tb) in zip(known, known[1:]) if a != b]


def mesh_again(rows: dict[tuple[str, str], Part[Result]], ask: Callable[[tuple[str, str]], Result], budget: float,
               log: EvidenceLog, waits=CONNECT_BACKOFF, gone: Callable[[str], bool] = lambda node: False
               ) -> dict[tuple[str, str], Part[Result]]:
    """The mesh's rows whose ssh met a peer's sshd restarting or the peer away (refused, closed
    before login, no route, timed out), asked again (ask(pair)) with backoff, all at once, while
    the connect budget lasts; each attempt kept as the row's evidence, its last answer the row.
    A peer the controller itself found unreachable (gone(peer): its budget spent) is not waited
    for again."""
    rows = dict(rows)
    first, waits = time.monotonic(), iter(waits)
    wait = next(waits)
    while True:
        failing = [pair for pair, part in rows.items()
                   if part.error is None and _peer_away(part.value) and not gone(pair[1])]
        if not failing or time.monotonic() - first + wait > budget:
            return rows
        time.sleep(wait)
        wait = next(waits, wait)
        asked = at_once(failing, ask, log, workers=len(failing))
        for pair, part in asked.items():
            before = rows[pair]
            rows[pair] = Part(part.value if part.error is None else before.value, None,
                              [*before.evidence, *part.evidence])


def _peer_away(result: Result) -> bool:
    return classify_ssh_failure(result.exit_status, result.stderr) in PEER_CONNECT_FAILURES


def settle(hosts: dict[str, Host], names: list[str], log: EvidenceLog, said: Callable[[str], None]
           ) -> tuple[dict[str, list[Evidence]], dict[str, Reboot]]:
    """Before the verdict: ({late node: the evidence of the attempt it answered}, {node: its last
    reboot}). Every node is asked its boot id once more, all at once: a node declared unreachable
    with one connect attempt (its budget was spent), the others on their connection (a fresh one
    reads the boot id it finds). A node the run never reached out to is left alone."""
    down = {name for name in names if hosts[name].remote.unreachable is not None}
    names = [name for name in names if name in down or hosts[name].remote.boots]

    def again(name: str) -> None:
        remote = hosts[name].remote
        if name in down:
            with remote.tried_once_more():
                remote.run(remote.boot_command or BOOT_ID.command().line, BOOT_ID.timeout, True, BOOT_ID.name)
        elif remote.boot_command:   # its connection may have outlived a reboot: what it reads now counts
            answer = remote.run(remote.boot_command, BOOT_ID.timeout, True, BOOT_ID.name)
            if answer.ok and answer.stdout.strip() != remote.boots[-1][0]:
                remote.boots.append((answer.stdout.strip(), time.time()))

    asked = at_once(names, again, log, workers=len(names))
    late = {}
    for name in sorted(down):
        if asked[name].error is None:
            late[name] = [_noted(ev, f"tried again before the verdict: it answers (a late node; declared unreachable "
                                     f"in this run: {hosts[name].remote.unreachable or 'see its checks'})")
                          for ev in asked[name].evidence]
            said(f"rackproof: {name} answers now (a late node): what it was to measure is measured now")
    booted = {}
    for name in names:
        if found := reboots(hosts[name]):
            booted[name] = found[-1]
            said(f"rackproof: {found[-1].describe()}: what was measured of it before is not judged")
    return late, booted


def _noted(ev: Evidence, note: str) -> Evidence:
    ev.note = f"{ev.note}; {note}" if ev.note else note
    return ev


def concerns(node: str, value: object, part: Part) -> bool:
    """Whether a target's part is about `node`: the node is in the target, or a command of the
    part ran on it."""
    return node in _names_in(value) or any(ev.node == node for ev in part.evidence)


def unreached(part: Part) -> str | None:
    """The node whose being unreachable is the part's answer, if that is its answer."""
    return part.error.node if isinstance(part.error, NodeUnreachable) else None


def before_reboot(reboot: Reboot, what: str, part: Part) -> Part:
    """The part, marked when it was measured before the node's reboot (a command of it, or an
    answer it recalled, ended before the new boot's connection was made): Rebooted, its evidence
    kept. A command that ran again on the new connection ended after it."""
    if not any(ev.started + ev.duration < reboot.at for ev in part.evidence):
        return part
    # the old boot answered until the last command of the node before the reboot ended
    ended = max((ev.started + ev.duration for ev in part.evidence if ev.node == reboot.node
                 and ev.started + ev.duration < reboot.at and ev.exit_status is not None), default=reboot.after)
    after = min(max(reboot.after, ended), reboot.at)
    marked = Reboot(reboot.node, after, reboot.at, reboot.old, reboot.new)
    return Part(None, Rebooted(reboot.node, what, marked.between()), part.evidence)


def _names_in(value: object) -> set[str]:
    if isinstance(value, str):
        return {value}
    if isinstance(value, (tuple, list)):
        return set().union(*map(_names_in, value)) if value else set()
    return set()


def _clock(at: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(at))

