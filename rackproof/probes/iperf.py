"""`iperf3 -c ... -J` -> IperfResult, read through the iperf3 package's TestResult.

What iperf3 -J does that a plain json.loads does not survive:
- errors come on stdout as JSON with "error" set (exit status can still be 0);
- some versions (3.16-3.17) print the whole document twice;
- --bidir before 3.11 repeats the "sum_sent"/"sum_received" keys in "end" (forward
  direction first); -P repeats "sock_bufsize" etc. in "start".

Per stream, end.streams[*] holds the sender's and the receiver's figures of one connection,
named by its socket; start.connected[*] gives that socket's ports. With --bidir, end.streams
lists both directions, told apart by their "sender" flag (true: the client sent).
"""

import json
import math
from dataclasses import dataclass

import iperf3

from . import ParseError
from ._between import Between
from rackproof.probes.probe import Probe

TOOL = "iperf3"
# Figures above these are not a measurement but damage: no link of this decade carries a
# petabit a second, and iperf3 runs at most 128 streams (MAX_STREAMS).
MAX_FIGURE = 1e15
MAX_STREAMS = 128
MAX_COUNT = 2**63 - 1   # iperf3's counters are 64-bit


@dataclass(frozen=True)
class IperfStream:
    """One connection of a test, in the test's direction."""
    local_port: int              # the client's port (start.connected[*].local_port)
    remote_port: int             # the server's
    received_bps: float          # end.streams[*].receiver.bits_per_second
    sent_bps: float              # end.streams[*].sender.bits_per_second
    retransmits: int | None      # the sender's TCP retransmits; None when not reported


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
    streams: tuple[IperfStream, ...] = ()   # per connection, in the order iperf3 lists them
    # the CPU each end's iperf3 used over the test, in % of one core (end.cpu_utilization_percent:
    # host_total is the client's, remote_total the server's; -R swaps who sends); None: not known
    # (a result made of several, see traffic)
    sender_cpu: float | None = None
    receiver_cpu: float | None = None


def parse_iperf3(json_text: str) -> IperfResult:
    """The client's result. iperf3's own error (no server, refused) is a ParseError carrying
    iperf3's message. With --bidir the figures are the forward direction (client to server)."""
    document = _first_document(json_text)
    try:
        result = iperf3.TestResult(json.dumps(document))
    except (KeyError, IndexError, TypeError, AttributeError, ValueError) as error:
        # TestResult indexes the document blindly; a missing part surfaces as one of these
        raise ParseError(TOOL, f"incomplete iperf3 JSON ({type(error).__name__}: {error})", json_text) from error
    except OverflowError as error:   # an integer figure past a float's range: TestResult divides it
        raise ParseError(TOOL, f"a figure too large to be a rate ({error})", json_text) from None
    except RecursionError as error:
        # a document nested nearly as deep as the first decoding could go: encoding it again
        # and TestResult's decoding run a few frames deeper and overflow
        raise ParseError(TOOL, f"JSON nested too deep to read ({error})", json_text) from None
    if "error" in result.json:  # even "error": null or "" means TestResult read nothing else
        message = result.error if isinstance(result.error, str) and result.error else f"error: {result.error!r}"
        raise ParseError(TOOL, message, json_text)
    if result.protocol != "TCP":
        raise ParseError(TOOL, f"expected a TCP test, got {result.protocol!r}", json_text)
    try:
        reverse = result.reverse
    except (KeyError, TypeError) as error:
        raise ParseError(TOOL, f"no start.test_start.reverse ({error})", json_text) from error
    num_streams = _integer(result.num_streams, "num_streams", json_text, 1, MAX_STREAMS)
    streams = _streams(document, reverse, json_text)
    client_cpu, server_cpu = (_cpu(document["end"], which, json_text) for which in ("host_total", "remote_total"))
    if len(streams) != num_streams:
        raise ParseError(TOOL, f"{len(streams)} streams in end.streams for num_streams {num_streams}", json_text)
    return IperfResult(
        received_bps=_number(result.received_bps, "sum_received bits_per_second", json_text),
        sent_bps=_number(result.sent_bps, "sum_sent bits_per_second", json_text),
        retransmits=_count(result.retransmits, "retransmits", json_text),
        num_streams=num_streams,
        duration=_number(result.duration, "duration", json_text),
        local_host=_string(result.local_host, "local_host", json_text),
        remote_host=_string(result.remote_host, "remote_host", json_text),
        remote_port=_integer(result.remote_port, "remote_port", json_text, 0, 65535),
        reverse=reverse,
        streams=streams,
        sender_cpu=server_cpu if reverse else client_cpu,
        receiver_cpu=client_cpu if reverse else server_cpu,
    )


def _streams(document: dict, reverse: bool, text: str) -> tuple[IperfStream, ...]:
    """end.streams in the test's direction, each with its ports from start.connected."""
    ports: dict[int, tuple[int, int]] = {}
    for connection in _list(document["start"].get("connected"), "start.connected", text):
        if not isinstance(connection, dict):
            raise ParseError(TOOL, f"start.connected holds {connection!r}", text)
        socket = _integer(connection.get("socket"), "start.connected socket", text, 0, MAX_COUNT)
        ports.setdefault(socket, (_integer(connection.get("local_port"), "local_port", text, 0, 65535),
                                  _integer(connection.get("remote_port"), "remote_port", text, 0, 65535)))
    streams = []
    for stream in _list(document["end"].get("streams"), "end.streams", text):
        if not (isinstance(stream, dict) and isinstance(stream.get("sender"), dict)
                and isinstance(stream.get("receiver"), dict)):
            raise ParseError(TOOL, f"end.streams holds {stream!r}", text)
        sender, receiver = stream["sender"], stream["receiver"]
        # the test's own direction only: --bidir lists both, its flag says which (true: the
        # client sent; under -R the server sends); versions without the flag list one direction
        if sender.get("sender", not reverse) is reverse:
            continue
        socket = _integer(sender.get("socket"), "end.streams socket", text, 0, MAX_COUNT)
        if socket not in ports:
            raise ParseError(TOOL, f"stream of socket {socket} is not in start.connected", text)
        streams.append(IperfStream(
            local_port=ports[socket][0], remote_port=ports[socket][1],
            received_bps=_number(receiver.get("bits_per_second"), "stream receiver bits_per_second", text),
            sent_bps=_number(sender.get("bits_per_second"), "stream sender bits_per_second", text),
            retransmits=_count(sender.get("retransmits"), "stream retransmits", text)))
    return tuple(streams)


def _cpu(end: dict, which: str, text: str) -> float:
    # TestResult has read the dict and both keys already
    return _number(end["cpu_utilization_percent"][which], f"cpu_utilization_percent {which}", text)


def _list(value, name: str, text: str) -> list:
    if not isinstance(value, list):
        raise ParseError(TOOL, f"{name} is not a list: {value!r}", text)
    return value


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
        if 0 <= number <= MAX_FIGURE:
            return number
    raise ParseError(TOOL, f"{name} is not a finite number from 0 to {MAX_FIGURE:g}: {value!r}", text)


def _integer(value, name: str, text: str, low: int, high: int) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and low <= value <= high:
        return value
    raise ParseError(TOOL, f"{name} is not an integer from {low} to {high}: {value!r}", text)


def _count(value, name: str, text: str) -> int | None:
    return None if value is None else _integer(value, name, text, 0, MAX_COUNT)


def _string(value, name: str, text: str) -> str:
    if not isinstance(value, str):
        raise ParseError(TOOL, f"{name} is not a string: {value!r}", text)
    return value


# -1: one test, then exit
IPERF3_SERVER = Probe("iperf3 server", "receives one test on one address and port",
                      "iperf3 -s -1 -B {address} -p {port}", repeatable=False,
                      unseen="its output is not read: the client's JSON is")
# -O: the first second is sent but not counted. It holds TCP's slow start (and on the simulated
# rack the bond's first choice of lane, see sim/bond.py), which made short runs vary.
WARM_UP_SECONDS = 1
IPERF3_CLIENT = Probe("iperf3", "TCP throughput to a server: sums and every stream (-J)",
                      f"iperf3 -c {{address}} -p {{port}} -t {{seconds}} -O {WARM_UP_SECONDS} -P {{streams}} -J",
                      # iperf3 -J exits 1 on errors and says why in its JSON
                      parse_iperf3, ok_exit=(0, 1), repeatable=False,
                      seen_on=("iperf 3.9", "iperf 3.7", "Debian 12"),
                      unseen="no run on a Jetson AGX Thor or a DGX Spark was found; iperf3's JSON is its own, the "
                             "same on every platform of its version")
IPERF3_FROM_PORT = Probe("iperf3 --cport", "one TCP stream from a chosen client port (a bond's lane)",
                         f"iperf3 -c {{address}} -p {{port}} --cport {{client_port}} -t {{seconds}} -O {WARM_UP_SECONDS} -J",
                         parse_iperf3, repeatable=False, seen_on=("iperf 3.9", "Debian 12"),
                         unseen="the iperf3 probe's JSON with one stream; no Thor run was found")
# --cport (a bond's lane chosen by its client port) came with iperf3 3.1
IPERF3 = Between("iperf3", "sudo apt install iperf3", IPERF3_SERVER, IPERF3_CLIENT, minimum=(3, 1), asked="-v")
