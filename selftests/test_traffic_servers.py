"""A measurement's server is started on a port nothing listens on: a server counts as up when
something listens on its port, so one started on a taken port would fail to bind and still look
up (the RoCE check once connected to such a dead server). And a server whose start was
interrupted is stopped all the same. The first runs real servers on this machine's loopback."""

import re
import socket
import sys

import pytest

from rackproof import traffic
from rackproof.host import Host
from rackproof.probe import Command
from rackproof.inventory import load_inventory
from rackproof.remote import EvidenceLog, LocalTransport, Remote, Result
from selftests.suite import EXAMPLES
from selftests.test_causes import Scripted


def free_ports(n: int) -> list[int]:
    sockets = [socket.socket() for _ in range(n)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def listener(port: int) -> Command:
    return Command(f"{sys.executable} -c 'import socket, time; s = socket.socket(); s.bind((\"127.0.0.1\", {port})); "
            "s.listen(); time.sleep(30)'")


def test_a_second_server_never_takes_the_port_a_first_one_listens_on():
    first_port, other = free_ports(2)
    node = load_inventory(EXAMPLES / "spark2.toml").node("spark-2")
    host = Host(node, Remote("spark-2", LocalTransport("spark-2"), EvidenceLog()))
    with traffic.server(host, listener, lifetime=30, ports=[first_port]) as first, \
            traffic.server(host, listener, lifetime=30, ports=[first_port, other]) as second:
        assert (first, second) == (first_port, other)


def test_a_server_whose_start_was_interrupted_is_stopped_by_its_command_line():
    asked = []

    def answer(command):
        asked.append(command)
        if "setsid timeout" in command:
            raise KeyboardInterrupt   # Ctrl-C while the server starts: its pid never comes back
        return Result(command, 0, "", "", 0.01)
    node = load_inventory(EXAMPLES / "spark2.toml").node("spark-2")
    host = Host(node, Remote("spark-2", Scripted(answer), EvidenceLog()))
    with pytest.raises(KeyboardInterrupt):
        with traffic.server(host, lambda port: f"iperf3 -s -1 -B 10.10.0.12 -p {port}", lifetime=63):
            pass
    port = re.search(r"sport = :(\d+)", asked[0])[1]
    assert asked[1] == f"pkill -x -f -- 'timeout 63 iperf3 -s -1 -B 10\\.10\\.0\\.12 -p {port}'; true"
