"""`cat /proc/sys/kernel/random/boot_id` -> the node's boot id: a UUID the kernel draws at each
boot. Two answers that differ are two boots: the node rebooted in between."""

from __future__ import annotations

import re

from . import ParseError
from rackproof.probes.probe import Probe

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def parse_boot_id(text: str) -> str:
    """The one UUID line the kernel prints (lower case)."""
    answer = text.strip()
    if not _UUID.fullmatch(answer):
        raise ParseError("boot_id", "not one UUID line", text)
    return answer


BOOT_ID = Probe("boot id", "the node's boot id (new at each boot): what a connection measured belongs to that boot",
                "cat /proc/sys/kernel/random/boot_id", parse_boot_id, timeout=10, seen_on=("Debian 12",),
                unseen="one UUID the kernel draws: no capture of a Jetson AGX Thor or a DGX Spark was kept")
