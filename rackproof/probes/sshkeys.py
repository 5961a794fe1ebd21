"""`ssh-keygen -lf ~/.ssh/authorized_keys` -> the fingerprints of the keys a node accepts
(public facts: which keys may log in, never the keys themselves)."""

from __future__ import annotations

import re

from ._text import matched_lines
from rackproof.probes.probe import Probe

TOOL = "ssh-keygen"

# "256 SHA256:EbCd... nvidia@thor-1 (ED25519)"; the comment may be empty or hold spaces
_LINE = re.compile(r"(?P<bits>[0-9]{1,5}) (?P<fingerprint>SHA256:[A-Za-z0-9+/]{43}) ?(?P<comment>.*) "
                   r"\((?P<type>[A-Z0-9-]+)\)")


def parse_key_fingerprints(text: str) -> tuple[str, ...]:
    """`SHA256:... (TYPE) comment` per key. No output (ssh-keygen exits 255 for a missing or
    empty file) is no key."""
    return tuple(f"{match['fingerprint']} ({match['type']}) {match['comment']}".rstrip()
                 for match in matched_lines(TOOL, _LINE, text, "'BITS SHA256:... COMMENT (TYPE)'"))


# exit 255: no such file, or no key in it (its stderr says which)
AUTHORIZED_KEYS = Probe("ssh-keygen -lf", "fingerprints of the keys in the login's authorized_keys",
                        "ssh-keygen -lf ~/.ssh/authorized_keys", parse_key_fingerprints, ok_exit=(0, 255),
                        seen_on=("RHEL", "Debian 12"),
                        unseen="no capture of a Jetson AGX Thor or a DGX Spark was found")
