"""A node's own name and the login the suite runs as. The answer is kept whole (surrounding
whitespace aside): the check compares it with the inventory, and a garbled answer shows, escaped,
as what was found on one line."""

from rackproof.probe import Probe


def parse_answer(text: str) -> str:
    """What `hostname` or `id -un` printed, without surrounding whitespace."""
    return text.strip()


HOSTNAME = Probe("hostname", "the node's host name", "hostname", parse_answer, once=True)
LOGIN = Probe("id -un", "the login the suite runs as on the node", "id -un", parse_answer, once=True)
