"""rackproof.probes.ping against iputils ping (20221126) output captured on the dev machine:
loopback, and throwaway network namespaces joined by a veth pair (a tbf qdisc on the far end
for partial loss, a target without ARP answer for "+N errors", a static neighbour entry that
never answers for a silent 100% loss, no route for "Network is unreachable"). The sections
sample is the batch `Host.ping(["thor-2", "10.255.255.3", "thor-9", "fd00::1"])` runs, captured in
such a namespace (its marker lines were written by the loop of an earlier version, the same lines
with another marker word; ping's answers are as captured).
"""

import re
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from rackproof.nodes.host import Host, ProbeFailed
from rackproof.inventory.model import load_inventory
from rackproof.probes import ParseError
from rackproof.probes.ping import PING, PingResult, parse_ping
from rackproof.nodes.remote import EvidenceLog, LocalTransport, Remote, Result
from selftests.suite import EXAMPLES
from selftests.test_causes import Scripted

SAMPLES = Path(__file__).parent / "samples"


@pytest.mark.parametrize("name, expected", [
    ("ping_local_loopback_ok.txt", PingResult("127.0.0.1", 3, 3, 0.0, 0.046, 0.066, 0.087, 0.016)),
    ("ping_local_ipv6_loopback_ok.txt", PingResult("::1", 2, 2, 0.0, 0.048, 0.076, 0.104, 0.028)),
    ("ping_local_netns_partial_loss_pipe.txt",
     PingResult("10.254.9.1", 10, 5, 50.0, 195.811, 288.760, 433.823, 101.225)),
    ("ping_local_netns_host_unreachable_errors.txt",
     PingResult("10.254.9.7", 6, 0, 100.0, None, None, None, None, errors=6)),
    ("ping_local_netns_no_reply_100_loss.txt", PingResult("10.254.9.8", 3, 0, 100.0, None, None, None, None)),
])
def test_real_outputs(name, expected):
    assert parse_ping((SAMPLES / name).read_text()) == expected


def test_failure_before_sending_needs_the_target():
    text = (SAMPLES / "ping_local_netns_network_unreachable.txt").read_text()
    assert parse_ping(text, "10.99.0.1") == PingResult(
        "10.99.0.1", 0, 0, 100.0, None, None, None, None, error="connect: Network is unreachable")
    with pytest.raises(ParseError, match="Network is unreachable"):
        parse_ping(text)


def node_answering(transport):
    node = load_inventory(EXAMPLES / "thor5.toml").node("thor-1")
    return Host(node, Remote("thor-1", transport, EvidenceLog()))


SECTIONS = (SAMPLES / "ping_sections_local_netns_ok_silent_unresolved_unreachable.txt").read_text()


def test_each_target_is_read_from_its_own_section():
    asked = []

    def answer(command):
        asked.append(command)
        # the pings ran at once; the clean-up's status; the sample's markers are this batch's
        marker = re.search(r"### rackproof-section-[0-9a-f]{16} ", command)[0]
        return Result(command, 0, SECTIONS.replace("### rackproof-section ", marker), "", 1.2)
    results = node_answering(Scripted(answer)).ping(["thor-2", "10.255.255.3", "thor-9", "fd00::1"])
    assert list(results) == ["thor-2", "10.255.255.3", "thor-9", "fd00::1"]
    assert results["thor-2"] == PingResult("thor-2", 3, 3, 0.0, 0.069, 0.107, 0.159, 0.037)
    assert results["10.255.255.3"] == PingResult("10.255.255.3", 3, 0, 100.0, None, None, None, None)
    assert results["thor-9"].error == "thor-9: Temporary failure in name resolution"
    assert results["thor-9"].received == 0
    assert results["fd00::1"].error == "connect: Network is unreachable"
    assert len(asked) == 1   # one round trip


def test_a_target_without_its_section_fails_naming_its_command():
    answer = lambda command: Result(command, 0, (SAMPLES / "ping_local_loopback_ok.txt").read_text(), "", 1.0)
    with pytest.raises(ProbeFailed, match="ping -c 3 -W 1 -i 0.2 10.10.0.12"):
        node_answering(Scripted(answer)).ping(["10.10.0.12"])


def test_the_command_is_quoted():
    assert PING.command(target="a;b", count=5) == "ping -c 5 -W 1 -i 0.2 'a;b' 2>&1"


@pytest.mark.parametrize("target, count", [("-f", 3), ("", 3), ("a b", 3), ("a", 0), ("a", True), (["a"], 3)])
def test_the_command_refuses(target, count):
    with pytest.raises(ValueError):
        PING.command(target=target, count=count)


def test_no_target_asks_nothing():
    assert node_answering(Scripted(lambda command: pytest.fail(f"asked {command}"))).ping([]) == {}


@pytest.mark.skipif(shutil.which("ping") is None, reason="no ping here")
def test_the_batch_runs_on_loopback():
    results = node_answering(LocalTransport("thor-1")).ping(["127.0.0.1", "::1"], count=2)
    assert {target: (r.transmitted, r.received) for target, r in results.items()} == {
        "127.0.0.1": (2, 2), "::1": (2, 2)}


@pytest.mark.parametrize("text", ["", "PING x (1.2.3.4) 56(84) bytes of data.\n",
                                  "3 packets transmitted, 3 received, 0% packet loss\n",
                                  "PING 127.0.0.1 (127.0.0.1) 56(84) Bytes Daten.\n"])
def test_unreadable(text):
    with pytest.raises(ParseError):
        parse_ping(text)


LOOPBACK = (SAMPLES / "ping_local_loopback_ok.txt").read_text()
HUGE = "9" * 5000     # more digits than int() reads


@pytest.mark.parametrize("rtt", ["../7/6", "nan/0.066/0.087/0.016", "0.046/inf/0.087/0.016", "0.046/0.066/1e999",
                                 "0.046/0.066/0.087/-nan", f"{HUGE}/0.066/0.087/0.016", "0.046/0.0.66/0.087"])
def test_an_rtt_that_is_not_a_finite_number_fails(rtt):
    text = LOOPBACK.replace("0.046/0.066/0.087/0.016", rtt)
    with pytest.raises(ParseError, match="rtt ") as raised:
        parse_ping(text)
    assert raised.value.text == text


@pytest.mark.parametrize("old, new", [
    ("3 packets transmitted", f"{HUGE} packets transmitted"), ("3 received", f"{HUGE} received"),
    ("0% packet loss", "nan% packet loss"), ("0% packet loss", "1e999% packet loss"),
    ("0% packet loss", f"+{HUGE} errors, 0% packet loss"),
])
def test_a_summary_figure_that_is_not_a_finite_number_fails(old, new):
    with pytest.raises(ParseError):
        parse_ping(LOOPBACK.replace(old, new))


def iputils_output(target, transmitted, received, rtts):
    """The summary lines iputils prints, for the round trip."""
    loss = 0 if transmitted == 0 else round(100 * (transmitted - received) / transmitted, 4)
    lines = [f"PING {target} ({target}) 56(84) bytes of data.", "",
             f"--- {target} ping statistics ---",
             f"{transmitted} packets transmitted, {received} received, {loss:g}% packet loss, time 2003ms"]
    if received:
        lines.append("rtt min/avg/max/mdev = " + "/".join(f"{v:.3f}" for v in rtts) + " ms")
    return "\n".join(lines) + "\n", loss


@settings(max_examples=150, deadline=None)
@given(st.from_regex(r"[a-z0-9][a-z0-9.:-]{0,20}", fullmatch=True),
       st.integers(1, 1000).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n))),
       st.lists(st.integers(0, 10**7).map(lambda v: v / 1000), min_size=4, max_size=4))
def test_round_trip(target, counts, rtts):
    transmitted, received = counts
    text, loss = iputils_output(target, transmitted, received, rtts)
    result = parse_ping(text)
    assert (result.target, result.transmitted, result.received) == (target, transmitted, received)
    assert result.loss_percent == pytest.approx(loss)
    expected_rtts = tuple(rtts) if received else (None,) * 4
    assert (result.rtt_min_ms, result.rtt_avg_ms, result.rtt_max_ms, result.rtt_mdev_ms) == expected_rtts


def test_a_packet_over_the_senders_mtu_with_dont_fragment_is_refused_locally():
    """`ping -M do -s 1473` on a simulated Thor (veth MTU 1500): ping's own "message too long"."""
    found = parse_ping((Path(__file__).parent / "samples" / "ping_M_do_local_debian12_message_too_long.txt").read_text(),
                       "10.10.0.12")
    assert (found.transmitted, found.received, found.errors) == (1, 0, 1)
