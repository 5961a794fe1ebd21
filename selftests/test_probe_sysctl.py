"""rackproof.probes.sysctl against sysctl_local_debian12_forwarding_off.txt: `sysctl
net.ipv4.ip_forward net.ipv6.conf.all.forwarding` (procps-ng 4.0.2) on the dev machine."""

from pathlib import Path

import pytest

from rackproof.probes import ParseError
from rackproof.probes.sysctl import SYSCTL, parse_sysctl

SAMPLES = Path(__file__).parent / "samples"


def test_forwarding_off():
    assert parse_sysctl((SAMPLES / "sysctl_local_debian12_forwarding_off.txt").read_text()) == {
        "net.ipv4.ip_forward": "0", "net.ipv6.conf.all.forwarding": "0"}


def test_the_command_names_the_keys():
    assert SYSCTL.command() == "sysctl net.ipv4.ip_forward net.ipv6.conf.all.forwarding"


@pytest.mark.parametrize("text", ["net.ipv4.ip_forward\n", "net ipv4 = 1\n", " = 1\n"])
def test_unreadable(text):
    with pytest.raises(ParseError):
        parse_sysctl(text)
