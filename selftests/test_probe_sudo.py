"""rackproof.probes.sudo against `sudo -n -l -U LOGIN` of sudo 1.9.13 (Debian 12) on the
simulated thor5 rack, captured as printed: a slice holder with no rule (not_allowed), the same
holder after `usermod -aG sudo mira` (sudo_group), and the suite's own login (nopasswd_rules)."""

from pathlib import Path

import pytest

from rackproof.probes import ParseError
from rackproof.probes.sudo import SUDO_RULES, parse_sudo_list

SAMPLES = Path(__file__).parent / "samples"


def test_no_rule():
    assert parse_sudo_list((SAMPLES / "sudo_l_U_sim_1.9.13_not_allowed.txt").read_text()) == ()


def test_the_sudo_group():
    assert parse_sudo_list((SAMPLES / "sudo_l_U_sim_1.9.13_sudo_group.txt").read_text()) == ("(ALL : ALL) ALL",)


def test_the_suites_own_rules():
    (rule,) = parse_sudo_list((SAMPLES / "sudo_l_U_sim_1.9.13_nopasswd_rules.txt").read_text())
    assert rule.startswith("(root) NOPASSWD: /usr/sbin/ip link set dev * down")


def test_the_command():
    assert SUDO_RULES.command(login="mira") == "sudo -n -l -U mira"


@pytest.mark.parametrize("text", ["", "sudo: a password is required\n",
                                  "User mira may run the following commands on thor-3:\nALL\n"])
def test_unreadable(text):
    with pytest.raises(ParseError):
        parse_sudo_list(text)
