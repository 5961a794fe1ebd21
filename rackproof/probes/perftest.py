"""`ib_write_bw` (linux-rdma perftest) -> PerftestResult: the bandwidth of the last result row.

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
from rackproof.probe import Probe

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
    lines = text.splitlines()
    for line in lines:
        if _FAILURE.match(line.strip()):
            raise ParseError(TOOL, f"perftest failed: {line.strip()!r}", text)
    header_at = next((i for i, line in enumerate(lines) if _TABLE_HEADER.search(line)), None)
    if header_at is None:
        raise ParseError(TOOL, "no result table header ('#bytes #iterations BW peak...')", text)
    rows = [row for line in lines[header_at + 1:] if (row := _ROW.fullmatch(line.strip()))]
    if not rows:
        raise _no_row(TOOL, text, gid_index)
    last = rows[-1]
    preamble = "\n".join(lines[:header_at])
    device, link_type = _DEVICE.search(preamble), _LINK_TYPE.search(preamble)
    peak_unit, unit = _TABLE_HEADER.search(lines[header_at]).groups()
    return PerftestResult(
        bytes=int(last[1]),
        iterations=int(last[2]),
        bw_peak=_converted(finite_float(TOOL, last[3], "BW peak", text), peak_unit, unit),
        bw_average=finite_float(TOOL, last[4], "BW average", text),
        unit=unit,
        msg_rate=finite_float(TOOL, last[5], "MsgRate", text),
        device=device[1] if device else None,
        link_type=link_type[1] if link_type else None,
    )


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
