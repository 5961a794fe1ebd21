"""What each figure is judged against: one table of named references, stated as data.

In the manner of ReFrame's `reference` (a value with bounds and a unit, per system), kept
simpler: a reference names the figure's kind (its group in the report's charts), its unit,
which way is better, and how its bound follows from cluster.toml's [expect] (the platform's
defaults unless the file says otherwise) and from the counts of what was measured (how many
lanes two bonds share). Figures recorded for the report without a bound are in the table too,
so every figure the suite can record is listed here with its unit. A check says
`measure("bond.rate", subject, value, "bit/s", lanes=4)` and never computes a bound; a value
comes in the unit its tool printed and is converted here, once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Literal

from .inventory import Expect
from .measure import Expectation, Measurement

# (from, to) -> factor: the only unit conversions the suite makes
_FACTORS = {("bit/s", "Gbit/s"): 1e-9, ("Gbit/s", "bit/s"): 1e9, ("s", "ms"): 1e3, ("ms", "s"): 1e-3}


def convert(value: float, unit: str, to: str) -> float:
    if unit == to:
        return value
    if (unit, to) not in _FACTORS:
        raise ValueError(f"no conversion from {unit} to {to}")
    return value * _FACTORS[unit, to]


def lane_gbps(expect: Expect) -> float:
    """What one lane carries: its speed, unless [expect] lane_rate_gbps says otherwise (a
    simulated rack writes its lanes' rate there)."""
    return expect.lane_rate_gbps if expect.lane_rate_gbps is not None else expect.lane_speed_mbps / 1000


@dataclass(frozen=True)
class Reference:
    name: str
    kind: str                      # the measurement kind, as charted: "lane rate", "bonded rate", ...
    unit: str
    bound: Callable[..., float | None] = lambda expect: None   # bound(expect, **counts); None: not judged
    rule: str = "recorded, not judged"   # how the bound follows from [expect], in the report's words
    better: Literal["higher", "lower"] = "higher"
    target: float | None = None    # beyond the bound, what a figure should reach (short of it: warned)

    def expectation(self, expect: Expect, **counts) -> Expectation | None:
        bound = self.bound(expect, **counts)
        return None if bound is None else Expectation(bound, self.target, better=self.better)

    def bound_in(self, unit: str, expect: Expect, **counts) -> float:
        """The bound in `unit` (what a measurement compares its raw figure with, bit/s for iperf3)."""
        return convert(self.bound(expect, **counts), self.unit, unit)


REFERENCES = {r.name: r for r in (
    Reference("lane.rate", "lane rate", "Gbit/s", lambda e: lane_gbps(e) * e.lane_floor_fraction,
              "lane_floor_fraction x one lane's rate"),
    Reference("lane.one_stream_ceiling", "one stream over a bond", "Gbit/s",
              lambda e: lane_gbps(e) * e.single_stream_ceiling_lanes,
              "single_stream_ceiling_lanes x one lane's rate: one TCP stream stays on one lane of a bond",
              better="lower"),
    Reference("bond.rate", "bonded rate", "Gbit/s", lambda e, lanes: lanes * lane_gbps(e) * e.bond_floor_fraction,
              "bond_floor_fraction x lanes x one lane's rate"),
    Reference("bond.rate.lane_down", "bonded rate, one lane down", "Gbit/s",
              lambda e, lanes: (lanes - 1) * lane_gbps(e) * e.bond_floor_fraction,
              "bond_floor_fraction x (lanes - 1) x one lane's rate"),
    Reference("bond.rate.lane_down_ceiling", "bonded rate, one lane down", "Gbit/s",
              lambda e, lanes: (lanes - 0.5) * lane_gbps(e),
              "(lanes - 1/2) x one lane's rate: with a lane down the bond cannot carry all of them", better="lower"),
    Reference("bond.rate.lane_back", "bonded rate, lane back", "Gbit/s",
              lambda e, lanes: lanes * lane_gbps(e) * e.bond_floor_fraction,
              "bond_floor_fraction x lanes x one lane's rate"),
    Reference("roce.port", "RoCE", "Gb/s", lambda e: e.roce_floor_gbps,
              "roce_floor_gbps (the RDMA hardware's own figure, never scaled)"),
    Reference("nccl.busbw", "NCCL bus bandwidth", "GB/s", lambda e: e.nccl_busbw_floor_gbs, "nccl_busbw_floor_gbs"),
    Reference("first_token", "time to first token", "ms", lambda e: e.first_token_seconds * 1000,
              "first_token_seconds", better="lower"),
    Reference("tokens", "tokens/s", "tokens/s", lambda e, floor=None: floor,
              "the engine's tokens_per_s_floor (none: recorded, not judged)"),
    Reference("remote_ratio", "remote/local tokens/s", "ratio", lambda e: e.remote_tokens_ratio_floor,
              "remote_tokens_ratio_floor"),
    Reference("lane.fec_corrected", "FEC corrected under load", "blocks/GB", lambda e: e.fec_corrected_per_gb,
              "fec_corrected_per_gb", better="lower"),
    # recorded for the report: the attempt a retry replaced, per-link and per-peer figures
    Reference("lane.rate.other_attempt", "lane rate, other attempt", "Gbit/s"),
    Reference("bond.rate.other_attempt", "bonded rate, other attempt", "Gbit/s"),
    Reference("roce.link", "RoCE per link", "Gb/s"),
    Reference("rtt", "round-trip time", "ms"),
    Reference("tokens.direct", "tokens/s direct", "tokens/s"),
)}


# A chat waits this many times the first-token bound for its first token, and at least this long:
# a first token after the bound is then a figure (slow), and only none by then means that the engine
# does not generate; a real engine's first request after a start can take tens of seconds.
FIRST_TOKEN_WAIT_FACTOR = 4
FIRST_TOKEN_WAIT_MIN_S = 30.0


def first_token_wait_s(expect: Expect) -> float:
    """How long a chat waits for its first token: [expect] first_token_wait_seconds, else
    FIRST_TOKEN_WAIT_FACTOR x first_token_seconds, at least FIRST_TOKEN_WAIT_MIN_S."""
    if expect.first_token_wait_seconds is not None:
        return expect.first_token_wait_seconds
    return max(FIRST_TOKEN_WAIT_FACTOR * expect.first_token_seconds, FIRST_TOKEN_WAIT_MIN_S)


def reference(name: str) -> Reference:
    return REFERENCES[name]


def measured(name: str, subject: str, value: float, unit: str, expect: Expect, **counts) -> Measurement:
    """The figure as the report keeps it: in its reference's unit, rounded, with its expectation."""
    ref = reference(name)
    return Measurement(ref.kind, subject, round(convert(value, unit, ref.unit), 3), ref.unit,
                       ref.expectation(expect, **counts), name)
