"""`sudo -n -l -U LOGIN` -> what LOGIN may run with sudo (the chapter's WARNING: nobody who
holds a slice gets sudo). Asking needs the `list` right in sudoers for the suite's login.

    User mira is not allowed to run sudo on thor-3.

    Matching Defaults entries for mira on thor-3:
        env_reset, mail_badpass, ...

    User mira may run the following commands on thor-3:
        (ALL : ALL) ALL
"""

from __future__ import annotations

import re

from . import ParseError
from rackproof.probes.probe import Probe

TOOL = "sudo -l"

_NOT_ALLOWED = re.compile(r"User \S+ is not allowed to run sudo on \S+\.")
_MAY_RUN = re.compile(r"User \S+ may run the following commands on \S+:")


def parse_sudo_list(text: str) -> tuple[str, ...]:
    """The rules LOGIN may use, as sudo prints them ("(ALL : ALL) ALL"); () when none."""
    lines = text.splitlines()
    if any(_NOT_ALLOWED.fullmatch(line.strip()) for line in lines):
        return ()
    start = next((k for k, line in enumerate(lines) if _MAY_RUN.fullmatch(line.strip())), None)
    if start is None:
        raise ParseError(TOOL, "neither 'is not allowed to run sudo' nor 'may run the following commands'", text)
    rules = []
    for line in lines[start + 1:]:
        if not line.strip():
            break
        if not line.startswith((" ", "\t")):
            raise ParseError(TOOL, f"a rule line is indented: {line[:200]!r}", text)
        rules.append(line.strip())
    return tuple(rules)


SUDO_RULES = Probe("sudo -l -U", "what a login may run with sudo (needs the `list` right)",
                   "sudo -n -l -U {login}", parse_sudo_list,
                   seen_on=("Ubuntu 16.04", "Debian 12"),
                   unseen="no capture of a Jetson AGX Thor or a DGX Spark was found")
