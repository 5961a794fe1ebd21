"""A container image in a node's Docker: `docker image inspect --format '{{.Id}}' IMAGE`, the
way sparkrun asks before a launch (its orchestration/primitives.py). The id is one line,
"sha256:" and 64 hex digits; an image the runtime does not hold is docker's "No such image"
error (the CLI's "Error: No such image: X", or the daemon's "Error response from daemon: No
such image: X"), read here with 2>&1.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from . import ParseError
from rackproof.probes.probe import Probe

TOOL = "docker"

_ID = re.compile(r"sha256:[0-9a-f]{64}")
_NO_SUCH_IMAGE = re.compile(r"Error(?: response from daemon)?: No such image: \S{1,300}")
_NO_COMMAND = re.compile(r".*\bdocker: (?:command )?not found")
_NO_ACCESS = re.compile(r"(?:Got )?permission denied while trying to connect to the Docker daemon socket\b[^\n]{0,500}",
                        re.IGNORECASE)


@dataclass(frozen=True)
class Image:
    id: str | None           # None: the runtime does not hold it
    unusable: str = ""       # why the login cannot ask Docker at all; "" when it could


def parse_image_id(text: str) -> Image:
    stripped = text.strip()
    if _ID.fullmatch(stripped):
        return Image(stripped)
    if _NO_SUCH_IMAGE.fullmatch(stripped):
        return Image(None)
    if _NO_COMMAND.fullmatch(stripped):
        return Image(None, "docker is not installed (not on the login's PATH)")
    if _NO_ACCESS.fullmatch(stripped):
        return Image(None, "the login may not use Docker: permission denied on the Docker socket (not in the "
                           "docker group)")
    raise ParseError(TOOL, "not an image id (sha256:...) nor docker's 'No such image'", text)


IMAGE_ID = Probe("docker image inspect", "whether the node's Docker holds a container image (its id)",
                 "docker image inspect --format '{{{{.Id}}}}' {image} 2>&1", parse_image_id, ok_exit=(0, 1, 127),
                 seen_on=("Ubuntu Docker 28.5.1", "Docker 28 API v1.51", "Docker 1.9.1"),
                 unseen="no output of a DGX Spark's Docker (DGX OS 7) was found; the words are Docker's own, "
                        "not the distribution's")
