"""What each figure is judged against: one table of named references, stated as data, and the
[expect] settings their bounds follow from.

In the manner of ReFrame's `reference` (a value with bounds and a unit, per system), kept
simpler: a reference names the figure's kind (its group in the report's charts), its unit,
which way is better, and how its bound follows from cluster.toml's [expect] (the platform's
defaults unless the file says otherwise) and from the counts of what was measured (how many
lanes two bonds share). Figures recorded for the report without a bound are in the table too,
so every figure the suite can record is listed here with its unit. A check says
`measure("bond.rate", subject, value, "bit/s", lanes=4)` and never computes a bound; a value
comes in the unit its tool printed and is converted here, once.

A bound's setting is stated here once: its [expect] field, default, unit, range and line in
docs/inventory.md. inventory.model.Expect makes its fields from SETTINGS (so cluster.toml is checked
against the same range), and docs/inventory.md's [expect] section is written from Expect
(`python -m rackproof.inventory.docs docs/inventory.md`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Literal

from rackproof.inventory.figures import Expectation, Measurement

if TYPE_CHECKING:   # inventory makes Expect from the settings below: it imports this module
    from rackproof.inventory.model import Expect

MAX_GBPS = 1600.0   # 1.6 Tb/s: above any Ethernet port or lane sold today


@dataclass(frozen=True)
class Setting:
    """An [expect] field a bound follows from. Its range keeps every bound finite and able to
    fail (a floor of 0, nan or inf never fails); `none` says what no value means."""

    name: str                      # the field in cluster.toml's [expect] and on inventory.model.Expect
    default: float | None
    doc: str                       # its line in docs/inventory.md
    unit: str = ""                 # "": a plain number (a fraction, a count of lanes)
    gt: float | None = 0
    ge: float | None = None
    lt: float | None = None
    le: float | None = None
    none: str = ""

    def __call__(self, expect: Expect) -> float | None:
        return getattr(expect, self.name)


LANE_RATE = Setting("lane_rate_gbps", None, "what one lane carries, the base of the lane and bond rate references "
                    "(a simulated rack writes its shaped rate here)", "Gbit/s", le=MAX_GBPS,
                    none="none (the lane speed)")
LANE_FLOOR = Setting("lane_floor_fraction", 0.9, "iperf3, one stream, vs one lane", le=1)
BOND_FLOOR = Setting("bond_floor_fraction", 0.9, "iperf3 -P 4 vs lanes x lane speed", le=1)
ONE_STREAM_LANES = Setting("single_stream_ceiling_lanes", 1.3, "one stream over a bond stays on about one lane; at 2 "
                           "or more one lane could not be told from two", gt=None, ge=1, lt=2)
ROCE_FLOOR = Setting("roce_floor_gbps", 180.0, "ib_write_bw over both links, summed", "Gb/s", le=MAX_GBPS)
# a DGX Spark's CX7 link writes 2 bytes in 1.47 µs typical (samples/ib_write_lat_dgx_spark_*); a ConnectX on
# InfiniBand 1.87 µs; a link that pauses, retransmits or runs in software takes tens to hundreds
RDMA_LATENCY = Setting("rdma_latency_max_us", 5.0, "ib_write_lat over one CX7 link, each direction: the typical "
                       "(median) latency of a 2-byte RDMA write", "µs", le=1000)
# --- per CX7 link (issue 43): NVIDIA's check-connectx-bandwidth (dgx-spark-playbooks, connect-two-sparks)
# passes a rail at 80 Gb/s (DEFAULT_HEALTHY_MIN_GBPS, "conservative"); NVIDIA's performance guide there measures
# 92.57 and 97.28 Gb/s on a port's two rails at once (samples/ib_write_bw_dgx_spark_client_run_infinitely.txt)
ROCE_LINK_FLOOR = Setting("roce_link_floor_gbps", 80.0, "ib_write_bw over one CX7 link (one PCIe function of the "
                          "port), each direction, its twin running at the same time", "Gb/s", le=MAX_GBPS)
NCCL_FLOOR = Setting("nccl_busbw_floor_gbs", 21.875, "NCCL bus bandwidth", "GB/s", le=MAX_GBPS / 8)
REMOTE_RATIO = Setting("remote_tokens_ratio_floor", 0.9, "a model on another node vs the agent's node", le=1)
# a healthy 25G or 200G DAC corrects a few (a pre-FEC bit error rate under ~1e-8); a marginal one
# corrects thousands and fails next week
FEC_PER_GB = Setting("fec_corrected_per_gb", 1000.0, "corrected FEC blocks a lane may receive per GB under load "
                     "(`test_lane_error_counters_under_load`); any uncorrectable block or CRC/FCS error fails "
                     "whatever this says", "blocks/GB", le=1e9)
FIRST_TOKEN = Setting("first_token_seconds", 5.0, "the time-to-first-token bound: a first token after it fails its "
                      "check as a figure (\"first token after 20.1 s (bound 5 s)\")", "s", le=120)
# --- the kernel's own reports (issue 43): how far back from the end of the run each node's kernel
# log is judged; a day covers a run and the night's burn-in before it
KERNEL_LOG_WINDOW = Setting("kernel_log_window_hours", 24.0, "how far back from the end of the run each node's "
                            "kernel log is judged: the run, and this many hours before it (Xid, PCIe AER, mlx5/mgbe "
                            "errors, cluster link flaps, an unclean previous shutdown)", "h", le=24 * 366)
SETTINGS = (LANE_RATE, LANE_FLOOR, BOND_FLOOR, ONE_STREAM_LANES, ROCE_FLOOR, RDMA_LATENCY, NCCL_FLOOR, REMOTE_RATIO,
            FEC_PER_GB, FIRST_TOKEN, ROCE_LINK_FLOOR)
SETTINGS += (KERNEL_LOG_WINDOW,)   # issue 43

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
    rate = LANE_RATE(expect)
    return rate if rate is not None else expect.lane_speed_mbps / 1000


@dataclass(frozen=True)
class Reference:
    name: str
    kind: str                      # the measurement kind, as charted: "lane rate", "bonded rate", ...
    unit: str
    bound: Callable[..., float | None] = lambda expect: None   # bound(expect, **counts); None: not judged
    rule: str = "recorded, not judged"   # how the bound follows from [expect], in the report's words
    better: Literal["higher", "lower"] = "higher"
    target: float | None = None    # beyond the bound, what a figure should reach (short of it: warned)
    setting: Setting | None = None  # the [expect] field its bound follows from, with its default and docs line

    def expectation(self, expect: Expect, **counts) -> Expectation | None:
        bound = self.bound(expect, **counts)
        return None if bound is None else Expectation(bound, self.target, better=self.better)

    def bound_in(self, unit: str, expect: Expect, **counts) -> float:
        """The bound in `unit` (what a measurement compares its raw figure with, bit/s for iperf3)."""
        return convert(self.bound(expect, **counts), self.unit, unit)


REFERENCES = {r.name: r for r in (
    Reference("lane.rate", "lane rate", "Gbit/s", lambda e: lane_gbps(e) * LANE_FLOOR(e),
              "lane_floor_fraction x one lane's rate", setting=LANE_FLOOR),
    Reference("lane.one_stream_ceiling", "one stream over a bond", "Gbit/s",
              lambda e: lane_gbps(e) * ONE_STREAM_LANES(e),
              "single_stream_ceiling_lanes x one lane's rate: one TCP stream stays on one lane of a bond",
              better="lower", setting=ONE_STREAM_LANES),
    Reference("bond.rate", "bonded rate", "Gbit/s", lambda e, lanes: lanes * lane_gbps(e) * BOND_FLOOR(e),
              "bond_floor_fraction x lanes x one lane's rate", setting=BOND_FLOOR),
    Reference("bond.rate.lane_down", "bonded rate, one lane down", "Gbit/s",
              lambda e, lanes: (lanes - 1) * lane_gbps(e) * BOND_FLOOR(e),
              "bond_floor_fraction x (lanes - 1) x one lane's rate", setting=BOND_FLOOR),
    Reference("bond.rate.lane_down_ceiling", "bonded rate, one lane down", "Gbit/s",
              lambda e, lanes: (lanes - 0.5) * lane_gbps(e),
              "(lanes - 1/2) x one lane's rate: with a lane down the bond cannot carry all of them", better="lower"),
    Reference("bond.rate.lane_back", "bonded rate, lane back", "Gbit/s",
              lambda e, lanes: lanes * lane_gbps(e) * BOND_FLOOR(e),
              "bond_floor_fraction x lanes x one lane's rate", setting=BOND_FLOOR),
    Reference("roce.port", "RoCE", "Gb/s", ROCE_FLOOR, "roce_floor_gbps (the RDMA hardware's own figure, never scaled)",
              setting=ROCE_FLOOR),
    Reference("roce.link", "RoCE per link", "Gb/s", ROCE_LINK_FLOOR, "roce_link_floor_gbps (each link and direction)",
              setting=ROCE_LINK_FLOOR),
    Reference("roce.latency", "RDMA latency", "µs", RDMA_LATENCY, "rdma_latency_max_us", better="lower",
              setting=RDMA_LATENCY),
    Reference("nccl.busbw", "NCCL bus bandwidth", "GB/s", NCCL_FLOOR, "nccl_busbw_floor_gbs", setting=NCCL_FLOOR),
    Reference("first_token", "time to first token", "ms", lambda e: convert(FIRST_TOKEN(e), "s", "ms"),
              "first_token_seconds", better="lower", setting=FIRST_TOKEN),
    # an engine's floor is its own ([[engines]] tokens_per_s_floor), given as a count
    Reference("tokens", "tokens/s", "tokens/s", lambda e, floor=None: floor,
              "the engine's tokens_per_s_floor (none: recorded, not judged)"),
    Reference("remote_ratio", "remote/local tokens/s", "ratio", REMOTE_RATIO, "remote_tokens_ratio_floor",
              setting=REMOTE_RATIO),
    Reference("lane.fec_corrected", "FEC corrected under load", "blocks/GB", FEC_PER_GB, "fec_corrected_per_gb",
              better="lower", setting=FEC_PER_GB),
    # recorded for the report: the attempt a retry replaced, per-link and per-peer figures
    Reference("lane.rate.other_attempt", "lane rate, other attempt", "Gbit/s"),
    Reference("bond.rate.other_attempt", "bonded rate, other attempt", "Gbit/s"),
    Reference("remote_ratio.other_attempt", "remote/local tokens/s, other comparison", "ratio"),
    Reference("tokens.other_attempt", "tokens/s, other chat", "tokens/s"),
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
    return max(FIRST_TOKEN_WAIT_FACTOR * FIRST_TOKEN(expect), FIRST_TOKEN_WAIT_MIN_S)


def reference(name: str) -> Reference:
    return REFERENCES[name]


def measured(name: str, subject: str, value: float, unit: str, expect: Expect, **counts) -> Measurement:
    """The figure as the report keeps it: in its reference's unit, with its expectation. Never
    rounded: a simulated lane carries 0.025 Gbit/s, where a figure rounded to the thousandth
    failed a bond at 0.0905 of its 0.09 Gbit/s floor (0.0905 became 0.09, under 0.09000000000000001)."""
    ref = reference(name)
    return Measurement(ref.kind, subject, convert(value, unit, ref.unit), ref.unit,
                       ref.expectation(expect, **counts), name)
