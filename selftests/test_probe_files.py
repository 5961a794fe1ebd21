"""rackproof.probes.files against real output.

config_files_local_nobody_netplan_unreadable.txt: the CONFIG_FILES loop run as `nobody` on the
dev machine (Debian 12, coreutils 9.1) in a scratch tree laid out like /etc (the printed paths
are the tree's, under /): a netplan file of mode 600 root's (no hash without sudo), one with a
space in its name, sshd_config and a drop-in. hosts_file_local_debian12.txt: the dev machine's
/etc/hosts.
"""

from pathlib import Path

import pytest

from rackproof.probes import ParseError
from rackproof.probes.files import CONFIG_FILES, FileFacts, parse_config_files, parse_hosts_file

SAMPLES = Path(__file__).parent / "samples"


def test_config_files_with_a_file_only_root_may_read():
    found = parse_config_files((SAMPLES / "config_files_local_nobody_netplan_unreadable.txt").read_text())
    assert found["/etc/netplan/01-network-manager-all.yaml"] == FileFacts("600", "root", "root", None)
    assert found["/etc/netplan/40 cx7 copy.yaml"].sha256 == \
        "fdcd4a0de77b966277b3dc32e94f43dd7f1a27cf9dded079dd6a5ea20d22f1a5"
    assert found["/etc/ssh/sshd_config.d/10-cluster.conf"].owner == "nobody"
    assert len(found) == 4


def test_config_files_command_never_prints_content():
    command = CONFIG_FILES.command()
    assert "cat" not in command and "sha256sum" in command and "sudo -n sha256sum" in command


@pytest.mark.parametrize("text", ["600 root root - etc/relative\n", "rw-- root root - /etc/x\n",
                                  "600 root root 1234 /etc/x\n", "600 root - /etc/x\n", "garbage\n"])
def test_config_files_unreadable(text):
    with pytest.raises(ParseError):
        parse_config_files(text)


def test_hosts_file_entries():
    assert parse_hosts_file((SAMPLES / "hosts_file_local_debian12.txt").read_text()) == (
        "127.0.0.1 localhost", "127.0.0.1 runsc", "127.0.0.1 vm")
    text = "# cluster\n10.10.0.11\tthor-1   thor-1.cluster # head\n\n  \n10.10.0.12 thor-2\n"
    assert parse_hosts_file(text) == ("10.10.0.11 thor-1 thor-1.cluster", "10.10.0.12 thor-2")


def test_hosts_file_entry_without_a_name():
    with pytest.raises(ParseError, match="without a name"):
        parse_hosts_file("10.10.0.11\n")


# --- real /etc/hosts of other machines (samples/SOURCES.md) ---

def test_a_centos_7_ceph_nodes_hosts_with_tabs():
    entries = parse_hosts_file((SAMPLES / "hosts_file_centos7_ceph_four_nodes_tabs.txt").read_text())
    assert entries == ("127.0.0.1 localhost localhost.localdomain localhost4 localhost4.localdomain4",
                       "::1 localhost localhost.localdomain localhost6 localhost6.localdomain6",
                       "192.168.1.11 node1", "192.168.1.12 node2", "192.168.1.13 node3", "192.168.1.14 node4")


def test_a_blank_line_between_the_stock_entries_and_the_cluster():
    entries = parse_hosts_file((SAMPLES / "hosts_file_centos7_greenplum_two_nodes_blank_line.txt").read_text())
    assert entries[2:] == ("192.168.7.159 gpserver1", "192.168.7.160 gpserver2") and len(entries) == 4
