"""A node's own name and the login the suite runs as: one line each."""

from . import ParseError
from rackproof.probe import Probe

TOOL = "one-word answer"


def parse_one_word(text: str) -> str:
    """The single word a command printed (`hostname`, `id -un`)."""
    words = text.split()
    if len(words) != 1:
        raise ParseError(TOOL, f"expected one word, got {len(words)}", text)
    return words[0]


HOSTNAME = Probe("hostname", "the node's host name", "hostname", parse_one_word)
LOGIN = Probe("id -un", "the login the suite runs as on the node", "id -un", parse_one_word)
