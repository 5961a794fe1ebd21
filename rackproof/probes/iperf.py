"""`iperf3 -c ... -J` -> IperfResult, read through the iperf3 package's TestResult.

What iperf3 -J does that a plain json.loads does not survive:
- errors come on stdout as JSON with "error" set (exit status can still be 0);
- some versions (3.16-3.17) print the whole document twice;
- --bidir before 3.11 repeats the "sum_sent"/"sum_received" keys in "end" (forward
  direction first); -P repeats "sock_bufsize" etc. in "start".
"""

import json
import math
from dataclasses import dataclass

import iperf3

from . import ParseError

TOOL = "iperf3"


@dataclass(frozen=True)
class IperfResult:
    received_bps: float          # end.sum_received: what the receiver got (the figure to judge)
    sent_bps: float              # end.sum_sent
    retransmits: int | None      # TCP retransmits of the sender; None when not reported
    num_streams: int
    duration: float              # seconds asked for (-t)
    local_host: str
    remote_host: str
    remote_port: int
    reverse: bool                # -R: the server sent, the client received


def parse_iperf3(json_text: str) -> IperfResult:
    """The client's result. iperf3's own error (no server, refused) is a ParseError carrying
    iperf3's message. With --bidir the figures are the forward direction (client to server)."""
    document = _first_document(json_text)
    try:
        result = iperf3.TestResult(json.dumps(document))
    except (KeyError, IndexError, TypeError, AttributeError, ValueError) as error:
        # TestResult indexes the document blindly; a missing part surfaces as one of these
        raise ParseError(TOOL, f"incomplete iperf3 JSON ({type(error).__name__}: {error})", json_text) from error
    if "error" in result.json:  # even "error": null or "" means TestResult read nothing else
        message = result.error if isinstance(result.error, str) and result.error else f"error: {result.error!r}"
        raise ParseError(TOOL, message, json_text)
    if result.protocol != "TCP":
        raise ParseError(TOOL, f"expected a TCP test, got {result.protocol!r}", json_text)
    try:
        reverse = result.reverse
    except (KeyError, TypeError) as error:
        raise ParseError(TOOL, f"no start.test_start.reverse ({error})", json_text) from error
    return IperfResult(
        received_bps=_number(result.received_bps, "sum_received bits_per_second", json_text),
        sent_bps=_number(result.sent_bps, "sum_sent bits_per_second", json_text),
        retransmits=None if result.retransmits is None else _integer(result.retransmits, "retransmits", json_text),
        num_streams=_integer(result.num_streams, "num_streams", json_text),
        duration=_number(result.duration, "duration", json_text),
        local_host=_string(result.local_host, "local_host", json_text),
        remote_host=_string(result.remote_host, "remote_host", json_text),
        remote_port=_integer(result.remote_port, "remote_port", json_text),
        reverse=reverse,
    )


def _first_document(text: str) -> dict:
    """The first JSON object in the text; duplicate keys keep their first value."""
    try:
        document, _ = json.JSONDecoder(object_pairs_hook=_keep_first).raw_decode(text.lstrip())
    except (ValueError, RecursionError) as error:
        raise ParseError(TOOL, f"not JSON: {error}", text) from error
    if not isinstance(document, dict):
        raise ParseError(TOOL, "expected a JSON object", text)
    return document


def _keep_first(pairs: list[tuple[str, object]]) -> dict:
    kept: dict = {}
    for key, value in pairs:
        kept.setdefault(key, value)
    return kept


def _number(value, name: str, text: str) -> float:
    # Python's json reads NaN and Infinity; a throughput of NaN is as unreadable as a string
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            number = float(value)
        except OverflowError:
            number = math.inf
        if math.isfinite(number):
            return number
    raise ParseError(TOOL, f"{name} is not a finite number: {value!r}", text)


def _integer(value, name: str, text: str) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise ParseError(TOOL, f"{name} is not an integer: {value!r}", text)


def _string(value, name: str, text: str) -> str:
    if not isinstance(value, str):
        raise ParseError(TOOL, f"{name} is not a string: {value!r}", text)
    return value
