"""`sysctl KEY ...` -> {key: value}: kernel settings a change can alter (forwarding)."""

from __future__ import annotations

from . import ParseError
from rackproof.probes.probe import Probe

TOOL = "sysctl"

# a node that forwards between its cluster interface and another opens the cluster network
FORWARDING = ("net.ipv4.ip_forward", "net.ipv6.conf.all.forwarding")


def parse_sysctl(text: str) -> dict[str, str]:
    """`key = value` lines (sysctl's own format)."""
    values: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        key, sep, value = line.partition(" = ")
        if not sep or not key or any(c.isspace() for c in key):
            raise ParseError(TOOL, f"expected 'key = value', got {line[:200]!r}", text)
        values[key] = value.strip()
    return values


SYSCTL = Probe("sysctl", "kernel settings that a change can alter (IP forwarding)", f"sysctl {' '.join(FORWARDING)}",
               parse_sysctl,
               seen_on=("Ubuntu", "Debian 12"),
               unseen="no capture of a Jetson AGX Thor or a DGX Spark was found")
