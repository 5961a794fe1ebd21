"""Servers of one measurement on one node never share a port: a server is known to be up when
something listens on its port, so a second one started on a port the first holds would fail
to bind and still look started (the RoCE check once connected to such a dead server)."""

import re

import pytest

from rackproof import traffic
from rackproof.host import Host
from rackproof.inventory import load_inventory
from rackproof.remote import EvidenceLog, Remote, Result
from selftests.suite import EXAMPLES
from selftests.test_causes import Scripted


def test_two_servers_at_once_on_one_node_take_two_ports(monkeypatch):
    started = []

    def answer(command):
        if "setsid timeout" in command:
            started.append(int(re.search(r"sport = :(\d+)", command)[1]))
            return Result(command, 0, f"{4000 + len(started)}\n", "", 0.1)
        return Result(command, 0, "", "", 0.01)   # stop
    # the same random choice every time: the first free port of the range
    monkeypatch.setattr(traffic.random, "sample", lambda population, k: list(population)[:k])
    node = load_inventory(EXAMPLES / "spark2.toml").node("spark-2")
    host = Host(node, Remote("spark-2", Scripted(answer), EvidenceLog()))
    with traffic.server(host, lambda port: f"server {port}", lifetime=10) as first, \
            traffic.server(host, lambda port: f"server {port}", lifetime=10) as second:
        assert first != second
    assert started == [first, second]
    with traffic.server(host, lambda port: f"server {port}", lifetime=10) as again:
        assert again == first   # a stopped server's port is free again


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
