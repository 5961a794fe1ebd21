"""A lane's error counters: `ethtool -S IFACE` -> {name: value}, and what they say about the cable.

`ethtool -S` prints "NIC statistics:" then one "name: value" per line; the names are the
driver's own (mlx5: rx_crc_errors_phy, rx_symbol_err_phy, rx_discards_phy; stmmac:
mmc_rx_crc_error, rx_crc_errors; Intel: rx_crc_errors.nic). Several names often count the same
events (stmmac's mmc_rx_crc_error and rx_crc_errors; mlx5's rx_symbol_err_phy and
rx_pcs_symbol_err_phy), so a kind of error is the largest of its counters, never their sum. Counts
are read before and after load; a driver without such a counter reports None, never 0.

The bytes a lane received and sent come from the kernel's own counters
(/sys/class/net/IFACE/statistics), the same for every driver.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from . import ParseError
from ._text import int_value
from .ethtool import split_key_value
from rackproof.probe import Probe

TOOL = "ethtool -S"

# a kind of error -> what its counters' names hold (any driver); matched whole-word-ish in the name
KINDS = {
    "crc": re.compile(r"(crc|fcs)_?err"),
    # not mlx5's rx_err_lane_N_phy: those are bits the FEC corrected, per lane
    "symbol": re.compile(r"symbol_?err"),
    "dropped": re.compile(r"discard|drop"),
}


def parse_ethtool_stats(text: str) -> dict[str, int]:
    """{counter: value} after "NIC statistics:"; a counter named twice keeps its first value."""
    lines = text.splitlines()
    start = next((k for k, line in enumerate(lines) if line.strip() == "NIC statistics:"), None)
    if start is None:
        raise ParseError(TOOL, "no 'NIC statistics:' line", text)
    counters: dict[str, int] = {}
    for line in lines[start + 1:]:
        pair = split_key_value(line)
        if pair is None:
            if line.strip():
                raise ParseError(TOOL, f"not a 'name: value' line: {line.strip()[:80]!r}", text)
            continue
        name, value = pair
        counters.setdefault(name, int_value(TOOL, value, name, text))
    return counters


@dataclass(frozen=True)
class LaneErrors:
    crc: int | None         # frames received with a bad CRC/FCS
    symbol: int | None      # PCS symbol / lane errors
    dropped: int | None     # frames discarded (a full buffer as often as a bad cable: reported, not judged)


def lane_errors(counters: dict[str, int]) -> LaneErrors:
    """Each kind of error as its largest counter (names that count the same events overlap)."""
    def largest(kind: str) -> int | None:
        values = [v for name, v in counters.items() if KINDS[kind].search(name.lower())]
        return max(values) if values else None
    return LaneErrors(largest("crc"), largest("symbol"), largest("dropped"))


def render_ethtool_stats(counters: dict[str, int]) -> str:
    """`ethtool -S IFACE` as ethtool prints it (five spaces, name, colon, value)."""
    return "NIC statistics:\n" + "".join(f"     {name}: {value}\n" for name, value in counters.items())


def parse_bytes(text: str) -> tuple[int, int]:
    """(received, sent): what `cat .../statistics/rx_bytes .../statistics/tx_bytes` printed."""
    values = text.split()
    if len(values) != 2:
        raise ParseError("rx_bytes/tx_bytes", f"{len(values)} values, not two", text)
    received, sent = (int_value("rx_bytes/tx_bytes", v, "a byte count", text) for v in values)
    return received, sent


STATS = Probe("ethtool -S", "a lane's driver counters (CRC, symbol errors, drops)", "LC_ALL=C ethtool -S {interface}",
              parse_ethtool_stats)
BYTES = Probe("rx_bytes tx_bytes", "the bytes a lane has received and sent (the kernel's counters)",
              "cat /sys/class/net/{interface}/statistics/rx_bytes /sys/class/net/{interface}/statistics/tx_bytes",
              parse_bytes)
