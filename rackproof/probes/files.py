"""Configuration files a change can alter, read as data: /etc/hosts as its entries, and the
network and SSH configuration files as path, mode, owner, group and sha256 (never their
content: a NetworkManager connection can hold a Wi-Fi key).

A file only root may read is hashed with `sudo -n sha256sum` where the login may; otherwise its
hash is unknown (None), and a change to it shows in its mode, owner or group only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from . import ParseError
from ._text import matched_lines
from rackproof.probes.probe import Probe

TOOL = "config files"

# what netplan, NetworkManager and sshd read at start-up
CONFIG_PATHS = ("/etc/netplan/*.yaml", "/etc/NetworkManager/system-connections/*", "/etc/ssh/sshd_config",
                "/etc/ssh/sshd_config.d/*")

_LINE = re.compile(r"(?P<mode>[0-7]{3,4}) (?P<owner>\S+) (?P<group>\S+) (?P<sha256>[0-9a-f]{64}|-) (?P<path>/.*)")


@dataclass(frozen=True)
class FileFacts:
    mode: str                  # octal, as stat prints it: "600"
    owner: str
    group: str
    sha256: str | None         # None: the login could not read it (not even with sudo -n)


def parse_config_files(text: str) -> dict[str, FileFacts]:
    """path -> FileFacts, one line per file: `MODE OWNER GROUP SHA256-or-- PATH`."""
    return {match["path"]: FileFacts(match["mode"], match["owner"], match["group"],
                                     None if match["sha256"] == "-" else match["sha256"])
            for match in matched_lines(TOOL, _LINE, text, "'MODE OWNER GROUP SHA256 PATH'")}


def parse_hosts_file(text: str) -> tuple[str, ...]:
    """/etc/hosts as its entries, `ADDRESS NAME [NAME ...]` with single spaces; comments and
    blank lines are not entries."""
    entries = []
    for line in text.splitlines():
        fields = line.partition("#")[0].split()
        if not fields:
            continue
        if len(fields) < 2:
            raise ParseError("/etc/hosts", f"an entry without a name: {line[:200]!r}", text)
        entries.append(" ".join(fields))
    return tuple(entries)


def _file_facts(paths: str) -> str:
    """The loop printing one `MODE OWNER GROUP SHA256-or-- PATH` line per file of `paths`."""
    return (f"for f in {paths}; do [ -f \"$f\" ] || continue; "
            "h=$(sha256sum -- \"$f\" 2>/dev/null || sudo -n sha256sum -- \"$f\" 2>/dev/null); h=${{h%% *}}; "
            "echo \"$(stat -c '%a %U %G' -- \"$f\") ${{h:--}} $f\"; done")


CONFIG_FILES = Probe(
    "config files", "mode, owner, group and sha256 of netplan, NetworkManager and sshd configuration files",
    _file_facts(" ".join(CONFIG_PATHS)), parse_config_files, seen_on=("Debian 12",),
    unseen="each line is made by the probe's own loop from stat -c and sha256sum (coreutils, which print the same "
           "on every distribution): no other machine prints it")
# the folder is quoted; the glob after it still expands: every file of that folder
BACKUP_FILES = Probe("backup files", "mode, owner, group and sha256 of each file in a backup folder",
                     _file_facts("{folder}/*"), parse_config_files,
                     unseen="the config files probe's loop over a backup folder (seen there, on Debian 12)")
HOSTS_FILE = Probe("/etc/hosts", "the node's /etc/hosts entries", "cat /etc/hosts", parse_hosts_file,
                   seen_on=("CentOS 7", "Debian 12"),
                   unseen="no /etc/hosts of a Jetson AGX Thor or a DGX Spark was found")
