"""The Linux bonding driver's layer3+4 transmit hash, and client ports that it spreads.

What the kernel does for a TCP/UDP packet under xmit_hash_policy=layer3+4 (bond_main.c:
__bond_xmit_hash and bond_ip_hash; 802.3ad sends on slave_arr[hash % count], the members of
the active aggregator that can send, in the order they were enslaved):

    hash  = the source and destination ports as they stand in the header, as one 32-bit word
    hash ^= source address ^ destination address   (IPv6: the four words of each, XORed)
    hash ^= hash >> 16
    hash ^= hash >> 8
    hash >>= 1                                     kernels since 4.14, see LOW_BIT_DROPPED
    member = hash % count

An ICMP echo (request or reply) is hashed by its type, code and identifier instead of ports
(bond_flow_dissect keeps flow.icmp; skb_flow_get_icmp_tci stores the identifier in host order
since "flow_dissector: fix byteorder of dissected ICMP ID", 2021, in 5.12 and 5.10.27): the
first word is type | code << 8 | identifier << 16. `ping -e ID` sets the
identifier, so a ping can be steered onto a member as a connection is by its client port.

The words are memcpy'd from the header, so on a little-endian CPU (x86-64; arm64 as on the
Thor and the Spark) each is its four header bytes read little-endian. That is what is modelled
here; bonding.rst's "hash = source port, destination port" and plain integer XORs give the same
low byte, hence the same member for 2 or 4 members, but not for 3.

Why the suite chooses client ports: four connections from ports that connect() picks land on
four members of a four-member bond about one time in ten (4!/4^4), and iperf3 -P 4 --cport P
uses P, P+1, P+2, P+3, of which two (an even port and the next) always hash alike once the
lowest bit is dropped: -P 4 can never use four lanes that way. So each stream is a client of
its own, from a port chosen by spread_ports.
"""

from __future__ import annotations

import ipaddress

from rackproof.probes.sockets import CLIENT_PORTS

# "bonding: discard lowest hash bit for 802.3ad layer3+4" (Hangbin Liu, 2017): in 4.14, and in
# the 4.4/4.9 stable series since November 2017. Jetson Linux 38 (the Thor) runs 6.8.
LOW_BIT_DROPPED = True
# Attempt k scans CLIENT_PORTS from k * ATTEMPT_STRIDE on, so a retry uses other ports.
ATTEMPT_STRIDE = 1000


def _address_word(address: str) -> int:
    packed = ipaddress.ip_address(address).packed
    word = 0
    for i in range(0, len(packed), 4):
        word ^= int.from_bytes(packed[i:i + 4], "little")
    return word


def _fold(word: int, drop_low_bit: bool) -> int:
    word ^= word >> 16
    word ^= word >> 8
    return word >> 1 if drop_low_bit else word


def _ports_word(sport: int, dport: int) -> int:
    return int.from_bytes(sport.to_bytes(2, "big") + dport.to_bytes(2, "big"), "little")


def xmit_hash(saddr: str, daddr: str, sport: int, dport: int, *, drop_low_bit: bool = LOW_BIT_DROPPED) -> int:
    """The kernel's layer3+4 hash of a packet from saddr:sport to daddr:dport."""
    return _fold(_ports_word(sport, dport) ^ _address_word(saddr) ^ _address_word(daddr), drop_low_bit)


def member(saddr: str, daddr: str, sport: int, dport: int, count: int, *,
           drop_low_bit: bool = LOW_BIT_DROPPED) -> int:
    """Which of `count` usable members (in enslave order) sends that packet."""
    return xmit_hash(saddr, daddr, sport, dport, drop_low_bit=drop_low_bit) % count


ECHO_REQUEST, ECHO_REPLY = 8, 0


def echo_member(saddr: str, daddr: str, ident: int, count: int, icmp_type: int = ECHO_REQUEST) -> int:
    """Which of `count` usable members sends an ICMP echo of that identifier (the kernel's
    layer3+4 hash of ICMP, see above; always the same member for a request and its reply when
    count is 2 or 4: the type differs in bit 3 only)."""
    word = icmp_type | ident << 16
    return _fold(word ^ _address_word(saddr) ^ _address_word(daddr), LOW_BIT_DROPPED) % count


# Identifiers of the pings the suite steers (ping -e): a block of 64 per destination, chosen by
# the last byte of its address, clear of the low ones ping's own sockets are given. Pings at the
# same time to two destinations never share an identifier: a ping counts any echo reply that
# carries its identifier as its own, whoever sent it.
ECHO_BASE, ECHO_BLOCK = 40000, 64


def echo_idents(saddr: str, daddr: str, members: int) -> list[int]:
    """For each of `members` members (all usable), an identifier whose echo it sends."""
    first = ECHO_BASE + ECHO_BLOCK * ipaddress.ip_address(daddr).packed[-1]
    found: dict[int, int] = {}
    for ident in range(first, first + ECHO_BLOCK):
        found.setdefault(echo_member(saddr, daddr, ident, members), ident)
        if len(found) == members:
            return [found[k] for k in range(members)]
    raise ValueError(f"no identifiers reach all {members} members from {saddr} to {daddr}")


def spread_ports(saddr: str, daddr: str, dports: list[int], members: int, attempt: int = 0,
                 held: frozenset[int] = frozenset()) -> list[int]:
    """A client port for each server port in `dports`, such that the streams saddr -> daddr are
    spread as evenly as they can be (each member streams // count of them, some one more) over
    the `members` members, and over any fewer of them too (a member lost during a measurement:
    the kernel hashes again modulo the members left). The ports do so on LOW_BIT_DROPPED's
    kernels, and where some allow, on the others too (over every count, else over all members).
    Deterministic: the same inputs give the same ports; `attempt` k gives another set. No port
    of `held` is chosen: a connection from it (one that stalled and still retransmits, or one
    in TIME_WAIT) would make the client's bind() fail with "Address already in use"."""
    address = _address_word(saddr) ^ _address_word(daddr)
    modelled = [(count, LOW_BIT_DROPPED) for count in range(1, members + 1)]
    other = [(count, not LOW_BIT_DROPPED) for count in range(1, members + 1)]
    for models in (modelled + other, modelled + other[-1:], modelled):
        for restart in range(_RESTARTS):
            start = (attempt * ATTEMPT_STRIDE + restart * _RESTART_STEP) % len(CLIENT_PORTS)
            ports = [p for p in list(CLIENT_PORTS[start:]) + list(CLIENT_PORTS[:start]) if p not in held]
            chosen = _first_fit(address, dports, ports[:_WINDOW], models)
            if chosen is not None:
                return chosen
    raise ValueError(f"no client ports spread {len(dports)} streams {saddr} -> {daddr} over {members} members")


# First fit can take a port early that leaves no fitting one for a later stream; it starts over
# from other ports (within the attempt's stride) before asking for less. Each start looks at 256
# ports only, so that a choice takes milliseconds (a whole range scanned for a stream that fits
# nowhere took a second and more); the last demand, one kernel's, was met
# within them in every trial (1 to 8 streams over 1 to 4 members, many address pairs).
_RESTARTS = 20
_RESTART_STEP = 37
_WINDOW = 256


def _first_fit(address: int, dports: list[int], candidates: list[int],
               models: list[tuple[int, bool]]) -> list[int] | None:
    """For each server port in turn, the first candidate that keeps every model's load (count
    of members, lowest bit dropped) as even as it gets."""
    load = [[0] * count for count, _ in models]
    chosen: list[int] = []
    for dport in dports:
        for sport in candidates:
            word = _ports_word(sport, dport) ^ address
            lanes = [_fold(word, drop) % count for count, drop in models]
            if sport not in chosen and all(_fits(loads, lane, len(dports)) for loads, lane in zip(load, lanes)):
                for loads, lane in zip(load, lanes):
                    loads[lane] += 1
                chosen.append(sport)
                break
        else:
            return None
    return chosen


def _fits(loads: list[int], lane: int, streams: int) -> bool:
    # every member streams // count, and streams % count of them one more
    each, extra = divmod(streams, len(loads))
    return loads[lane] < each or (loads[lane] == each and sum(n > each for n in loads) < extra)
