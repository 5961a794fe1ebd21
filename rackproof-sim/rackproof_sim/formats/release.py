"""`uname -r` as a node prints it (parsed by rackproof.probes.release): the release alone on a line."""

from __future__ import annotations


def render_kernel(release: str) -> str:
    return f"{release}\n"
