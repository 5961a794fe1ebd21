"""A login's jobs as its user service manager shows them:
`systemctl --user -M LOGIN@ show -p Id -p Transient -p ActiveState -p RuntimeMaxUSec '*.service'`
(run as root: the suite's sudoers rule). One block of KEY=VALUE lines per unit, blank lines
between blocks, properties in systemctl's own order. A job started with `systemd-run --user`
is a transient service; RuntimeMaxUSec is a time span ("6h", "1min 30s") or "infinity".
"""

from __future__ import annotations

from dataclasses import dataclass

from . import ParseError
from rackproof.probes.probe import Probe

TOOL = "systemctl show"
UNLIMITED = "infinity"


@dataclass(frozen=True)
class UserUnit:
    id: str
    transient: bool
    active_state: str
    runtime_max: str        # "6h", or "infinity": no RuntimeMaxSec

    @property
    def running_job(self) -> bool:
        """A job someone started with systemd-run (not a unit of the login's own setup)."""
        return self.transient and self.active_state in ("active", "activating", "reloading")


_KEYS = ("Id", "Transient", "ActiveState", "RuntimeMaxUSec")


def parse_systemctl_show(text: str) -> tuple[UserUnit, ...]:
    units, block = [], {}

    def close():
        if not block:
            return
        missing = [k for k in _KEYS if k not in block]
        if missing:
            raise ParseError(TOOL, f"a unit without {', '.join(missing)}: {block}", text)
        if block["Transient"] not in ("yes", "no"):
            raise ParseError(TOOL, f"Transient is yes or no, not {block['Transient'][:40]!r}", text)
        units.append(UserUnit(block["Id"], block["Transient"] == "yes", block["ActiveState"], block["RuntimeMaxUSec"]))
        block.clear()

    for line in text.splitlines():
        if not line.strip():
            close()
            continue
        key, sep, value = line.partition("=")
        if not sep or not key or " " in key:
            raise ParseError(TOOL, f"not KEY=VALUE: {line[:200]!r}", text)
        if key in block:
            raise ParseError(TOOL, f"{key} twice in one unit (a blank line is missing)", text)
        block[key] = value
    close()
    return tuple(units)


USER_JOBS = Probe("systemctl --user show", "a login's services and their RuntimeMaxSec (its user manager)",
                  "sudo -n systemctl --user -M {login}@ show -p Id -p Transient -p ActiveState -p RuntimeMaxUSec "
                  "'*.service'", parse_systemctl_show,
                  seen_on=("RHEL",),
                  unseen="no real output of these four properties was found (this machine's systemd cannot run "
                         "without being PID 1): the layout, service properties then the unit's in D-Bus order, is "
                         "RHEL's (insights-core fixtures)")
