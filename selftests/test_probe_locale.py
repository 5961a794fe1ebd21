"""Every command a probe runs is in the C locale (rackproof.probes.probe.IN_C_LOCALE, set in one place):
`rackproof probes` shows it, Host sends it, a real shell keeps it for every part of a compound
line, replays match commands recorded before it, and a sudo answer in German (a real one, as a
node without it printed) is refused in one line."""

import os
import subprocess
from pathlib import Path

import pytest

from rackproof.checks import catalog
from rackproof.nodes.host import Host
from rackproof.inventory.model import load_inventory
from rackproof.probes.probe import IN_C_LOCALE, Command, Probe
from rackproof.probes import ParseError
from rackproof.probes.ethtool import ETHTOOL
from rackproof.probes.sudo import parse_sudo_list
from rackproof.nodes.remote import EvidenceLog, Remote, Result
from rackproof.nodes.replay import command_key
from selftests.suite import EXAMPLES

SAMPLES = Path(__file__).parent / "samples"
GERMAN = {"LANG": "de_DE.UTF-8", "LC_ALL": "de_DE.UTF-8", "LC_MESSAGES": "de_DE.UTF-8"}


@pytest.mark.parametrize("probe", catalog(), ids=lambda p: p.name)
def test_every_probe_is_shown_in_the_c_locale(probe):
    assert probe.shown.startswith("export LC_ALL=C; ")
    # set once for the line: no probe sets a locale of its own (which would undo it, or say it twice)
    assert not any(word in probe.template for word in ("LC_ALL", "LANG=", "LC_MESSAGES", "env -i"))


def test_rackproof_probes_prints_the_locale_with_each_command(capsys):
    from rackproof.cli import main
    assert main(["probes"]) == 0
    commands = [line for line in capsys.readouterr().out.splitlines() if line.startswith("    command: ")]
    assert len(commands) == len(catalog())
    assert all(line.startswith("    command: export LC_ALL=C; ") for line in commands)


def test_a_real_shell_keeps_the_locale_for_every_part_of_a_compound_line():
    """A pipeline's far side, the right of ||, a loop's body, and a command nested in another."""
    inner = Probe("inner", "t", "echo nested=$LC_ALL").command()
    outer = Probe("outer", "t", "echo first=$LC_ALL | cat; false || echo or=$LC_ALL; "
                  "for i in 1; do echo loop=$LC_ALL; done; {inner}").command(inner=inner)
    assert outer.line.count("LC_ALL=C") == 1      # once for the whole line, not once per nested command
    out = subprocess.run(["bash", "-c", outer.line], capture_output=True, text=True, env={**os.environ, **GERMAN},
                         timeout=10).stdout
    assert out.split() == ["first=C", "or=C", "loop=C", "nested=C"]
    # without it the same line keeps the node's German
    out = subprocess.run(["bash", "-c", str(outer)], capture_output=True, text=True, env={**os.environ, **GERMAN},
                         timeout=10).stdout
    assert out.split()[0] == "first=de_DE.UTF-8"


class Noted:
    def __init__(self):
        self.commands = []

    def execute(self, command: str, timeout: float, repeatable: bool = False) -> Result:
        self.commands.append(command)
        return Result(command, 0, "Settings for mgbe0_0:\n\tSpeed: 25000Mb/s\n\tLink detected: yes\n", "", 0.01)

    def close(self) -> None:
        pass


def test_the_host_sends_the_line_and_its_evidence_shows_it():
    transport, log = Noted(), EvidenceLog()
    host = Host(load_inventory(EXAMPLES / "thor5.toml").node("thor-1"), Remote("thor-1", transport, log))
    with log.captured() as evidence:
        assert host.read(ETHTOOL, interface="mgbe0_0").link_detected
    assert transport.commands == ["export LC_ALL=C; ethtool mgbe0_0"]
    assert [e.command for e in evidence] == ["export LC_ALL=C; ethtool mgbe0_0"]
    assert Command("ethtool mgbe0_0").line == IN_C_LOCALE + "ethtool mgbe0_0"


def test_replays_recorded_before_the_line_carried_the_locale_still_match():
    """examples/replay holds `LC_ALL=C ethtool mgbe0_0` (the locale per probe, before): the same command."""
    now = command_key("export LC_ALL=C; ethtool mgbe0_0")
    assert now == command_key("LC_ALL=C ethtool mgbe0_0") == command_key("ethtool mgbe0_0") == "ethtool mgbe0_0"
    assert command_key("export LC_ALL=C; echo m; LC_ALL=C ping -c 3 x") == "echo m; ping -c 3 x"
    # a word that only ends in LC_ALL=C is an argument, not the locale
    assert command_key("echo XLC_ALL=C y") == "echo XLC_ALL=C y"


@pytest.mark.parametrize("name, login", [("sudo_l_ubuntu_de_DE_silky_all.txt", "silky"),
                                         ("sudo_l_ubuntu_de_DE_secnigma_all.txt", "secnigma")])
def test_sudo_in_german_is_refused_in_one_line(name, login):
    """A real `sudo -l` of an Ubuntu in German: a login with every right. Read as English words
    it would have no rule at all; the parser refuses it, and with LC_ALL=C sudo never prints it."""
    text = (SAMPLES / name).read_text()
    assert f"Der Benutzer {login} darf die folgenden Befehle auf ubuntu ausführen:" in text
    with pytest.raises(ParseError) as refused:
        parse_sudo_list(text)
    assert "\n" not in str(refused.value)
    assert str(refused.value) == ("sudo -l: neither 'is not allowed to run sudo' nor 'may run the following "
                                  "commands'")
