"""perftest (linux-rdma): `ib_write_bw` -> PerftestResult, the bandwidth of the last result row;
`ib_write_lat` -> LatencyResult, its latency table's last row (below).

The header and table are tab/space separated. Units are MB/sec (MiB/s: perftest divides by
2^20) unless `--report_gbits` gives Gb/sec; Gb/sec rows below 0.1 switch to six decimals.
`--run_infinitely` and `-D` print "WARNING: BW peak won't be measured", a peak of 0.00 and a
row per interval: the last row is the result. A wrong GID index prints the header and no row
and still exits 0, so no row is a failure; so is any of perftest's own failure lines.
Trust the client's figures: the server's side of the same run reads differently.
"""

import re
from dataclasses import dataclass

from . import ParseError
from ._between import Between
from ._text import finite_float
from rackproof.probes.probe import Probe

TOOL = "ib_write_bw"

# Each bandwidth column names its own unit: Gb/sec with --report_gbits, else MB/sec (MiB/sec in
# perftest releases that say what they mean: both are 2^20 bytes).
_UNIT = r"(Gb/sec|MB/sec|MiB/sec)"
_TABLE_HEADER = re.compile(
    rf"#bytes\s+#iterations\s+BW peak\[{_UNIT}\]\s+BW average\[{_UNIT}\]\s+MsgRate\[Mpps\]")
# printf("%.2f") of a figure; inf and nan are read so that a row holding one fails the parse
# instead of being skipped for an earlier row.
_FIGURE = r"-?(?:[0-9]+(?:\.[0-9]+)?|inf|nan)"
# bytes, iterations, peak, average, message rate; further columns (--cpu_util, per port) ignored.
_ROW = re.compile(rf"([0-9]{{1,20}})\s+([0-9]{{1,20}})\s+({_FIGURE})\s+({_FIGURE})\s+({_FIGURE})(?:\s.*)?")
_DEVICE = re.compile(r"Device\s*:\s*(\S+)")
_LINK_TYPE = re.compile(r"Link type\s*:\s*(\S+)")
# perftest's failure messages (stderr, usually merged): wrong device, no driver, no server,
# connection setup over rdma_cm, completion errors.
_FAILURE = re.compile(
    r"(?:\w+: )?(?:Couldn't |Unable to |Failed |Did not detect devices|IB device \S+ not found"
    r"|No IB devices found|got completion with error|Completion with error)")

BYTES_PER_MB = 2 ** 20
BITS_PER_SECOND = {"Gb/sec": 1e9, "MB/sec": BYTES_PER_MB * 8, "MiB/sec": BYTES_PER_MB * 8}


@dataclass(frozen=True)
class PerftestResult:
    bytes: int                  # message size of the row
    iterations: int
    bw_peak: float              # 0.0 when the peak was not measured (--run_infinitely, -D)
    bw_average: float
    unit: str                   # of both figures: the average's, "Gb/sec" (--report_gbits), "MB/sec" or "MiB/sec"
    msg_rate: float             # Mpps
    device: str | None = None   # RDMA device the run used: "roceP2p1s0f0"
    link_type: str | None = None  # "Ethernet" (RoCE) or "IB"

    @property
    def gbits_average(self) -> float:
        """Average bandwidth in Gbit/s (10^9 bits) whichever unit perftest printed."""
        return _converted(self.bw_average, self.unit, "Gb/sec")


def parse_ib_write_bw(text: str, gid_index: int | None = None) -> PerftestResult:
    """`gid_index`: the -x the run was given, named when no row came (below)."""
    header, last, device, link_type = _last_row(TOOL, text, _TABLE_HEADER, _ROW, "'#bytes #iterations BW peak...'",
                                                gid_index)
    peak_unit, unit = _TABLE_HEADER.search(header).groups()
    return PerftestResult(
        bytes=int(last[1]),
        iterations=int(last[2]),
        bw_peak=_converted(finite_float(TOOL, last[3], "BW peak", text), peak_unit, unit),
        bw_average=finite_float(TOOL, last[4], "BW average", text),
        unit=unit,
        msg_rate=finite_float(TOOL, last[5], "MsgRate", text),
        device=device,
        link_type=link_type,
    )


def _last_row(tool: str, text: str, header: re.Pattern, row: re.Pattern, shown: str, gid_index: int | None):
    """perftest's answer as every test prints it: none of its failure lines, its table's header
    (`shown` in words), the last row after it (notices between rows passed over); with the
    device and link type its preamble names. (header line, last row, device, link type)"""
    lines = text.splitlines()
    for line in lines:
        if _FAILURE.match(line.strip()):
            raise ParseError(tool, f"perftest failed: {line.strip()!r}", text)
    header_at = next((i for i, line in enumerate(lines) if header.search(line)), None)
    if header_at is None:
        raise ParseError(tool, f"no result table header ({shown})", text)
    rows = [found for line in lines[header_at + 1:] if (found := row.fullmatch(line.strip()))]
    if not rows:
        raise _no_row(tool, text, gid_index)
    preamble = "\n".join(lines[:header_at])
    device, link_type = _DEVICE.search(preamble), _LINK_TYPE.search(preamble)
    return lines[header_at], rows[-1], device[1] if device else None, link_type[1] if link_type else None


def _no_row(tool: str, text: str, gid_index: int | None) -> ParseError:
    # perftest exits 0 when its queue pairs never connect over a GID that does not route
    if gid_index is None:
        return ParseError(tool, "no result row", text)
    return ParseError(tool, f"the run printed its header and no result row, so no data moved. Usual cause: GID index "
                      f"{gid_index} (-x {gid_index}) is not the RoCE v2 GID of the interface's IPv4 address on one of "
                      "the nodes (show_gids lists each device's GIDs)", text)


def _converted(value: float, unit: str, wanted: str) -> float:
    return value if unit == wanted else value * BITS_PER_SECOND[unit] / BITS_PER_SECOND[wanted]


IB_WRITE_BW_SERVER = Probe("ib_write_bw server", "receives RDMA writes on one RoCE device",
                           "ib_write_bw -d {device} -x {gid_index} -F --report_gbits -D {seconds} -p {port}",
                           repeatable=False,
                           unseen="its output is not read: the client's is")
IB_WRITE_BW = Probe("ib_write_bw", "RDMA write bandwidth over one CX7 link (perftest)",
                    "ib_write_bw -d {device} -x {gid_index} -F --report_gbits -D {seconds} -p {port} {address}",
                    parse_ib_write_bw, ("gid_index",), repeatable=False,
                    seen_on=("DGX Spark", "Proxmox VE"),
                    unseen="a DGX Spark's client was seen with --run_infinitely only; a timed run (-D, as the suite "
                           "runs it) on another ConnectX host")
# the links of a port at once: NVIDIA measures a Spark's QSFP port as the sum of its logical interfaces
WRITE_BANDWIDTH = Between(TOOL, "sudo apt install perftest", IB_WRITE_BW_SERVER, IB_WRITE_BW, platforms=("spark",))


# --- ib_write_lat: the latency of RDMA writes, one way --------------------------------------------

LATENCY_TOOL = "ib_write_lat"
# perftest's RESULT_FMT_LAT (src/perftest_parameters.h): the table of a run of -n iterations. A
# timed run (-D) prints t_avg and tps only, and perftest before 4.x t_min, t_max and t_typical
# only: neither is this table, so neither is read.
_LATENCY_HEADER = re.compile(
    r"#bytes\s+#iterations\s+t_min\[usec\]\s+t_max\[usec\]\s+t_typical\[usec\]\s+t_avg\[usec\]\s+t_stdev\[usec\]"
    r"\s+99% percentile\[usec\]\s+99\.9% percentile\[usec\]")
_LATENCY_ROW = re.compile(rf"([0-9]{{1,20}})\s+([0-9]{{1,20}})" + rf"\s+({_FIGURE})" * 7)


@dataclass(frozen=True)
class LatencyResult:
    """One row of ib_write_lat's table, in microseconds: half of each write's round trip, as
    perftest reports a write's latency."""
    bytes: int                  # message size of the row
    iterations: int
    t_min: float
    t_max: float
    t_typical: float            # perftest's median: what the check judges (one slow write moves t_avg)
    t_avg: float
    t_stdev: float
    p99: float
    p999: float
    device: str | None = None   # RDMA device the run used: "rocep1s0f1"
    link_type: str | None = None  # "Ethernet" (RoCE) or "IB"


def parse_ib_write_lat(text: str, gid_index: int | None = None) -> LatencyResult:
    """ib_write_lat's answer: its last row (-a prints one per size). Notices between the header
    and a row ("Conflicting CPU frequency values detected", without -F) are passed over; a
    failure line of perftest's, or a header with no row (a GID that does not route), is an error."""
    _, last, device, link_type = _last_row(LATENCY_TOOL, text, _LATENCY_HEADER, _LATENCY_ROW,
                                           "'#bytes #iterations t_min[usec] ... 99.9% percentile[usec]'", gid_index)
    names = ("t_min", "t_max", "t_typical", "t_avg", "t_stdev", "99% percentile", "99.9% percentile")
    figures = [finite_float(LATENCY_TOOL, last[3 + i], name, text) for i, name in enumerate(names)]
    if any(f < 0 for f in figures) or not figures[0] <= figures[2] <= figures[1]:
        raise ParseError(LATENCY_TOOL, f"figures out of order: t_min {figures[0]}, t_typical {figures[2]}, t_max "
                         f"{figures[1]}", text)
    return LatencyResult(int(last[1]), int(last[2]), *figures, device=device, link_type=link_type)


# 2-byte writes (perftest's default size), -n of them: a timed run (-D) prints no percentiles
LATENCY_ITERATIONS = 10000
IB_WRITE_LAT_SERVER = Probe("ib_write_lat server", "answers RDMA writes on one RoCE device (the latency's other end)",
                            f"ib_write_lat -d {{device}} -x {{gid_index}} -F -n {LATENCY_ITERATIONS} -p {{port}}",
                            repeatable=False, unseen="its output is not read: the client's is")
IB_WRITE_LAT = Probe("ib_write_lat", "RDMA write latency over one CX7 link, one way (perftest)",
                     f"ib_write_lat -d {{device}} -x {{gid_index}} -F -n {LATENCY_ITERATIONS} -p {{port}} {{address}}",
                     parse_ib_write_lat, ("gid_index",), repeatable=False,
                     seen_on=("DGX Spark", "Ubuntu"),
                     unseen="a DGX Spark's client was seen with rdma_cm (-R) only, over the Ethernet exchange (as the "
                            "suite runs it) on soft RoCE and a ConnectX host")
# one link after the other: a run's latency must not be another's load
WRITE_LATENCY = Between(LATENCY_TOOL, "sudo apt install perftest", IB_WRITE_LAT_SERVER, IB_WRITE_LAT, together=False,
                        platforms=("spark",))
