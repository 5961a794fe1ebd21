"""nccl-tests (`all_reduce_perf`, `all_gather_perf`, ... under mpirun) -> NcclResult.

Column spacing, the version line and `#wrong` ("N/A" with -c 0) vary between versions, and
numbers may come in exponent form. The "# Avg bus bandwidth" line ends in a space, or in
OK/FAILED when NCCL_TESTS_MIN_BW is set. X11 "Authorization required" noise and NCCL INFO/WARN
lines from other ranks are interleaved with the table and are cut out before reading it.
If every rank says "Rank 0", mpirun started separate one-rank jobs instead of one job across
the nodes: `NcclResult.one_job` and `distinct_hosts` show it.
"""

import dataclasses
import re
from collections.abc import Iterator
from dataclasses import dataclass

from . import ParseError
from ._text import finite_float
from rackproof.probes.probe import Probe

TOOL = "nccl-tests"

# Noise written by other processes, each a whole message with its newline: it may land in the
# middle of a row (nccl-tests prints a row in pieces), so it is cut out of the text, newline
# included, before the text is split into lines: "Authorization required, ..." and
# "host:pid:tid [dev] [word ]NCCL INFO|WARN ..." to its line's end. Host names start with a
# letter, so a row's last digit just before a glued host stays in the row. The mark is found
# first and the host read backwards from it (_cut_noise): a regex searched forwards tried every
# letter of a long word as a host's first (0.9 s for a MiB of one word).
_AUTHORIZATION = "Authorization required, but no authorization protocol specified"
_NOISE_MARK = re.compile(r"NCCL (?:INFO|WARN)\b|" + re.escape(_AUTHORIZATION))
_NOISE_HOST_REVERSED = re.compile(r"(?: \S+)? \]\d+\[ \d+:\d+:[\w.-]{0,252}[A-Za-z]")
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
    setup: "NcclSetup | None" = None     # NCCL's own debug lines in the same output (parse_nccl_run)

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


def _cut_noise(text: str) -> str:
    """The text without other processes' messages (each to its line's end, its newline too). A
    host is read back from a mark no further than the previous mark: no host holds one."""
    kept, cut, searched = [], 0, 0
    while mark := _NOISE_MARK.search(text, searched):
        if mark[0] == _AUTHORIZATION:   # the message alone, and its newline
            start, end = mark.start(), mark.end()
        else:
            host = _NOISE_HOST_REVERSED.match(text[max(cut, searched):mark.start()][::-1])
            if host is None:
                searched = mark.start() + 1
                continue
            start, end = mark.start() - host.end(), text.find("\n", mark.end())
            end = len(text) if end < 0 else end
        kept.append(text[cut:start])
        cut = searched = end + text.startswith("\n", end)
    return "".join(kept) + text[cut:]


def parse_nccl(text: str) -> NcclResult:
    rows, ranks = [], []
    collective = avg = None
    out_of_bounds: list[re.Match] = []
    time_columns = _CLASSIC_COLUMNS
    for line in _cut_noise(text).splitlines():
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


class NcclSetupError(ParseError):
    """NCCL's debug lines do not say how it was set up (no INFO line, or one that contradicts itself)."""


@dataclass(frozen=True)
class NcclHostSetup:
    """What NCCL_DEBUG=INFO said of its set-up on one host ("" for lines copied without their prefix)."""
    host: str
    version: str | None = None          # "2.28.9+cuda13.0" ("NCCL version ...")
    git: str | None = None              # "HEAD ebd1e92" ("NCCL git version BRANCH DESCRIBE", 2.29.2 on)
    devices: tuple[str, ...] | None = None   # "NET/IB : Using [0]rocep1s0f1:1/RoCE ...": the RoCE/IB devices
    network: str | None = None          # "Using network IB" / "Socket"; "Socket" also from "NET/Socket : Using"
    net_plugin: str | None = None       # "internal" (no libnccl-net.so) or the plugin NCCL loaded
    settings: tuple[tuple[str, str], ...] = ()   # ("NCCL_IB_HCA", "rocep1s0f1") from "... set to ..." lines

    def setting(self, name: str) -> str | None:
        return dict(self.settings).get(name)


@dataclass(frozen=True)
class NcclSetup:
    hosts: tuple[NcclHostSetup, ...]    # in order of each host's first line

    def of(self, host: str) -> NcclHostSetup | None:
        return next((h for h in self.hosts if h.host == host), None)


SETUP_TOOL = "NCCL_DEBUG=INFO"
# "[2025-11-19 18:02:33] " (NCCL_DEBUG_TIMESTAMP_FORMAT), then "host:pid:tid [dev] NCCL INFO msg";
# copies in documents often keep only "NCCL INFO msg". Searched anywhere in the text, as the
# nccl-tests parser cuts them out: another process's line lands in the middle of a row. The mark
# is found first and the host read backwards from it: a regex searched forwards tried every letter
# of a long word as a host's first (2.9 s for a MiB of one word), the same host found either way
# (the leftmost letter that starts a run of word characters up to the colon, at most 253 long).
_MARK = "NCCL INFO "
_MESSAGE_LONGEST = 4000
_PREFIX_REVERSED = re.compile(r" \][0-9]{1,4}\[ [0-9]{1,10}:[0-9]{1,10}:([\w.-]{0,252}[A-Za-z])")
_PREFIX_LONGEST = 2 + 4 + 2 + 10 + 1 + 10 + 1 + 253
_VERSION = re.compile(r"NCCL version ([0-9]{1,4}\.[0-9]{1,4}\.[0-9]{1,4}[^+\s]{0,40}(?:\+cuda[0-9.]{1,10})?)")
_GIT = re.compile(r"NCCL git version (\S{1,200}) (\S{1,200})")
_USING_IB = re.compile(r"NET/IB ?: Using(.{0,3000}?)(?:\[RO\])? ?; OOB (\S{1,300})")
_IB_DEVICE = re.compile(r"\[[0-9]{1,4}\]([^\s:\[\]]{1,64}):[0-9]{1,3}/(?:RoCE|IB)\S{0,40}")
_NO_IB_DEVICE = re.compile(r"NET/IB ?: No device found\.?")
_SOCKET = re.compile(r"NET/Socket ?: Using \[0\].{0,3000}")
_NETWORK = re.compile(r"Using network (\S{1,64})")
_SET = re.compile(r"(NCCL_[A-Z0-9_]{1,64}) set (?:by environment )?to (.{0,2000})")
_PLUGIN_LOADED = re.compile(r"NET/Plugin ?: Loaded net plugin (.{1,200})")
_PLUGIN_NONE = re.compile(r"NET/Plugin ?: (?:Could not find: libnccl-net\.so|.{0,500}using internal implementation)")
# a release: "v2.28.9-1" from `git describe` on the release tag; past it: "v2.30.7-1-42-g86fa684d"
_RELEASE_TAG = re.compile(r"v[0-9]{1,4}\.[0-9]{1,4}\.[0-9]{1,4}-[0-9]{1,4}")
_PAST_TAG = re.compile(r"(v[0-9]{1,4}\.[0-9]{1,4}\.[0-9]{1,4}-[0-9]{1,4})-([0-9]{1,9})-g[0-9a-f]{4,40}")
_SUFFIX = re.compile(r"[0-9]{1,4}\.[0-9]{1,4}\.[0-9]{1,4}([^+\s]*)(?:\+.*)?")
# branches a release is built on: a release tag checked out (detached: "HEAD"), master (NVIDIA
# merges each release there), stable (the branch NVIDIA's own packages print)
_RELEASE_BRANCHES = ("HEAD", "master", "stable", "unknown")


def parse_nccl_setup(text: str) -> NcclSetup:
    """Each host's NCCL set-up from the NCCL_DEBUG=INFO lines in a run's output (with
    NCCL_DEBUG_SUBSYS naming INIT, ENV and NET): version, git version, the RoCE devices NET/IB
    uses, the network, the net plugin, the NCCL_* settings NCCL reports."""
    hosts: dict[str, dict] = {}
    for host, message in _info(text):
        seen = hosts.setdefault(host, {"host": host, "settings": {}})
        if m := _VERSION.fullmatch(message):
            _once(seen, "version", m[1], text)
        elif m := _GIT.fullmatch(message):
            _once(seen, "git", f"{m[1]} {m[2]}", text)
        elif m := _USING_IB.fullmatch(message):
            _once(seen, "devices", tuple(d[1] for d in _IB_DEVICE.finditer(m[1])), text)
        elif _NO_IB_DEVICE.fullmatch(message):
            _once(seen, "devices", (), text)
        elif _SOCKET.fullmatch(message):
            seen.setdefault("network", "Socket")
        elif m := _NETWORK.fullmatch(message):
            seen["network"] = m[1]
        elif m := _SET.fullmatch(message):
            value = m[2]
            # integers print as "... set by environment to 3."
            seen["settings"][m[1]] = value[:-1] if value.endswith(".") and value[:-1].isdigit() else value
        elif m := _PLUGIN_LOADED.fullmatch(message):
            seen["net_plugin"] = m[1]
        elif _PLUGIN_NONE.fullmatch(message):
            seen.setdefault("net_plugin", "internal")
    if not hosts:
        raise NcclSetupError(SETUP_TOOL, "no 'NCCL INFO' line: NCCL's debug output did not reach the run's output "
                                         "(NCCL_DEBUG=INFO not passed to the ranks?)", text)
    return NcclSetup(tuple(NcclHostSetup(**{**seen, "settings": tuple(seen["settings"].items())})
                           for seen in hosts.values()))


def _info(text: str) -> Iterator[tuple[str, str]]:
    """(host or "", message) of each "NCCL INFO" in the text, in order; a message ends at its
    line's end or after _MESSAGE_LONGEST characters, and the next is searched for after it."""
    searched = 0
    while (mark := text.find(_MARK, searched)) >= 0:
        prefix = _PREFIX_REVERSED.match(text[max(searched, mark - _PREFIX_LONGEST):mark][::-1])
        start = mark + len(_MARK)
        end = text.find("\n", start, start + _MESSAGE_LONGEST)
        searched = end if end >= 0 else min(len(text), start + _MESSAGE_LONGEST)
        yield (prefix[1][::-1] if prefix else ""), text[start:searched].rstrip()


def _once(seen: dict, key: str, value, text: str) -> None:
    """Every rank of a host prints the same set-up; two answers on one host are not one set-up."""
    if seen.setdefault(key, value) != value:
        raise NcclSetupError(SETUP_TOOL, f"{seen['host'] or 'a host'} reports two {key}s: {seen[key]!r} and "
                                         f"{value!r}", text)


def development_build(version: str | None, git: str | None) -> str | None:
    """Why this NCCL is not a release, or None. NCCL's development branches set a suffix after
    the patch number (makefiles/version.mk's NCCL_SUFFIX: "2.31.0a7"; every release tag leaves it
    empty), and from 2.29.2 NCCL prints where it was built: `git describe` past a release tag,
    a locally changed tree or a branch of its own is not a release."""
    if version is not None and (suffix := _SUFFIX.fullmatch(version)) and suffix[1]:
        return f"version suffix {suffix[1]!r}: a development branch's version, no release has one"
    if git is None:
        return None
    branch, _, describe = git.partition(" ")
    if describe.endswith("-dirty"):
        return f"built from a changed source tree ({git})"
    if past := _PAST_TAG.fullmatch(describe):
        return f"built {past[2]} commits past the release tag {past[1]} ({git})"
    if not _RELEASE_TAG.fullmatch(describe) and branch not in _RELEASE_BRANCHES:
        return f"built from the branch {branch} ({git}), not a release tag"
    return None


def parse_nccl_run(text: str) -> NcclResult:
    """The collective's result and, from the same output, NCCL's set-up on each host."""
    result = parse_nccl(text)
    return dataclasses.replace(result, setup=parse_nccl_setup(text))


@dataclass(frozen=True)
class NcclSettings:
    """The NCCL_* settings a node gives NCCL beyond the run's own: the login's environment and
    the files NCCL reads at start (NCCL_CONF_FILE or ~/.nccl.conf, then /etc/nccl.conf; a value
    already set is kept, so the environment wins over both, ~/.nccl.conf over /etc/nccl.conf)."""
    environment: tuple[tuple[str, str], ...]
    home_conf: tuple[tuple[str, str], ...] | None      # None: no ~/.nccl.conf
    etc_conf: tuple[tuple[str, str], ...] | None       # None: no /etc/nccl.conf

    def sources(self) -> list[tuple[str, str, str]]:
        """(where, name, value) of every setting, in NCCL's order of precedence."""
        return [(where, name, value) for where, pairs in (("the login's environment", self.environment),
                                                          ("~/.nccl.conf", self.home_conf or ()),
                                                          ("/etc/nccl.conf", self.etc_conf or ()))
                for name, value in pairs]


_SETTINGS_LINE = re.compile(r"(env|home|etc)( ?)(.{0,4000})")


def parse_nccl_settings(text: str) -> NcclSettings:
    """NCCL_SETTINGS' output: each line tagged with where it came from ("env NCCL_X=v", "home
    <a line of ~/.nccl.conf>", "etc <a line of /etc/nccl.conf>"; a tag alone: the file exists).
    A file's lines are read as NCCL reads them (src/misc/param.cc, setEnvFile): '#' starts a
    comment line, a line without '=' is skipped, the name is what comes before the first '=',
    the value all after it, spaces kept."""
    found: dict[str, list[tuple[str, str]] | None] = {"env": [], "home": None, "etc": None}
    for line in text.splitlines():
        match = _SETTINGS_LINE.fullmatch(line)
        if not match or (match[3] and not match[2]):
            raise ParseError("NCCL settings", f"a line that is not one of the node's NCCL settings: {line[:200]!r}", text)
        tag, content = match[1], match[3]
        found[tag] = found[tag] or []
        if content.startswith("#") or "=" not in content:
            continue
        name, _, value = content.partition("=")
        found[tag].append((name, value.removesuffix("\r")))
    return NcclSettings(tuple(found["env"]), _pairs(found["home"]), _pairs(found["etc"]))


def _pairs(lines: list[tuple[str, str]] | None) -> tuple[tuple[str, str], ...] | None:
    return None if lines is None else tuple(lines)


# NVIDIA's sizes for the Spark playbook's test: 1 GB to 4 GB, doubling, one GPU per rank. NCCL's
# set-up comes with the run: INIT prints the version and NET/IB's devices, ENV the settings it
# read, NET the plugin and the network it chose. `settings` are the inventory's NCCL_* for every rank.
NCCL_TEST = Probe("mpirun nccl-tests", "bus bandwidth of one NCCL collective across the nodes over CX7, and "
                  "NCCL's set-up on each (version, RoCE devices, settings)",
                  "mpirun -np {ranks} -H {hosts} --mca btl_tcp_if_include {interface} "
                  "-x NCCL_SOCKET_IFNAME={interface} -x NCCL_DEBUG=INFO -x NCCL_DEBUG_SUBSYS=INIT,ENV,NET "
                  "{settings} {test} -b 1G -e 4G -f 2 -g 1",
                  parse_nccl_run, timeout=300, repeatable=False, seen_on=("DGX Spark", "OCI A100"),
                  unseen="run where [expect] run_nccl asks (a DGX Spark pair by default): no run of a Jetson AGX Thor shelf was found")

# Every line tagged by where it came from, so no line of a file can pass for another source's.
NCCL_SETTINGS = Probe("NCCL settings", "the NCCL_* variables of the login's environment, ~/.nccl.conf and "
                      "/etc/nccl.conf",
                      "printenv | grep -a '^NCCL_' | sed 's/^/env /' && "
                      "(test ! -e \"$HOME/.nccl.conf\" || sed 's/^/home /; 1i home' \"$HOME/.nccl.conf\") && "
                      "(test ! -e /etc/nccl.conf || sed 's/^/etc /; 1i etc' /etc/nccl.conf)",
                      parse_nccl_settings, seen_on=("Debian 12",),
                      unseen="each line is the probe's own tag before a variable or a file's own line: no other "
                             "machine prints it")
