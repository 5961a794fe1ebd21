"""A measurement whose iperf3 dies from outside (the OOM killer, another operator's kill) is
named as such, with the signal and the kernel's words where the login may read them, and
measured again once; killed twice, the check is not verified: never a figure of the path."""

import json
from pathlib import Path

import pytest

from rackproof.measuring import traffic
from rackproof.judging.failure import NotVerified
from rackproof.nodes.host import Host, ProbeFailed
from rackproof.inventory.model import load_inventory
from rackproof.nodes.remote import EvidenceLog, Remote, Result
from selftests.suite import EXAMPLES
from selftests.test_causes import Scripted

SAMPLES = Path(__file__).parent / "samples"
GOOD = (SAMPLES / "iperf3_J_tcp_single_stream_openwisp.json").read_text()
REFUSED = (SAMPLES / "iperf3_J_local_3.12_error_refused.json").read_text()
# what iperf 3.12's client printed here when its server was SIGKILLed mid-test (exit status 0)
SERVER_KILLED = REFUSED.replace("unable to connect to server: Connection refused", "control socket has closed unexpectedly")
# what iperf 3.12's client printed on the simulated rack when its server was SIGKILLed as the test began
SERVER_KILLED_AT_START = (SAMPLES / "iperf3_J_local_3.12_server_killed_reset.json").read_text()
OOM = "[ 8812.402113] Out of memory: Killed process 4242 (iperf3) total-vm:1024kB, anon-rss:512kB"
INVENTORY = load_inventory(EXAMPLES / "spark2.toml")   # not bonded: one client per measurement


def pair(clients: list[Result], kernel_log: str = ""):
    """spark-1 sending (its iperf3 clients answer `clients` in turn), spark-2 receiving."""
    log = EvidenceLog()
    log.sink = evidence = []
    asked = []

    def sender(command):
        if "dmesg" in command:
            return Result(command, 0, kernel_log, "", 0.01)
        asked.append(command)
        answer = clients[len(asked) - 1]
        return Result(command, answer.exit_status, answer.stdout, answer.stderr, 0.01)

    def receiver(command):
        if "setsid timeout" in command:
            return Result(command, 0, 'LISTEN 0 5 10.20.0.2:5201 0.0.0.0:* users:(("iperf3",pid=11,fd=3))\n10 11\n',
                          "", 0.01)
        return Result(command, 0, "", "", 0.01)
    return (Host(INVENTORY.node("spark-1"), Remote("spark-1", Scripted(sender), log)),
            Host(INVENTORY.node("spark-2"), Remote("spark-2", Scripted(receiver), log)), asked, evidence)


def notes(evidence) -> list[str]:
    return [e.note for e in evidence if "mid-measurement" in e.note]


@pytest.mark.parametrize("killed, named", [
    (Result("", 137, "", "", 0), "spark-1's iperf3 was killed by signal 9 (SIGKILL) mid-measurement"),
    (Result("", -1, "", "", 0), "spark-1's iperf3 was killed by a signal mid-measurement"),
    (Result("", 0, SERVER_KILLED, "", 0), "spark-2's iperf3 server ended mid-measurement"),
    (Result("", 0, SERVER_KILLED_AT_START, "", 0), "spark-2's iperf3 server ended mid-measurement"),
], ids=["status 137", "no exit status", "server killed", "server killed as the test began"])
def test_a_measurement_killed_from_outside_is_named_and_measured_again(killed, named):
    sender, receiver, asked, evidence = pair([killed, Result("", 0, GOOD, "", 0)])
    result = traffic.iperf3(sender, receiver, "10.20.0.2")
    assert result.received_bps == 44042139781.797935 and len(asked) == 2
    (note,) = notes(evidence)
    assert note.startswith(named) and note.endswith(": measured again")


def test_the_kernels_words_are_quoted_where_the_login_may_read_them():
    sender, receiver, _, evidence = pair([Result("", 137, "", "", 0), Result("", 0, GOOD, "", 0)], OOM + "\n")
    traffic.iperf3(sender, receiver, "10.20.0.2")
    assert f"(the node's kernel log: {OOM})" in notes(evidence)[0]


def test_killed_twice_is_not_verified_naming_both_deaths():
    sender, receiver, asked, evidence = pair([Result("", 137, "", "", 0), Result("", 143, "", "", 0)])
    with pytest.raises(NotVerified) as caught:
        traffic.iperf3(sender, receiver, "10.20.0.2")
    said = str(caught.value)
    assert said.startswith("spark-1 -> spark-2: iperf3 throughput not verified: the measurement died from outside "
                           "twice: spark-1's iperf3 was killed by signal 9 (SIGKILL)")
    assert "then spark-1's iperf3 was killed by signal 15 (SIGTERM)" in said and len(asked) == 2
    assert notes(evidence)[-1].endswith("not measured a third time")


def test_a_failure_of_the_path_is_not_a_death_and_is_not_measured_again():
    sender, receiver, asked, _ = pair([Result("", 1, REFUSED, "", 0)])
    with pytest.raises(ProbeFailed, match="Connection refused"):
        traffic.iperf3(sender, receiver, "10.20.0.2")
    assert len(asked) == 1
