"""Servers of one measurement on one node never share a port: a server is known to be up when
something listens on its port, so a second one started on a port the first holds would fail
to bind and still look started (the RoCE check once connected to such a dead server)."""

import re

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
