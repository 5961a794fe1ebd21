"""netplan's files: the mode and owner of one (`stat -c '%a %U'`), and which files name an
interface (`grep`). Two netplan files configuring the same interfaces fight at every apply.

netplan files are root's and mode 600: the login reads one with `sudo -n grep` where a sudoers.d
rule lets it, and a file it cannot read is said to be unreadable, never taken for a file that
names nothing."""

from dataclasses import dataclass

from . import ParseError
from rackproof.probes.probe import Probe

TOOL = "stat"
# the file the Spark guide writes the CX7 addresses into
CX7_NETPLAN = "/etc/netplan/40-cx7.yaml"


@dataclass(frozen=True)
class FileMode:
    mode: str      # octal, as stat prints it: "600"
    owner: str


def parse_mode_owner(text: str) -> FileMode | None:
    """`stat -c '%a %U' FILE`: None when stat printed nothing (the file does not exist)."""
    fields = text.split()
    if not fields:
        return None
    if len(fields) != 2 or not fields[0].isdigit() or not set(fields[0]) <= set("01234567"):
        raise ParseError(TOOL, "expected 'MODE OWNER' (octal mode, then a user name)", text)
    return FileMode(fields[0], fields[1])


@dataclass(frozen=True)
class NetplanNaming:
    naming: tuple[str, ...]       # files that name one of the interfaces
    unreadable: tuple[str, ...]   # files the login could not read (not even with sudo -n)


def parse_netplan_naming(text: str) -> NetplanNaming:
    """`names PATH` and `unreadable PATH` lines, one per netplan file of interest."""
    found: dict[str, list[str]] = {"names": [], "unreadable": []}
    for line in text.splitlines():
        if not line.strip():
            continue
        word, _, path = line.partition(" ")
        if word not in found or not path.startswith("/"):
            raise ParseError("netplan files", f"expected 'names PATH' or 'unreadable PATH', got {line[:200]!r}", text)
        found[word].append(path)
    return NetplanNaming(tuple(found["names"]), tuple(found["unreadable"]))


# exit 1: the file does not exist (stat says so on stderr)
MODE_OWNER = Probe("stat", "a file's mode and owner", "stat -c '%a %U' {path}", parse_mode_owner, ok_exit=(0, 1),
                   once=True,
                   seen_on=("Debian 12",),
                   unseen="no `stat -c '%a %U'` of another machine was found (scripts compare with it, none kept its "
                          "answer); coreutils prints the format's two fields, the same on every distribution")
# sudo -n -l asks whether the rule exists without running anything: `sudo -n grep` refused and
# `grep` finding nothing both exit 1
NAMING_INTERFACES = Probe(
    "grep netplan", "which netplan files name the interfaces, and which it could not read",
    'for f in /etc/netplan/*.yaml; do [ -f "$f" ] || continue; '
    'if [ -r "$f" ]; then grep -q -E {pattern} -- "$f"; s=$?; '
    'elif sudo -n -l grep -q -E {pattern} -- "$f" >/dev/null 2>&1; then sudo -n grep -q -E {pattern} -- "$f"; s=$?; '
    'else s=2; fi; case $s in 0) echo "names $f";; 1) ;; *) echo "unreadable $f";; esac; done',
    parse_netplan_naming, once=True, seen_on=("Debian 12",),
    unseen="each line is the probe's own loop's (from grep's exit status): no other machine prints it")
