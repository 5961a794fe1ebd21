"""rackproof.probes.bondhash: the kernel's layer3+4 transmit hash, and the client ports chosen with it.

The expected hashes below were worked out by hand from bond_main.c (bond_ip_hash after
__bond_xmit_hash's memcpy of the ports), on a little-endian CPU:

  10.10.0.11:61000 -> 10.10.0.12:5201
    ports in the header   EE 48 14 51   (61000 = 0xEE48, 5201 = 0x1451)  read LE: 0x511448EE
    source address        0A 0A 00 0B   read LE: 0x0B000A0A
    destination address   0A 0A 00 0C   read LE: 0x0C000A0A
    hash = 0x511448EE ^ 0x0B000A0A ^ 0x0C000A0A           = 0x561448EE
    hash ^= hash >> 16  (0x00005614)                      = 0x56141EFA
    hash ^= hash >> 8   (0x0056141E)                      = 0x56420AE4   (kernels before 4.14)
    hash >>= 1                                            = 0x2B210572   (since 4.14)
    of 4 members: 0x2B210572 % 4 = 2 (0x56420AE4 % 4 = 0); of 3: 723584370 % 3 = 0

  fd00::1:61000 -> fd00::2:5201 (each address: its four words XORed, 0x010000FD and 0x020000FD)
    hash = 0x511448EE ^ 0x010000FD ^ 0x020000FD = 0x521448EE -> 0x52141AFA -> 0x52460EE0 -> 0x29230770

  an ICMP echo request 10.10.0.11 -> 10.10.0.12, identifier 40000 (0x9C40)
    type, code, identifier (host order) as one LE word   0x9C400008
    hash = 0x9C400008 ^ 0x0B000A0A ^ 0x0C000A0A = 0x9B400008 -> 0x9B409B48 -> 0x9BDBDBD3 -> 0x4DEDEDE9
    of 4 members: 1; of 3: 1306389993 % 3 = 1
"""

from functools import reduce

import pytest
from hypothesis import given, strategies as st

from rackproof.probes import bondhash

PAIRS = [("10.10.0.11", "10.10.0.12"), ("10.10.0.13", "10.10.0.15"), ("10.10.0.15", "10.10.0.11"),
         ("192.168.1.5", "192.168.1.9"), ("172.16.0.1", "172.16.3.200"), ("fd00::1", "fd00::2")]
SERVER_PORTS = [[5201, 5202, 5203, 5204], [5201, 5201, 5201, 5201], [5299, 5233, 5270, 5210]]


def test_the_kernels_hash_worked_out_by_hand():
    assert bondhash.xmit_hash("10.10.0.11", "10.10.0.12", 61000, 5201) == 0x2B210572
    assert bondhash.xmit_hash("10.10.0.11", "10.10.0.12", 61000, 5201, drop_low_bit=False) == 0x56420AE4
    assert bondhash.member("10.10.0.11", "10.10.0.12", 61000, 5201, 4) == 2
    assert bondhash.member("10.10.0.11", "10.10.0.12", 61000, 5201, 4, drop_low_bit=False) == 0
    assert bondhash.member("10.10.0.11", "10.10.0.12", 61000, 5201, 3) == 0
    assert bondhash.xmit_hash("fd00::1", "fd00::2", 61000, 5201) == 0x29230770


def test_the_modelled_kernel_drops_the_lowest_bit():
    # Jetson Linux 38 runs 6.8: the Thor's bond drops the bit
    assert bondhash.LOW_BIT_DROPPED


octet = st.integers(0, 255)
port = st.integers(0, 65535)


@given(st.lists(octet, min_size=4, max_size=4), st.lists(octet, min_size=4, max_size=4), port, port)
def test_for_four_members_the_documented_formula_gives_the_same_member(src, dst, sport, dport):
    """bonding.rst's steps on plain integers leave the same low byte (the XOR of every byte of
    the ports and addresses), so for 2 or 4 members the documentation and the kernel agree."""
    low_byte = reduce(lambda a, b: a ^ b, [sport >> 8, sport & 0xFF, dport >> 8, dport & 0xFF, *src, *dst])
    saddr, daddr = ".".join(map(str, src)), ".".join(map(str, dst))
    assert bondhash.member(saddr, daddr, sport, dport, 4) == (low_byte >> 1) & 3
    assert bondhash.member(saddr, daddr, sport, dport, 4, drop_low_bit=False) == low_byte & 3


@given(port, port)
def test_the_hash_is_the_same_both_ways_for_two_and_four_members(sport, dport):
    """The switch's view of a connection (the other direction) lands on the same member index
    when the member count is a power of two."""
    for count in (2, 4):
        assert (bondhash.member("10.10.0.11", "10.10.0.14", sport, dport, count)
                == bondhash.member("10.10.0.14", "10.10.0.11", dport, sport, count))


@pytest.mark.parametrize("dports", SERVER_PORTS)
@pytest.mark.parametrize("saddr, daddr", PAIRS)
def test_four_streams_get_four_members_on_old_and_new_kernels(saddr, daddr, dports):
    for attempt in (0, 1):
        ports = bondhash.spread_ports(saddr, daddr, dports, 4, attempt)
        for drop in (True, False):
            members = {bondhash.member(saddr, daddr, s, d, 4, drop_low_bit=drop) for s, d in zip(ports, dports)}
            assert members == {0, 1, 2, 3}, (ports, drop)


@pytest.mark.parametrize("saddr, daddr", PAIRS)
def test_four_streams_still_cover_every_member_left_when_one_is_lost(saddr, daddr):
    dports = SERVER_PORTS[0]
    ports = bondhash.spread_ports(saddr, daddr, dports, 4)
    for count in (3, 2):
        members = [bondhash.member(saddr, daddr, s, d, count) for s, d in zip(ports, dports)]
        assert set(members) == set(range(count)) and max(members.count(m) for m in members) == 2, members


def test_ports_are_chosen_again_alike_and_a_retry_takes_others():
    first = bondhash.spread_ports("10.10.0.11", "10.10.0.12", SERVER_PORTS[0], 4)
    assert first == bondhash.spread_ports("10.10.0.11", "10.10.0.12", SERVER_PORTS[0], 4)
    again = bondhash.spread_ports("10.10.0.11", "10.10.0.12", SERVER_PORTS[0], 4, attempt=1)
    assert not set(first) & set(again)
    assert all(p in bondhash.CLIENT_PORTS for p in first + again)


def test_a_port_a_connection_still_holds_is_never_chosen():
    """A stream that stalled leaves its socket retransmitting for minutes: its client port
    would fail the next client's bind ("Address already in use")."""
    first = bondhash.spread_ports("10.10.0.11", "10.10.0.14", SERVER_PORTS[0], 4)
    other = bondhash.spread_ports("10.10.0.11", "10.10.0.15", SERVER_PORTS[0], 4)
    held = frozenset(first)
    again = bondhash.spread_ports("10.10.0.11", "10.10.0.15", SERVER_PORTS[0], 4, held=held)
    assert set(first) & set(other), "without the held ports, two destinations share client ports"
    assert not held & set(again)
    assert {bondhash.member("10.10.0.11", "10.10.0.15", s, d, 4) for s, d in zip(again, SERVER_PORTS[0])} == {0, 1, 2, 3}


def test_the_kernels_echo_hash_worked_out_by_hand():
    assert bondhash.echo_member("10.10.0.11", "10.10.0.12", 40000, 4) == 1
    assert bondhash.echo_member("10.10.0.11", "10.10.0.12", 40000, 3) == 1


@pytest.mark.parametrize("saddr, daddr", PAIRS)
@pytest.mark.parametrize("members", [2, 3, 4])
def test_an_echo_identifier_for_each_member(saddr, daddr, members):
    idents = bondhash.echo_idents(saddr, daddr, members)
    assert [bondhash.echo_member(saddr, daddr, i, members) for i in idents] == list(range(members))
    assert all(0 < i < 1 << 16 for i in idents)


def test_pings_to_two_destinations_at_once_never_share_an_identifier():
    """ping counts any echo reply with its identifier as its own: a reply from the other
    destination would pass a path that drops the packet."""
    nodes = [f"10.10.0.{k}" for k in range(1, 255)]
    for daddr in nodes[:8]:
        mine = set(bondhash.echo_idents("10.10.0.11", daddr, 4))
        for other in nodes:
            if other != daddr:
                assert not mine & set(bondhash.echo_idents("10.10.0.11", other, 4))


@given(st.integers(1, 65535))
def test_an_echo_and_its_reply_leave_by_the_same_member_index_for_two_and_four(ident):
    """The reply (type 0) differs from the request (type 8) in bit 3 only, which the hash folds
    away below the two bits that pick one of 2 or 4 members."""
    for count in (2, 4):
        assert (bondhash.echo_member("10.10.0.11", "10.10.0.14", ident, count)
                == bondhash.echo_member("10.10.0.14", "10.10.0.11", ident, count, bondhash.ECHO_REPLY))


@pytest.mark.parametrize("streams, members", [(3, 3), (3, 4), (6, 4)])
def test_when_no_ports_suit_both_kernels_the_modelled_one_is_served(streams, members):
    dports = [5201 + k for k in range(streams)]
    ports = bondhash.spread_ports("10.10.0.13", "10.10.0.15", dports, members)
    used = [bondhash.member("10.10.0.13", "10.10.0.15", s, d, members) for s, d in zip(ports, dports)]
    assert max(used.count(m) for m in used) == -(-streams // members) and len(set(used)) == min(streams, members)


@pytest.mark.parametrize("saddr, daddr", PAIRS)
def test_iperf3s_consecutive_cports_never_give_four_members_once_the_low_bit_is_dropped(saddr, daddr):
    """Why each stream is a client of its own: -P 4 --cport P sends from P..P+3, and an even
    port and the next differ only in the bit the kernel drops."""
    for base in range(61000, 61064):
        members = {bondhash.member(saddr, daddr, base + k, 5201, 4) for k in range(4)}
        assert len(members) <= 3
