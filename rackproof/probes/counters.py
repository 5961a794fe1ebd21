"""A lane's error counters: `ethtool -S IFACE` -> {name: value}, `ethtool -i IFACE` -> its driver,
and what the driver's counters say about the cable.

`ethtool -S` prints "NIC statistics:" then one "name: value" per line; the names are the
driver's own, so which counters mean CRC/FCS errors, symbol errors, discards and pause frames is
stated per driver in one table (DRIVERS), each driver's names taken from a real `ethtool -S` of
it (selftests/test_probe_counters.py names the samples). A driver the table does not know is
not judged: its names could mean anything. Several names of one driver often count the same
events (stmmac's mmc_rx_crc_error and rx_crc_errors; mlx5's rx_symbol_err_phy and
rx_pcs_symbol_err_phy), so a kind of error is the largest of its counters, never their sum;
per-ring counters (bnxt_en's "[3]: rx_discards") count different events, so they are summed.
A driver without a counter of a kind reports None for it, never 0.

The bytes a lane received and sent come from the kernel's own counters
(/sys/class/net/IFACE/statistics), the same for every driver.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import ParseError
from ._text import int_value
from .ethtool import split_key_value
from rackproof.probes.probe import Probe

TOOL = "ethtool -S"
TOOL_DRIVER = "ethtool -i"
RING = "[*]: "   # a name in DRIVERS that starts so: the sum of that counter over the rings


@dataclass(frozen=True)
class Names:
    """One driver's counters of each kind (several: the largest; RING + name: summed over rings)."""
    crc: tuple[str, ...]        # frames received with a bad CRC/FCS
    symbol: tuple[str, ...]     # PCS symbol errors (a bad signal before the MAC)
    dropped: tuple[str, ...]    # frames received and discarded (a full buffer as often as a bad cable)
    pause: tuple[str, ...]      # PAUSE (XOFF) frames received: thousands under load is a pause storm


# A Synopsys MAC's MMC counters: stmmac (driver st_gmac) and NVIDIA's nvethernet (the Thor's and
# Orin's MGBE) print the same names; no symbol error counter.
_SYNOPSYS = Names(crc=("mmc_rx_crc_error", "rx_crc_errors"), symbol=(), dropped=("mmc_rx_fifo_overflow",),
                  pause=("mmc_rx_pause_frames",))

# driver, as `ethtool -i` names it -> its counters
DRIVERS = {
    "mlx5_core": Names(crc=("rx_crc_errors_phy",), symbol=("rx_symbol_err_phy", "rx_pcs_symbol_err_phy"),
                       dropped=("rx_discards_phy",), pause=("rx_pause_ctrl_phy",)),
    # port counters, and per-ring ones since kernel 6.x ("[0]: rx_discards")
    "bnxt_en": Names(crc=("rx_fcs_err_frames",), symbol=("rx_pcs_symbol_err",),
                     dropped=("rx_stat_discard", "rx_total_ring_discards", RING + "rx_discards"),
                     pause=("rx_pause_frames",)),
    # Intel counts bad symbols inside a frame as "illegal bytes" (ILLERRC)
    "ice": Names(crc=("rx_crc_errors.nic",), symbol=("illegal_bytes.nic",), dropped=("rx_dropped.nic",),
                 pause=("link_xoff_rx.nic",)),
    "i40e": Names(crc=("port.rx_crc_errors",), symbol=("port.illegal_bytes",), dropped=("port.rx_dropped",),
                  pause=("port.link_xoff_rx",)),
    "nvethernet": _SYNOPSYS,
    "st_gmac": _SYNOPSYS,
}


def parse_ethtool_stats(text: str) -> dict[str, int]:
    """{counter: value} after "NIC statistics:"; a counter named twice keeps its first value.
    A per-ring counter keeps its ring in its name, as the driver prints it: "[0]: rx_discards"."""
    lines = text.splitlines()
    start = next((k for k, line in enumerate(lines) if line.strip() == "NIC statistics:"), None)
    if start is None:
        raise ParseError(TOOL, "no 'NIC statistics:' line", text)
    counters: dict[str, int] = {}
    for line in lines[start + 1:]:
        ring, pair = _ring_and_pair(line)
        if pair is None:
            if line.strip():
                raise ParseError(TOOL, f"not a 'name: value' line: {line.strip()[:80]!r}", text)
            continue
        name, value = pair
        counters.setdefault(ring + name, int_value(TOOL, value, name, text))
    return counters


def _ring_and_pair(line: str) -> tuple[str, tuple[str, str] | None]:
    """("[3]: ", (name, value)) of a per-ring line, ("", (name, value)) of another counter's line."""
    ring, bracket, rest = line.strip().partition("]: ")
    if bracket and ring.startswith("[") and ring[1:].isascii() and ring[1:].isdigit() and len(ring) <= 6:
        return ring + bracket, split_key_value(rest)
    return "", split_key_value(line)


@dataclass(frozen=True)
class LaneErrors:
    crc: int | None
    symbol: int | None
    dropped: int | None
    pause: int | None


def lane_errors(driver: str, counters: dict[str, int]) -> LaneErrors | None:
    """Each kind of error as its driver's largest counter of it; None for a driver DRIVERS does
    not know (its counters are not judged)."""
    names = DRIVERS.get(driver)
    if names is None:
        return None
    rings: dict[str, int] = {}
    for name, value in counters.items():
        if name.startswith("["):
            ring_name = RING + name.partition("]: ")[2]
            rings[ring_name] = rings.get(ring_name, 0) + value

    def largest(kind: tuple[str, ...]) -> int | None:
        values = [rings[n] if n.startswith(RING) else counters[n] for n in kind if n in counters or n in rings]
        return max(values) if values else None
    return LaneErrors(largest(names.crc), largest(names.symbol), largest(names.dropped), largest(names.pause))


def parse_ethtool_driver(text: str) -> str:
    """The driver `ethtool -i IFACE` names on its "driver:" line."""
    for line in text.splitlines():
        pair = split_key_value(line)
        if pair is not None and pair[0] == "driver":
            if not pair[1] or any(c.isspace() for c in pair[1]):
                raise ParseError(TOOL_DRIVER, f"not a driver name: {pair[1][:80]!r}", text)
            return pair[1]
    raise ParseError(TOOL_DRIVER, "no 'driver:' line", text)


def parse_bytes(text: str) -> tuple[int, int]:
    """(received, sent): what `cat .../statistics/rx_bytes .../statistics/tx_bytes` printed."""
    values = text.split()
    if len(values) != 2:
        raise ParseError("rx_bytes/tx_bytes", f"{len(values)} values, not two", text)
    received, sent = (int_value("rx_bytes/tx_bytes", v, "a byte count", text) for v in values)
    return received, sent


def judged() -> str:
    """The counters the error check judges, per driver it knows (the others are shown, not judged)."""
    return "; ".join(f"{driver} {' or '.join(names.crc)}" for driver, names in DRIVERS.items())


STATS = Probe("ethtool -S", "a lane's driver counters (CRC, symbol errors, drops, pause frames); judged, CRC/FCS "
              f"errors by driver: {judged()} (a lane with none of its driver's is not verified)",
              "ethtool -S {interface}", parse_ethtool_stats,
              seen_on=("ST SoC stmmac", "VyOS ConnectX-6 Dx mlx5_core", "Linux 6.6.43 bnxt_en", "E810 ice",
                       "X710 i40e"),
              unseen="no `ethtool -S` of a Thor's MGBE (nvethernet) or of a Spark's ConnectX-7 was found: stmmac has "
                     "the MGBE's Synopsys counter names, mlx5_core of a ConnectX-6 Dx the CX7's")
DRIVER = Probe("ethtool -i", "a lane's driver (which names its error counters)", "ethtool -i {interface}",
               parse_ethtool_driver, once=True,
               seen_on=("DGX Spark DGX OS 7", "Ubuntu ConnectX-7", "E810 ice", "ConnectX-4 Lx mlx5_core",
                        "Linux 6.6 bnxt_en"),
               unseen="no `ethtool -i` of a Jetson AGX Thor's MGBE was found; the DGX Spark's is its first three "
                      "lines only")
BYTES = Probe("rx_bytes tx_bytes", "the bytes a lane has received and sent (the kernel's counters)",
              "cat /sys/class/net/{interface}/statistics/rx_bytes /sys/class/net/{interface}/statistics/tx_bytes",
              parse_bytes, seen_on=("CentOS 6", "Debian 12"),
              unseen="no Jetson AGX Thor or DGX Spark capture was found: each file is one decimal number and a "
                     "newline on every Linux (the kernel's sysfs ABI, sysfs-class-net-statistics)")
