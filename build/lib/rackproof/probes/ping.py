"""iputils `ping` (run with LC_ALL=C) -> PingResult; a batch of pings from one node -> per target.

One SSH round trip per source node: PING_BATCH pings every peer in a loop and marks
where each ping's output starts, `parse_ping_batch` splits it again.
"""

import re
from dataclasses import dataclass

from . import ParseError
from rackproof.probe import Probe
from ._text import finite_float, int_value

TOOL = "ping"
BATCH_MARKER = "### rackproof-ping "

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
_MARKER = re.compile(rf"^{re.escape(BATCH_MARKER)}(.*)$", re.M)


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
    (the batch markers know it); otherwise the statistics line names it."""
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


def _check_batch(values: dict) -> None:
    """A leading '-' would be read as an option; whitespace would break the markers."""
    targets = list(values["targets"])
    if not targets:
        raise ValueError("no targets to ping")
    for target in targets:
        if not target or target.startswith("-") or any(c.isspace() for c in target):
            raise ValueError(f"not a ping target: {target!r}")
    if not isinstance(values["count"], int) or values["count"] < 1:
        raise ValueError(f"count must be an integer of at least 1, not {values['count']!r}")


def parse_ping_batch(text: str) -> dict[str, PingResult]:
    """target -> PingResult from the output of PING_BATCH. Anything before the
    first marker is ignored (a login shell may print noise first)."""
    parts = _MARKER.split(text)  # [preamble, target, output, target, output, ...]
    if len(parts) < 3:
        raise ParseError(TOOL, f"no '{BATCH_MARKER.strip()}' marker", text)
    results: dict[str, PingResult] = {}
    for target, output in zip(parts[1::2], parts[2::2]):
        target = target.strip()
        if not target:
            raise ParseError(TOOL, "marker without a target", text)
        results[target] = parse_ping(output, target)
    return results


# stderr joins stdout so that an error ("Name or service not known") stays under its target's
# marker; the loop exits as its last ping did (1: no reply, 2: an error), so each target is
# judged from its own part of the output, never the loop's exit status
PING_BATCH = Probe("ping", "reply, loss and round trip to each target, one after the other",
                   f'for t in {{targets}}; do echo "{BATCH_MARKER}$t"; '
                   'LC_ALL=C ping -c {count} -W 1 -i 0.2 "$t" 2>&1; done', parse_ping_batch, ok_exit=(0, 1, 2),
                   check=_check_batch)
