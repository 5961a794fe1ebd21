"""A node's own name, the login the suite runs as, and its clock. A name is kept whole
(surrounding whitespace aside): the check compares it with the inventory, and a garbled answer
shows, escaped, as what was found on one line."""

import datetime
import re

from . import ParseError
from rackproof.probes.probe import Probe


def parse_answer(text: str) -> str:
    """What `hostname` or `id -un` printed, without surrounding whitespace."""
    return text.strip()


HOSTNAME = Probe("hostname", "the node's host name", "hostname", parse_answer, once=True,
                 seen_on=("Linux desktop", "Debian 12"),
                 unseen="one word, the node's name: no capture of a Jetson AGX Thor or a DGX Spark was kept")
LOGIN = Probe("id -un", "the login the suite runs as on the node", "id -un", parse_answer, once=True,
              seen_on=("Linux appliance", "Debian 12"),
              unseen="one word, the login's name: no capture of a Jetson AGX Thor or a DGX Spark was kept")


def parse_clock(text: str) -> datetime.datetime:
    """What `date -u +%s` printed (seconds since 1970), as an aware UTC time."""
    answer = text.strip()
    if not re.fullmatch(r"[0-9]{1,11}", answer):
        raise ParseError("date", "not a number of seconds since 1970", text)
    return datetime.datetime.fromtimestamp(int(answer), datetime.timezone.utc)


# whose reservation holds a node is judged by the node's own clock: a recording keeps its moment
CLOCK = Probe("date", "the node's clock, in seconds since 1970 (UTC)", "date -u +%s", parse_clock,
              seen_on=("Alibaba Cloud ECS", "Debian 12"),
              unseen="one number: no capture of a Jetson AGX Thor or a DGX Spark was kept")
