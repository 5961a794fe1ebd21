"""Lane rates: an htb class on the egress of both ends of every link, at the modelled rate x
the rack's scale (25 Gbit/s -> 250 Mbit/s at 0.01)."""

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


def htb_lines(dev: str, mbit: float) -> list[str]:
    """tc batch lines that shape `dev`'s egress to `mbit`."""
    return [
        f"qdisc add dev {dev} root handle 1: htb default 1",
        f"class add dev {dev} parent 1: classid 1:1 htb {_params(mbit)}",
    ]


def change_lines(dev: str, mbit: float) -> list[str]:
    return [f"class change dev {dev} parent 1: classid 1:1 htb {_params(mbit)}"]
