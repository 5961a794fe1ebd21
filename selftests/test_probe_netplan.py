"""stat's mode and owner of a netplan file, which netplan files name the CX7 interfaces, and the
one-word answers of `hostname` / `id -un` (kept whole). Samples are local (Debian 12, coreutils
9.1, grep 3.8, sudo 1.9.13): stat_c_mode_owner_* is `stat -c '%a %U' FILE` of a file with mode
600, of /etc/hostname, and of a file that does not exist (nothing on stdout, exit 1);
netplan_naming_* is NAMING_INTERFACES' loop run as `nobody` (no sudo) in a scratch tree laid
out like /etc/netplan (paths printed as the tree's, under /): one file naming an interface, one
not, one of mode 600 root's."""

import pytest

from rackproof.probes import ParseError
from rackproof.probes.netplan import NAMING_INTERFACES, FileMode, NetplanNaming, parse_mode_owner, parse_netplan_naming
from rackproof.probes.system import parse_answer
from selftests.robustness import sample


@pytest.mark.parametrize("name, expected", [
    ("stat_c_mode_owner_local_debian12_mode600.txt", FileMode("600", "root")),
    ("stat_c_mode_owner_local_debian12_etc_hostname.txt", FileMode("755", "root")),
    ("stat_c_mode_owner_local_debian12_missing.txt", None),
])
def test_mode_owner(name, expected):
    assert parse_mode_owner(sample(name)) == expected


@pytest.mark.parametrize("text", ["600\n", "rw------- root\n", "600 root extra\n", "680 root\n", "-600 root\n"])
def test_mode_owner_unreadable(text):
    with pytest.raises(ParseError):
        parse_mode_owner(text)


def test_a_file_the_login_cannot_read_is_said_unreadable_not_silent():
    assert parse_netplan_naming(sample("netplan_naming_local_nobody_one_unreadable.txt")) == NetplanNaming(
        ("/etc/netplan/40-cx7.yaml",), ("/etc/netplan/50-cloud-init.yaml",))
    assert parse_netplan_naming("") == NetplanNaming((), ())


def test_sudo_is_asked_only_whether_it_may_before_it_reads():
    command = NAMING_INTERFACES.command(pattern="enp1s0f1np1|x")
    assert "sudo -n -l grep -q -E 'enp1s0f1np1|x'" in command and command.count("'enp1s0f1np1|x'") == 3


@pytest.mark.parametrize("text", ["names etc/netplan/x.yaml\n", "/etc/netplan/x.yaml\n", "maybe /etc/x\n"])
def test_netplan_naming_unreadable(text):
    with pytest.raises(ParseError):
        parse_netplan_naming(text)


@pytest.mark.parametrize("name, expected", [("hostname_local_debian12.txt", "vm"), ("id_un_local_debian12.txt", "root")])
def test_answer(name, expected):
    assert parse_answer(sample(name)) == expected
    assert parse_answer("thor-2\x1b[2J\nPASSED\n") == "thor-2\x1b[2J\nPASSED"   # kept whole: the check shows it
