"""The releases a node runs below its packages: its kernel (`uname -r`) and its system firmware's
version (`/sys/class/dmi/id/bios_version`: a DGX Spark's BIOS, a Jetson's UEFI, readable
without root). Each is one word on one line; a node without DMI tables has no such file, and
says so (cat's own words): a fact not readable there, never a version.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from . import ParseError
from rackproof.probes.probe import Probe

_WORD = re.compile(r"[\x21-\x7e]{1,120}")   # printable, no space: a release, never a sentence
_NO_FILE = re.compile(r"cat: (?P<path>\S{1,200}): (?P<why>No such file or directory|Permission denied)")


def parse_kernel(text: str) -> str:
    """The kernel's release, as `uname -r` prints it ("6.8.12-tegra", "6.11.0-1016-nvidia")."""
    answer = text.strip()
    if not _WORD.fullmatch(answer):
        raise ParseError("uname", "not one kernel release on one line", text)
    return answer


@dataclass(frozen=True)
class Firmware:
    version: str | None      # None: the node does not say (unread says why)
    unread: str = ""


def parse_bios_version(text: str) -> Firmware:
    """The firmware's version from DMI ("5.36_0ACUM018"), or why there is none to read."""
    answer = text.strip()
    if missing := _NO_FILE.fullmatch(answer):
        return Firmware(None, f"{missing['path']}: {missing['why'].lower()} (no DMI tables the login can read)")
    if not _WORD.fullmatch(answer):
        raise ParseError("bios_version", "not one firmware version on one line", text)
    return Firmware(answer)


KERNEL = Probe("uname -r", "the node's kernel release", "uname -r", parse_kernel, once=True,
               seen_on=("Debian 12",),
               unseen="no captured `uname -r` of a Jetson AGX Thor or a DGX Spark was found: their releases "
                      "(6.8.12-tegra, 6.11.0-1016-nvidia) are kept from a jtop report and a login banner")
BIOS = Probe("bios_version", "the node's system firmware (BIOS, UEFI) version, from DMI",
             "cat /sys/class/dmi/id/bios_version 2>&1", parse_bios_version, ok_exit=(0, 1), once=True,
             seen_on=("Debian 12",),
             unseen="no captured bios_version of a DGX Spark or a Jetson AGX Thor was found: the Spark's "
                    "'5.36_0ACUM018' is from a sosreport's DMI summary; a Jetson's UEFI sets it to its L4T "
                    "release (jetpack-nixos)")
