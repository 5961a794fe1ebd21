"""rackproof.probes.getent against `getent hosts` output.

getent_hosts_local_bind_mounted_hosts.txt: glibc 2.36 `getent hosts thor-1 thor-2.cluster thor-3
thor-9 thor-4-v6only thor-5 10.10.0.150 localhost thor-6` run on the dev machine with a test
/etc/hosts bind-mounted in a private mount namespace (exit status 2: thor-9 is not there).
getent_hosts_format_from_glibc_source.txt: the format from glibc's source (illustration lines).
"""

from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from rackproof.probes import ParseError
from rackproof.probes.getent import GETENT_HOSTS, parse_getent_hosts

SAMPLES = Path(__file__).parent / "samples"


def test_local_capture():
    hosts = parse_getent_hosts((SAMPLES / "getent_hosts_local_bind_mounted_hosts.txt").read_text())
    # the Debian 127.0.1.1 line comes first: the check must see both addresses
    assert hosts["thor-1"] == ("127.0.1.1", "10.10.0.11")
    assert hosts["thor-1.cluster"] == ("127.0.1.1", "10.10.0.11")
    assert hosts["thor-2"] == hosts["thor-2.cluster"] == ("10.10.0.12",)
    assert hosts["thor-3"] == ("10.10.0.13",)
    assert "thor-9" not in hosts
    assert hosts["thor-4-v6only"] == ("fd00:10::14",)
    assert hosts["a-very-long-hostname-for-padding.cluster.example"] == ("10.10.0.150",)
    assert hosts["localhost"] == hosts["ip6-loopback"] == ("::1",)
    assert hosts["thor-6"] == ("fd00:10:20:30:40::16",)  # longer than 15 columns: one space


def test_glibc_format_illustration():
    text = (SAMPLES / "getent_hosts_format_from_glibc_source.txt").read_text()
    data = "".join(line + "\n" for line in text.splitlines() if not line.startswith("#"))
    assert parse_getent_hosts(data) == {
        "thor-01": ("10.0.0.5",), "thor-01.lab": ("10.0.0.5",),
        "localhost": ("::1",), "ip6-localhost": ("::1",), "ip6-loopback": ("::1",)}


def test_nothing_found_is_empty():
    assert parse_getent_hosts("") == {}


@pytest.mark.parametrize("text", ["thor-1 10.0.0.1\n", "10.0.0.1\n", "getent: Unknown database: hots\n"])
def test_unreadable(text):
    with pytest.raises(ParseError):
        parse_getent_hosts(text)


names = st.text("thor-0123.cluster", min_size=1, max_size=20)
addresses = st.ip_addresses().map(str)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(addresses, st.lists(names, min_size=1, max_size=3)), max_size=6))
def test_glibc_layout_round_trip(entries):
    """Lines laid out as glibc's printf("%-15s %s") + " alias" give every name its addresses."""
    text = "".join(f"{address:<15} {' '.join(line_names)}\n" for address, line_names in entries)
    expected: dict[str, list[str]] = {}
    for address, line_names in entries:
        for name in line_names:
            if address not in expected.setdefault(name, []):
                expected[name].append(address)
    assert parse_getent_hosts(text) == {name: tuple(found) for name, found in expected.items()}


# --- real outputs of other machines (samples/SOURCES.md) ---

def real(name: str) -> str:
    return (SAMPLES / name).read_text()


def test_a_short_name_the_resolver_completed_resolves_to_the_completed_names_address():
    """`getent hosts serverb` on a RHEL lab machine and `getent hosts ip-172-0-0-4` on EC2 answer
    under the name their search domain completed: the asked name resolved to that address (the
    old parser left it out, so a node reachable by its short name read as not resolving)."""
    assert parse_getent_hosts(real("getent_hosts_rhel_lab_serverb_search_domain.txt"), ["serverb"]) == {
        "serverb": ("172.25.250.11",), "serverb.lab.example.com": ("172.25.250.11",)}
    hosts = parse_getent_hosts(real("getent_hosts_rhel7_ec2_short_name_fqdn_answer.txt"), ["ip-172-0-0-4"])
    assert hosts["ip-172-0-0-4"] == ("172.0.0.4",)
    # a name not asked is not made up, and a name whose completion is asked too is not credited with it
    assert "serverb" not in parse_getent_hosts(real("getent_hosts_rhel_lab_serverb_search_domain.txt"))
    assert "serverb" not in parse_getent_hosts(real("getent_hosts_rhel_lab_serverb_search_domain.txt"),
                                               ["serverb", "serverb.lab.example.com"])
    assert "serverc" not in parse_getent_hosts(real("getent_hosts_rhel_lab_serverb_search_domain.txt"), ["serverc"])


def test_the_probe_gives_the_parser_the_names_asked():
    assert GETENT_HOSTS.parse(real("getent_hosts_rhel_lab_serverb_search_domain.txt"),
                              {"names": ["serverb"]})["serverb"] == ("172.25.250.11",)


def test_an_alias_from_etc_hosts_and_the_canonical_name_share_the_address():
    hosts = parse_getent_hosts(real("getent_hosts_rhel7_ec2_hosts_alias_bc1.txt"), ["bc1"])
    assert hosts == {"bc1": ("172.0.0.4",), "ip-172-0-0-4.eu-central-1.compute.internal": ("172.0.0.4",)}


def test_a_link_local_ipv6_answer_is_read_as_printed():
    """getent asks for IPv6 first: the EC2 node's own FQDN came back as its fe80:: address only
    (one space after an address longer than 15 columns)."""
    assert parse_getent_hosts(real("getent_hosts_rhel7_ec2_fqdn_ipv6_link_local.txt")) == {
        "ip-172-0-0-4.eu-central-1.compute.internal": ("fe80::7b:faff:fee2:a145",)}


def test_one_name_with_three_addresses_keeps_them_in_order():
    assert parse_getent_hosts(real("getent_hosts_docker_swarm_tasks_three_addresses.txt"), ["tasks.redis-master"]) == {
        "tasks.redis-master": ("10.16.0.183", "10.16.0.182", "10.16.0.181")}
