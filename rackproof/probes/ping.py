"""iputils `ping` (run with LC_ALL=C) -> PingResult.

One SSH round trip per source node: Host.ping reads PING for every peer in one batch
(Host.read_each), each target's answer after its own section marker.
"""

import re
from dataclasses import dataclass

from . import ParseError
from rackproof.probes.probe import Probe
from ._text import finite_float, int_value

TOOL = "ping"

# "3 packets transmitted, 3 received, +2 duplicates, +1 errors, 0% packet loss, time 2003ms"
# (busybox: "3 packets received"; loss can be fractional: "33.3333%"). The fields after
# "received," are split at commas rather than matched by lazy wildcards, which backtrack
# quadratically over a long line that never says "% packet loss".
_SUMMARY = re.compile(
    r"^(?P<transmitted>[0-9]+) packets transmitted, (?P<received>[0-9]+) (?:packets )?received,(?P<rest>.*)",
    re.M)
_ERRORS = re.compile(r"\+(\S+) errors")
_LOSS = re.compile(r"(\S+)% packet loss")
# "rtt min/avg/max/mdev = 0.055/0.065/0.079/0.010 ms[, pipe 2]" (busybox/BSD: round-trip ..., no mdev).
# Any token is taken, so that "nan" or "../7" fails the parse instead of passing for no reply.
_RTT = re.compile(
    r"^(?:rtt|round-trip) min/avg/max(?:/(?:mdev|stddev))? = "
    r"(?P<min>[^/\s]+)/(?P<avg>[^/\s]+)/(?P<max>[^/\s]+)(?:/(?P<mdev>[^/\s]+))? ms", re.M)
_STATISTICS = re.compile(r"^--- (?P<target>\S+) ping statistics ---$", re.M)
# ping's own failure before any packet: "ping: connect: Network is unreachable",
# "ping: thor-9: Name or service not known" (the prefix is argv[0], so any path ending in ping)
_FAILURE = re.compile(r"^\S*ping\d?: (?P<message>.+)$", re.M)


@dataclass(frozen=True)
class PingResult:
    target: str
    transmitted: int
    received: int
    loss_percent: float
    rtt_min_ms: float | None     # None when no reply came back
    rtt_avg_ms: float | None
    rtt_max_ms: float | None
    rtt_mdev_ms: float | None
    errors: int = 0              # ICMP errors, e.g. "Destination Host Unreachable" (no ARP answer)
    error: str | None = None     # ping gave up before sending: name not resolved, no route


def parse_ping(text: str, target: str | None = None) -> PingResult:
    """One ping run. `target` names the host when ping failed before printing its statistics
    (the probe knows it); otherwise the statistics line names it."""
    summary = _summary(text)
    if summary is None:
        return _failure(text, target)
    transmitted, received, errors, loss = summary
    statistics = _STATISTICS.search(text)
    rtt = _RTT.search(text)
    if statistics is None and target is None:
        raise ParseError(TOOL, "no '--- TARGET ping statistics ---' line", text)
    rtt_min, rtt_avg, rtt_max, rtt_mdev = (
        None if rtt is None or rtt[name] is None else finite_float(TOOL, rtt[name], f"rtt {name}", text)
        for name in ("min", "avg", "max", "mdev"))
    return PingResult(
        target=statistics["target"] if statistics else target,
        transmitted=int_value(TOOL, transmitted, "packets transmitted", text),
        received=int_value(TOOL, received, "packets received", text),
        loss_percent=finite_float(TOOL, loss, "packet loss", text),
        rtt_min_ms=rtt_min,
        rtt_avg_ms=rtt_avg,
        rtt_max_ms=rtt_max,
        rtt_mdev_ms=rtt_mdev,
        errors=int_value(TOOL, errors, "errors", text),
    )


def _summary(text: str) -> tuple[str, str, str, str] | None:
    """(transmitted, received, errors, loss %) as printed on the first summary line that
    gives the loss; None when there is none."""
    for line in _SUMMARY.finditer(text):
        fields = [field.strip() for field in line["rest"].split(",")]
        for index, field in enumerate(fields):
            if loss := _LOSS.fullmatch(field):
                errors = [found[1] for before in fields[:index] if (found := _ERRORS.fullmatch(before))]
                return line["transmitted"], line["received"], errors[0] if errors else "0", loss[1]
    return None


def _failure(text: str, target: str | None) -> PingResult:
    failures = _FAILURE.findall(text)
    if not failures:
        raise ParseError(TOOL, "no statistics and no ping error message (not LC_ALL=C?)", text)
    if target is None:
        raise ParseError(TOOL, f"ping failed ({failures[-1]}) and the target is unknown", text)
    return PingResult(target, 0, 0, 100.0, None, None, None, None, error=failures[-1])


def _number(values: dict, name: str, least: int) -> None:
    if not isinstance(values[name], int) or isinstance(values[name], bool) or values[name] < least:
        raise ValueError(f"{name} must be an integer of at least {least}, not {values[name]!r}")


def _check(values: dict) -> None:
    """A leading '-' would be read as an option; whitespace would break a batch's section markers."""
    target = values["target"]
    if not isinstance(target, str) or not target or target.startswith("-") or any(c.isspace() for c in target):
        raise ValueError(f"not a ping target: {target!r}")
    if "count" in values:
        _number(values, "count", 1)
    if "size" in values:
        _number(values, "size", 0)
    if "ident" in values:
        _number(values, "ident", 1)


# stderr joins stdout so that an error ("Name or service not known") is in the target's own
# answer; exit 1 (no reply) and 2 (an error) still answer: PingResult says which
PING = Probe("ping", "reply, loss and round trip to a target", "ping -c {count} -W 1 -i 0.2 {target} 2>&1",
             parse_ping, ("target",), ok_exit=(0, 1, 2), check=_check,
             seen_on=("Pop!_OS", "Debian 12"),
             unseen="no ping of a Jetson AGX Thor or a DGX Spark was found; iputils prints the same lines on every "
                    "distribution")
# packets of `size` bytes of payload (+ 28 of IP and ICMP headers) with don't-fragment set: each
# arrives whole or not at all ("ping: local error: message too long, mtu=1500" when the sender's
# own MTU is smaller). Three of them: one reply proves the path, and a packet lost to a moment's
# congestion (a throughput test on the same lanes) is not a path that drops full-size frames.
PING_DF = Probe("ping -M do", "whether packets of a given size cross to a target unfragmented",
                "ping -M do -s {size} -c 3 -i 0.2 -W 1 {target} 2>&1", parse_ping, ("target",),
                ok_exit=(0, 1, 2), check=_check,
                seen_on=("libreswan", "Debian 12"),
                unseen="no ping -M do of a Jetson AGX Thor or a DGX Spark was found")
# the same, with the echo's identifier chosen (-e): a bond hashes an echo by its identifier, so
# it picks the member the packet leaves by (rackproof.probes.bondhash.echo_idents)
PING_DF_VIA = Probe("ping -M do -e", "whether packets of a given size cross to a target unfragmented, "
                    "over the bond member their echo identifier hashes to",
                    "ping -M do -s {size} -e {ident} -c 3 -i 0.2 -W 1 {target} 2>&1", parse_ping,
                    ("target",), ok_exit=(0, 1, 2), check=_check,
                    unseen="ping -M do with the echo identifier chosen (-e): the same lines (seen for ping -M do); no"
                           " capture with -e was found")
