"""A munge credential decoded on the controller over ssh (rackproof.measuring.munge): the login is
bounded by the connect timeout, not by the command timeout. On a path that drops full-size frames
the login hangs after ssh's connect; before, the run waited the command timeout for it, twice
(the measurement and its cause)."""

from __future__ import annotations

import pytest

from rackproof.inventory.model import load_inventory
from rackproof.measuring.munge import decoded_on_controller
from rackproof.nodes.host import Host
from rackproof.nodes.remote import CommandTimeout, EvidenceLog, Remote, Result
from selftests.suite import EXAMPLES
from selftests.test_causes import Scripted

DECODED = "STATUS:          Success (0)\nENCODE_HOST:     thor-3 (10.10.0.13)\n"


class Timed(Scripted):
    """Scripted, keeping the timeout each command was given."""

    def __init__(self, answer):
        super().__init__(answer)
        self.timeouts: list[float] = []

    def execute(self, command: str, timeout: float, repeatable: bool = False) -> Result:
        self.timeouts.append(timeout)
        return super().execute(command, timeout, repeatable)


def thor3(answer) -> tuple[Host, Timed]:
    transport = Timed(answer)
    return Host(load_inventory(EXAMPLES / "thor5.toml").node("thor-3"), Remote("thor-3", transport, EvidenceLog())), \
        transport


def test_the_decode_over_ssh_may_take_twice_the_connect_timeout_and_five_seconds():
    host, transport = thor3(lambda command: Result(command, 0, DECODED, "", 0.4))
    assert decoded_on_controller(host, "thor-1", 5).ok
    host, longer = thor3(lambda command: Result(command, 0, DECODED, "", 0.4))
    assert decoded_on_controller(host, "thor-1", 10).ok
    assert transport.timeouts == [15] and longer.timeouts == [25]


def test_a_login_that_hangs_is_cut_at_that_bound_and_said():
    def hangs(command):
        raise TimeoutError
    host, transport = thor3(hangs)
    with pytest.raises(CommandTimeout, match="did not finish within 15 s"):
        decoded_on_controller(host, "thor-1", 5)
    assert transport.timeouts == [15]
