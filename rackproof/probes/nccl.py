"""nccl-tests (`all_reduce_perf`, `all_gather_perf`, ... under mpirun) -> NcclResult.

Column spacing, the version line and `#wrong` ("N/A" with -c 0) vary between versions, and
numbers may come in exponent form. The "# Avg bus bandwidth" line ends in a space, or in
OK/FAILED when NCCL_TESTS_MIN_BW is set. X11 "Authorization required" noise and NCCL INFO/WARN
lines from other ranks are interleaved with the table and are cut out before reading it.
If every rank says "Rank 0", mpirun started separate one-rank jobs instead of one job across
the nodes: `NcclResult.one_job` and `distinct_hosts` show it.
"""

import re
from dataclasses import dataclass

from . import ParseError
from ._text import finite_float
from rackproof.probe import Probe

TOOL = "nccl-tests"

# Noise written by other processes, each a whole message with its newline: it may land in the
# middle of a row (nccl-tests prints a row in pieces), so it is cut out of the text, newline
# included, before the text is split into lines. Host names start with a letter, so a row's
# last digit just before a glued "host:pid:tid [dev] NCCL INFO ..." stays in the row.
_NOISE = re.compile(r"(?:Authorization required, but no authorization protocol specified"
                    r"|[A-Za-z][\w.-]{0,252}:\d+:\d+ \[\d+\] (?:\S+ )?NCCL (?:INFO|WARN)\b[^\n]*)\n?")
# "%g"/"%f" output, exponent form included ("1.2e+07" when a time outgrows its column). The
# optional decimal point and decimals are one group: "[0-9]+\.?[0-9]*" splits a digit run in
# quadratically many ways before a fullmatch can fail. inf and nan are read so that a row or
# average holding one fails the parse instead of being skipped.
_NUMBER_PATTERN = r"[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?|[-+]?(?:inf|nan)"
_NUMBER = re.compile(_NUMBER_PATTERN)
_SIZE = re.compile(r"[0-9]{1,20}")
_ROOT = re.compile(r"-?[0-9]{1,20}")
# The table's first header line names the columns: size count type redop root, then time algbw
# busbw #wrong out-of-place and again in-place, with optional extras (#bitdiff, per-iteration
# i_min..i_cv%, timestamp) after each #wrong. Rows are read by those positions.
_KEY_COLUMNS = ["size", "count", "type", "redop", "root"]
_TIME_COLUMNS = ("time", "cputime")
_CLASSIC_COLUMNS = (5, 9)   # where the two "time" columns are without extras (and without a header)
_RANK = re.compile(r"#\s*Rank\s+([0-9]{1,9})\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s+(\S+)\s+device\b.*")
_COLLECTIVE = re.compile(r"# Collective test starting: (\S+)")
_OUT_OF_BOUNDS = re.compile(r"#?\s*Out of bounds values\s*:\s*([0-9]{1,20})\s+(OK|FAILED)\s*")
# "\s*(OK|FAILED)?\s*" would split a run of spaces between its two \s* in quadratically many ways
_AVG_BUSBW = re.compile(rf"#?\s*Avg bus bandwidth\s*:\s*({_NUMBER_PATTERN})\s*(?:(OK|FAILED)\s*)?")
# "host: Test CUDA failure common.cu:502 '...'", "Test NCCL failure", " .. host pid N: Test failure"
_FAILURE = re.compile(r"\bTest (?:CUDA |NCCL )?failure\b|\bTest timeout\b")
# GB/s: five times NVLink 5's 1.8 TB/s per GPU. A larger average is a broken run, not a fast one.
MAX_BUSBW_GBS = 10_000.0
# nccl-tests averages the bus bandwidth of every row, out-of-place and in-place, before the rows
# are rounded for print (to 2 decimals, fewer as a figure grows): the printed average lies within
# the printed rows' range but for that rounding. Several one-rank jobs print one average each.
_ROUNDING = (0.01, 0.01)   # relative, absolute (GB/s)


@dataclass(frozen=True)
class NcclRow:
    size: int                   # bytes
    count: int                  # elements
    type: str                   # "float", "bfloat16", ...
    redop: str                  # "sum"; "none" for all_gather
    root: int                   # -1 when the collective has no root
    oop_time_us: float          # out-of-place
    oop_algbw: float            # GB/s
    oop_busbw: float            # GB/s, the figure comparable across collectives and rank counts
    oop_wrong: float | None     # wrong elements (older versions: max delta); None for "N/A"
    ip_time: float              # in-place, microseconds
    ip_algbw: float
    ip_busbw: float
    ip_wrong: float | None


@dataclass(frozen=True)
class NcclResult:
    rows: tuple[NcclRow, ...]
    avg_busbw_gbs: float        # "# Avg bus bandwidth" (GB/s, bytes not bits)
    out_of_bounds: int | None   # None when the line is missing
    ok: bool                    # every "Out of bounds values" line says OK
    ranks: tuple[tuple[int, str], ...]  # (rank, host) of each "#  Rank N ... on HOST device" line
    collective: str | None = None        # "all_reduce_perf"
    min_bw_passed: bool | None = None    # the OK/FAILED after the average; None without NCCL_TESTS_MIN_BW

    @property
    def distinct_hosts(self) -> tuple[str, ...]:
        """Hosts that ran ranks, in order of first appearance."""
        return tuple(dict.fromkeys(host for _, host in self.ranks))

    @property
    def one_job(self) -> bool:
        """The ranks are 0..n-1, each once: one NCCL job, not several one-rank jobs.
        False when no rank line was printed."""
        ranks = sorted(rank for rank, _ in self.ranks)
        return bool(ranks) and ranks == list(range(len(ranks)))


def parse_nccl(text: str) -> NcclResult:
    rows, ranks = [], []
    collective = avg = None
    out_of_bounds: list[re.Match] = []
    time_columns = _CLASSIC_COLUMNS
    for line in _NOISE.sub("", text).splitlines():
        line = line.strip()
        if _FAILURE.search(line):
            raise ParseError(TOOL, f"test failed: {line!r}", text)
        if not line.startswith("#"):
            if row := _row(line.split(), time_columns, text):
                rows.append(row)
        elif line[1:].split()[:5] == _KEY_COLUMNS:
            time_columns = _time_columns(line[1:].split(), text)
        elif match := _RANK.fullmatch(line):
            ranks.append((int(match[1]), match[2]))
        elif match := _COLLECTIVE.fullmatch(line):
            collective = collective or match[1]
        elif match := _OUT_OF_BOUNDS.fullmatch(line):
            out_of_bounds.append(match)
        elif match := _AVG_BUSBW.fullmatch(line):
            avg = match                     # several one-rank jobs: the last one's
    if avg is None:
        raise ParseError(TOOL, "no '# Avg bus bandwidth' line: the test did not finish", text)
    if not rows:
        raise ParseError(TOOL, "an '# Avg bus bandwidth' line but no result row: nothing was measured", text)
    verdict = avg[2]
    return NcclResult(
        rows=tuple(rows),
        avg_busbw_gbs=_average(avg[1], rows, text),
        # separate one-rank jobs each print their own summary: add them up
        out_of_bounds=sum(int(m[1]) for m in out_of_bounds) if out_of_bounds else None,
        ok=bool(out_of_bounds) and all(m[2] == "OK" for m in out_of_bounds),
        ranks=tuple(ranks),
        collective=collective,
        min_bw_passed=None if verdict is None else verdict == "OK",
    )


def _average(printed: str, rows: list[NcclRow], text: str) -> float:
    """The printed average bus bandwidth, checked to be one the rows can have given."""
    average = finite_float(TOOL, printed, "Avg bus bandwidth", text)
    if not 0 <= average <= MAX_BUSBW_GBS:
        raise ParseError(TOOL, f"Avg bus bandwidth {printed} GB/s is not a bus bandwidth (0 to {MAX_BUSBW_GBS:g})",
                         text)
    busbw = [figure for row in rows for figure in (row.oop_busbw, row.ip_busbw)]
    relative, absolute = _ROUNDING
    low, high = min(busbw) * (1 - relative) - absolute, max(busbw) * (1 + relative) + absolute
    if not low <= average <= high:
        raise ParseError(TOOL, f"Avg bus bandwidth {printed} GB/s is not an average of the rows' bus bandwidths "
                               f"({min(busbw):g} to {max(busbw):g} GB/s)", text)
    return average


def _time_columns(names: list[str], text: str) -> tuple[int, int]:
    positions = [i for i, name in enumerate(names) if name in _TIME_COLUMNS]
    if len(positions) != 2:
        raise ParseError(TOOL, f"column header without an out-of-place and an in-place time: {names!r}", text)
    return positions[0], positions[1]


def _row(tokens: list[str], time_columns: tuple[int, int], text: str) -> NcclRow | None:
    """The row in these tokens, or None when they are not one (noise, a cut line). A row
    whose figures are not finite (inf, nan, more digits than a double holds) is a ParseError."""
    oop, ip = time_columns
    if len(tokens) < ip + 4 or not (_SIZE.fullmatch(tokens[0]) and _SIZE.fullmatch(tokens[1])
                                    and _ROOT.fullmatch(tokens[4])):
        return None
    # time, algbw, busbw and #wrong of each half
    halves = [tokens[oop:oop + 4], tokens[ip:ip + 4]]
    if not all(_NUMBER.fullmatch(value) for half in halves for value in half[:3]) \
            or not all(_NUMBER.fullmatch(half[3]) or half[3] == "N/A" for half in halves):
        return None
    out_of_place, in_place = (_figures(half, tokens[0], text) for half in halves)
    return NcclRow(int(tokens[0]), int(tokens[1]), tokens[2], tokens[3], int(tokens[4]),
                   *out_of_place, *in_place)


def _figures(half: list[str], size: str, text: str) -> list[float | None]:
    """time, algbw, busbw and #wrong (None for "N/A") of one half of a row."""
    figures: list[float | None] = [finite_float(TOOL, value, f"{name} of the {size}-byte row", text)
                                   for name, value in zip(("time", "algbw", "busbw"), half)]
    wrong = None if half[3] == "N/A" else finite_float(TOOL, half[3], f"#wrong of the {size}-byte row", text)
    return figures + [wrong]


# NVIDIA's sizes for the Spark playbook's test: 1 GB to 4 GB, doubling, one GPU per rank
NCCL_TEST = Probe("mpirun nccl-tests", "bus bandwidth of one NCCL collective across the nodes over CX7",
                  "mpirun -np {ranks} -H {hosts} --mca btl_tcp_if_include {interface} "
                  "-x NCCL_SOCKET_IFNAME={interface} -x NCCL_DEBUG=WARN {test} -b 1G -e 4G -f 2 -g 1",
                  parse_nccl, timeout=300, repeatable=False, seen_on=("DGX Spark", "OCI A100"),
                  unseen="run where [expect] run_nccl asks (a DGX Spark pair by default): no run of a Jetson AGX Thor shelf was found")
