"""rackproof.probes.iperf against real `iperf3 -J` output.

iperf3_J_*_openwisp.json: public captures (iperf 3.9 single stream, 3.7 connection refused).
iperf3_J_local_3.12_*.json: iperf 3.12 on the dev machine over loopback (`iperf3 -s -1 -B
127.0.0.1 -p 5299` / `iperf3 -c 127.0.0.1 -p 5299 -J -t 1` with -P 4, -P 3 -R, --bidir; and
with no server). 3.12 -P repeats sock_bufsize/sndbuf_actual/rcvbuf_actual in "start".
"""

import json
from pathlib import Path

import pytest

from rackproof.probes import ParseError
from rackproof.probes.iperf import IperfResult, IperfStream, parse_iperf3

SAMPLES = Path(__file__).parent / "samples"


def sample(name):
    return (SAMPLES / name).read_text()


def test_single_stream():
    assert parse_iperf3(sample("iperf3_J_tcp_single_stream_openwisp.json")) == IperfResult(
        received_bps=44042139781.797935, sent_bps=44042377604.16823, retransmits=0, num_streams=1,
        duration=10.0, local_host="127.0.0.1", remote_host="127.0.0.1", remote_port=5201, reverse=False,
        streams=(IperfStream(local_port=54966, remote_port=5201, received_bps=44042139781.797935,
                             sent_bps=44042377604.16823, retransmits=0),),
        sender_cpu=99.49882081069975, receiver_cpu=0.377797593572381)


def test_four_streams():
    result = parse_iperf3(sample("iperf3_J_local_3.12_P4.json"))
    assert (result.num_streams, result.reverse, result.remote_port) == (4, False, 5299)
    assert result.received_bps == 16290413224.955845
    assert result.sent_bps == 16304657564.910473


def test_four_streams_each_with_its_ports_and_figures():
    """Linux hands connect() even ports: the client ports of the four streams, by socket."""
    streams = parse_iperf3(sample("iperf3_J_local_3.12_P4.json")).streams
    assert [(s.local_port, s.remote_port) for s in streams] == [(35916, 5299), (35918, 5299), (35920, 5299),
                                                               (35924, 5299)]
    assert {(s.received_bps, s.sent_bps, s.retransmits) for s in streams} == {
        (4072603306.238961, 4076164391.227618, 0)}


def test_reverse():
    result = parse_iperf3(sample("iperf3_J_local_3.12_P3_reverse.json"))
    assert (result.num_streams, result.reverse) == (3, True)
    assert result.received_bps == 18556296902.358856
    # -R: the server sends every stream ("sender": false), the client's ports still name them
    assert [(s.local_port, s.received_bps) for s in result.streams] == [
        (35936, 6189626525.096024), (35946, 6188577969.01859), (35952, 6178092408.244244)]


def test_each_ends_cpu_in_the_tests_direction():
    """host_total is the client's CPU, remote_total the server's: under -R the server sends."""
    forward = parse_iperf3(sample("iperf3_J_local_3.12_P4.json"))
    assert (forward.sender_cpu, forward.receiver_cpu) == (97.56245768499895, 77.5620538963587)
    reverse = parse_iperf3(sample("iperf3_J_local_3.12_P3_reverse.json"))
    assert (reverse.sender_cpu, reverse.receiver_cpu) == (98.62002996335374, 61.935698966466134)


def test_a_damaged_cpu_figure_is_refused():
    document = json.loads(sample("iperf3_J_local_3.12_P4.json"))
    document["end"]["cpu_utilization_percent"]["host_total"] = "98%"
    with pytest.raises(ParseError, match="cpu_utilization_percent host_total"):
        parse_iperf3(json.dumps(document))


def test_bidir_reads_the_forward_direction():
    result = parse_iperf3(sample("iperf3_J_local_3.12_bidir.json"))
    assert (result.received_bps, result.sent_bps) == (13446325941.781933, 13524770337.779734)
    # the reverse stream (socket 7, "sender": false, 9 retransmits) is the other direction
    assert result.streams == (IperfStream(local_port=35968, remote_port=5299, received_bps=13446325941.781933,
                                          sent_bps=13524770337.779734, retransmits=0),)


def test_bidir_before_3_11_repeats_the_sum_keys():
    """The same document as iperf3 < 3.11 printed it: the reverse sums under the same keys."""
    old = sample("iperf3_J_local_3.12_bidir.json").replace("_bidir_reverse", "")
    assert old.count('"sum_received"') == 2
    result = parse_iperf3(old)
    assert (result.received_bps, result.sent_bps) == (13446325941.781933, 13524770337.779734)


def test_document_printed_twice():
    once = sample("iperf3_J_local_3.12_P4.json")
    assert parse_iperf3(once + once) == parse_iperf3(once)


@pytest.mark.parametrize("name, message", [
    ("iperf3_J_error_connection_refused_openwisp.json", "error - unable to connect to server: Connection refused"),
    ("iperf3_J_local_3.12_error_refused.json", "unable to connect to server: Connection refused"),
])
def test_error_document(name, message):
    with pytest.raises(ParseError) as raised:
        parse_iperf3(sample(name))
    assert raised.value.reason == message


@pytest.mark.parametrize("text", ["", "iperf3: error - unable to connect", "[]", "{}",
                                  '{"start": {}, "end": {}}', '{"error": null}', '{"error": ""}'])
def test_unreadable(text):
    with pytest.raises(ParseError):
        parse_iperf3(text)


def damaged(change) -> str:
    """The -P 4 sample after change(document)."""
    document = json.loads(sample("iperf3_J_local_3.12_P4.json"))
    change(document)
    return json.dumps(document)


def set_stream(side, key, value):
    return lambda document: document["end"]["streams"][2][side].__setitem__(key, value)


@pytest.mark.parametrize("text", [
    damaged(set_stream("receiver", "bits_per_second", 1e300)),
    damaged(set_stream("receiver", "bits_per_second", -1.0)),
    damaged(set_stream("sender", "bits_per_second", "4e9")),
    damaged(set_stream("sender", "retransmits", 10**30)),
    damaged(set_stream("sender", "retransmits", -3)),
    damaged(set_stream("sender", "socket", 99)),
    damaged(lambda document: document["start"]["connected"][1].__setitem__("local_port", 70000)),
    damaged(lambda document: document["end"]["streams"].pop()),
    damaged(lambda document: document["end"].pop("streams")),
    damaged(lambda document: document["start"]["test_start"].__setitem__("num_streams", 10**6)),
    damaged(lambda document: document["end"]["sum_sent"].__setitem__("retransmits", 2**64)),
    damaged(lambda document: document["end"]["sum_sent"].__setitem__("bits_per_second", 10**400)),
    sample("iperf3_J_local_3.12_P4.json").replace("4072603306.238961", "Infinity", 1),
    sample("iperf3_J_local_3.12_P4.json").replace("4072603306.238961", "NaN", 1),
    sample("iperf3_J_local_3.12_P4.json").replace("4072603306.238961", "1e999", 1),
], ids=["huge rate", "negative rate", "rate as text", "huge retransmits", "negative retransmits",
        "stream of an unknown socket", "port above 65535", "a stream missing", "no end.streams",
        "a million streams", "retransmits past 64 bits", "an integer rate past a float", "Infinity", "NaN", "1e999"])
def test_damaged_per_stream_figures_are_refused(text):
    with pytest.raises(ParseError):
        parse_iperf3(text)


def test_udp_is_refused():
    document = json.loads(sample("iperf3_J_tcp_single_stream_openwisp.json"))
    document["start"]["test_start"]["protocol"] = "UDP"
    document["end"]["sum"] = {"bytes": 1, "bits_per_second": 8.0, "jitter_ms": 0.1, "packets": 1,
                              "lost_packets": 0, "lost_percent": 0.0, "seconds": 1.0}
    with pytest.raises(ParseError, match="TCP"):
        parse_iperf3(json.dumps(document))
