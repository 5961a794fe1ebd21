"""netplan's files: the mode and owner of one (`stat -c '%a %U'`), and which files name an
interface (`grep -l`). Two netplan files configuring the same interfaces fight at every apply."""

from dataclasses import dataclass

from . import ParseError
from rackproof.probe import Probe

TOOL = "stat"


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


def parse_file_list(text: str) -> tuple[str, ...]:
    """`grep -l`: one path per line."""
    return tuple(line.strip() for line in text.splitlines() if line.strip())


# exit 1: the file does not exist (stat says so on stderr)
MODE_OWNER = Probe("stat", "a file's mode and owner", "stat -c '%a %U' {path}", parse_mode_owner, ok_exit=(0, 1),
                   once=True)
# exit 1: no file names them; 2: no netplan file at all
NAMING_INTERFACES = Probe("grep netplan", "which netplan files name the interfaces",
                          "grep -l -E {pattern} /etc/netplan/*.yaml", parse_file_list, ok_exit=(0, 1, 2), once=True)
