"""Lane rates: an htb class on the egress of both ends of every link, at the modelled rate x
the rack's scale (25 Gbit/s -> 25 Mbit/s at 0.001)."""

from __future__ import annotations


def kbit(mbit: float) -> str:
    return f"{max(int(round(mbit * 1000)), 8)}kbit"


# How long the shaper may go unserved without losing rate: htb keeps at most `burst` bytes of
# credit, so a lane whose qdisc runs late (a busy host, a vCPU the hypervisor holds for a few
# ms) falls below its rate for good. 25 ms covers what two shared cores show; it lets a 3 s
# measurement read at most 25 ms / 3 s (under 1%) above the rate after an idle moment.
CREDIT_SECONDS = 0.025


def _params(mbit: float) -> str:
    # burst: at least one 64 KB GSO super-packet (htb's default of ~1.5 KB at these rates makes
    # TCP lose 10% to the shaper); quantum below htb's warning threshold
    burst = max(65536, int(mbit * 1e6 / 8 * CREDIT_SECONDS))
    rate = kbit(mbit)
    return f"rate {rate} ceil {rate} burst {burst}b cburst {burst}b quantum 60000"


# Small packets (TCP's ACKs) go first: the shaper's queue holds up to a thousand 64 KB GSO
# packets, seconds of data at these rates, which a NIC's ring never does; an ACK queued behind
# the lane's outgoing data would stall what the lane receives meanwhile (a node sends to one peer
# while it receives from another in a round of throughput tests). IPv4 total length < 256. So do
# pings of any size: a don't-fragment ping of the MTU waits one second for its reply, which a
# real lane's queue never delays that long.
SMALL, BULK = "1:10", "1:20"


def htb_lines(dev: str, mbit: float) -> list[str]:
    """tc batch lines that shape `dev`'s egress to `mbit`, small packets first."""
    return [
        f"qdisc add dev {dev} root handle 1: htb default 20",
        f"class add dev {dev} parent 1: classid 1:1 htb {_params(mbit)}",
        f"class add dev {dev} parent 1:1 classid {SMALL} htb {_params(mbit)} prio 0",
        f"class add dev {dev} parent 1:1 classid {BULK} htb {_params(mbit)} prio 1",
        f"filter add dev {dev} parent 1: protocol ip prio 1 u32 match u16 0x0000 0xff00 at 2 flowid {SMALL}",
        f"filter add dev {dev} parent 1: protocol ip prio 1 u32 match ip protocol 1 0xff flowid {SMALL}",
    ]


def change_lines(dev: str, mbit: float) -> list[str]:
    return [f"class change dev {dev} parent {parent} classid {cls} htb {_params(mbit)}{extra}"
            for parent, cls, extra in (("1:", "1:1", ""), ("1:1", SMALL, " prio 0"), ("1:1", BULK, " prio 1"))]
