"""stat's mode and owner of a netplan file, grep -l's list of files, and the one-word answers of
`hostname` / `id -un` (kept whole). Samples are local (Debian 12, coreutils 9.1, grep 3.8):
stat_c_mode_owner_* is `stat -c '%a %U' FILE` of a file with mode 600, of /etc/hostname, and of
a file that does not exist (nothing on stdout, exit 1); grep_l_* is
`grep -l -E 'enp1s0f1np1|enP2p1s0f1np1' DIR/*.yaml` over three netplan files, two naming them."""

import pytest

from rackproof.probes import ParseError
from rackproof.probes.netplan import FileMode, parse_file_list, parse_mode_owner
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


def test_file_list():
    assert parse_file_list(sample("grep_l_local_debian12_two_netplan_files.txt")) == (
        "/tmp/np/40-cx7.yaml", "/tmp/np/50-cloud-init.yaml")
    assert parse_file_list("") == ()


@pytest.mark.parametrize("name, expected", [("hostname_local_debian12.txt", "vm"), ("id_un_local_debian12.txt", "root")])
def test_answer(name, expected):
    assert parse_answer(sample(name)) == expected
    assert parse_answer("thor-2\x1b[2J\nPASSED\n") == "thor-2\x1b[2J\nPASSED"   # kept whole: the check shows it
