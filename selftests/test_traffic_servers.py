"""A measurement's server is started on a port nothing listens on: a server counts as up when
something listens on its port, so one started on a taken port would fail to bind and still look
up (the RoCE check once connected to such a dead server). And a server whose start was
interrupted is stopped all the same. The first runs real servers on this machine's loopback."""

import random
import re
import socket
import subprocess
import sys
import threading
import time
from contextlib import contextmanager

import pytest

from rackproof.judging import sharing

from rackproof.measuring import traffic
from rackproof.nodes.host import Host, ProbeFailed
from rackproof.nodes.ownservers import OwnServers
from rackproof.probes._between import declared
from rackproof.probes.sockets import parse_ss_listen
from rackproof.probes.probe import Command
from rackproof.inventory.model import load_inventory
from rackproof.nodes.remote import Evidence, EvidenceLog, LocalTransport, Remote, Result
from selftests.suite import EXAMPLES
from selftests.test_causes import Scripted


def free_ports(n: int) -> list[int]:
    """n ports nothing listens on now, below the kernel's ephemeral range (32768 and up, its
    default): a test beside this one that binds port 0 (a stand-in's server) is never given one
    of them between now and when the server here binds it."""
    ports: list[int] = []
    for port in random.sample(range(20000, 32768), 50):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        ports.append(port)
        if len(ports) == n:
            return ports
    raise AssertionError(f"not {n} free ports among 50 between 20000 and 32767")


def listener(port: int) -> Command:
    return Command(f"{sys.executable} -c 'import socket, time; s = socket.socket(); s.bind((\"127.0.0.1\", {port})); "
            "s.listen(); time.sleep(30)'")


def test_a_second_server_never_takes_the_port_a_first_one_listens_on():
    first_port, other = free_ports(2)
    node = load_inventory(EXAMPLES / "spark2.toml").node("spark-2")
    # two runs' hosts (each its own servers): the port is found taken on the node itself
    host, another = (Host(node, Remote("spark-2", LocalTransport("spark-2"), EvidenceLog())) for _ in range(2))
    with traffic.server(host, listener, lifetime=30, ports=[first_port]) as first, \
            traffic.server(another, listener, lifetime=30, ports=[first_port, other]) as second:
        assert (first, second) == (first_port, other)


def test_a_port_of_the_runs_own_server_is_never_tried_even_when_nothing_listens_on_it():
    """iperf3 -s closes its listening socket once its test's streams are in: a server of the
    next round started ahead on that port took the test's late stream, ended, and refused its
    own client (three of four -P 4 streams refused, in rounds 2-4, on the simulated thor5)."""
    asked = []

    def answer(command):
        asked.append(command)
        if "setsid timeout" not in command:
            return Result(command, 0, "", "", 0.01)
        port = re.search(r"sport = :(\d+)", command)[1]
        return Result(command, 0, f'LISTEN 0 4096 *:{port} *:* users:(("iperf3",pid=9{port},fd=3))\n8{port} 9{port}\n',
                      "", 0.01)
    servers = OwnServers(None)
    servers.started("spark-2", 5201, 4243)     # mid-test: its port looks free
    host = Host(load_inventory(EXAMPLES / "spark2.toml").node("spark-2"), Remote("spark-2", Scripted(answer), EvidenceLog()),
                servers)
    with traffic.server(host, lambda port: f"iperf3 -s -1 -p {port}", lifetime=30, ports=[5201, 5205]) as port:
        assert port == 5205
    assert not any("sport = :5201" in command for command in asked)


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


@pytest.mark.parametrize("shared", [False, True], ids=["in memory", "in the run folder"])
def test_a_running_server_is_the_runs_by_port_and_the_pid_that_listens_until_stopped(tmp_path, shared):
    (port,) = free_ports(1)
    node = load_inventory(EXAMPLES / "spark2.toml").node("spark-2")
    servers = OwnServers(tmp_path / "servers" if shared else None)
    host = Host(node, Remote("spark-2", LocalTransport("spark-2"), EvidenceLog()), servers)
    with traffic.server(host, listener, lifetime=30, ports=[port]):
        (own,) = servers.on("spark-2")
        listening = [l for l in parse_ss_listen(subprocess.run(["ss", "-Hltnp", f"sport = :{port}"], text=True,
                                                                capture_output=True).stdout)]
        # the pid is the listening python's, not that of `timeout` around it
        assert own == (port, listening[0].pid) and servers.on("spark-1") == frozenset()
    assert servers.on("spark-2") == frozenset()


def test_a_listening_row_listed_before_its_process_is_the_servers_never_timeouts_pid():
    """ss -p looks at /proc before it lists the sockets: a server's socket made in between is
    listed without its process. The listener is then timeout's child (the server, 4243 here,
    which the start prints after timeout's own pid): the pid of `timeout` around the server
    (4242) is the one stopped, never the one that listens."""
    asked = []

    def answer(command):
        asked.append(command.removeprefix("export LC_ALL=C; "))
        if "setsid timeout" in command:
            return Result(command, 0, "LISTEN 0      4096         *:5201       *:*\n4242 4243\n", "", 0.01)
        return Result(command, 0, "", "", 0.01)
    servers = OwnServers(None)
    node = load_inventory(EXAMPLES / "spark2.toml").node("spark-2")
    host = Host(node, Remote("spark-2", Scripted(answer), EvidenceLog()), servers)
    with traffic.server(host, lambda port: f"iperf3 -s -1 -p {port}", lifetime=30, ports=[5201]):
        assert servers.on("spark-2") == frozenset({(5201, 4243)})
    assert asked[1] == "kill 4242 2>/dev/null; true"


SERVER_ROW = 'LISTEN 0 4096 *:{port} *:* users:(("{tool}",pid={pid},fd=3))'


@pytest.mark.parametrize("first, second, noted, flagged", [
    # someone's iperf3 -s, seen twice and never the run's: flagged, after a second look
    ([(5201, 900)], [(5201, 900)], [frozenset(), frozenset()], [(5201, 900)]),
    # a server of the run that another of its processes had not noted yet at the first look
    ([(5207, 901)], [(5207, 901)], [frozenset(), frozenset({(5207, 901)})], []),
    # one of the run's servers, stopped before the second look
    ([(5207, 901)], [], [frozenset(), frozenset()], []),
    # the run's own server, noted: no second look
    ([(5201, 900)], None, [frozenset({(5201, 900)})], []),
    # the run's port, another pid (someone's server started on a port the run had used)
    ([(5201, 950)], [(5201, 950)], [frozenset({(5201, 900)})] * 2, [(5201, 950)]),
], ids=["someone's", "just started", "just stopped", "noted", "another pid"])
# every measurement between nodes (its declaration's tool), a new one too, with no line in sharing
@pytest.mark.parametrize("tool", [measurement.tool for measurement in declared()])
def test_only_the_runs_own_measurement_servers_may_listen(monkeypatch, first, second, noted, flagged, tool):
    monkeypatch.setattr(sharing, "SETTLE_S", 0)
    reads, notes = iter([first, second]), iter(noted)

    def read():
        rows = next(reads)
        assert rows is not None, "a second look only when a measurement server is not the run's"
        return parse_ss_listen("\n".join(SERVER_ROW.format(port=p, pid=q, tool=tool) for p, q in rows))
    allowed = sharing.allowed_programs(load_inventory(EXAMPLES / "thor5.toml").at(9))
    found = sharing.listening_openly(read, lambda: next(notes), {"10.10.0.12"}, set(), allowed)
    assert [(l.port, l.pid) for l in found] == flagged


def test_the_servers_of_a_four_stream_run_start_side_by_side_and_every_one_started_stops(monkeypatch):
    """-P 4 over a bond starts its four servers at once; when one cannot start, the three that
    did are stopped all the same."""
    started, stopped = [], []
    at_once = threading.Barrier(4, timeout=5)     # passes only if all four starts run together

    @contextmanager
    def server(host, command_for_port, lifetime, tries=traffic.SERVER_TRIES, ports=None):
        at_once.wait()
        if ports[0] == traffic.PORTS[2]:
            raise ProbeFailed(host.name, Result("start", 1, "", "port taken", 0.01), "could not start a server")
        started.append(ports[0])
        try:
            yield ports[0]
        finally:
            stopped.append(ports[0])
    monkeypatch.setattr(traffic, "server", server)
    inventory = load_inventory(EXAMPLES / "thor5.toml")
    sender, receiver = (Host(inventory.node(name), Remote(name, Scripted(lambda c: Result(c, 0, "", "", 0.01)),
                                                          EvidenceLog())) for name in ("thor-1", "thor-2"))
    with pytest.raises(ProbeFailed, match="could not start a server"):
        traffic.iperf3(sender, receiver, receiver.spec.ip, streams=4, seconds=3, client_ports=(40001, 40002, 40003, 40004))
    assert not at_once.broken
    assert len(started) == 3 and sorted(stopped) == sorted(started)


def test_evidence_of_a_part_started_in_another_thread_goes_where_its_measurement_goes():
    log = EvidenceLog()
    log.sink = test_sink = []
    with log.captured() as kept:
        other = threading.Thread(target=log.carried(
            lambda: log.add(Evidence("thor-2", "start a server", 0, "", "", 0.1, 1.5e9))))
        other.start()
        other.join()
    assert [e.command for e in kept] == ["start a server"] and test_sink == []


def test_a_server_started_ahead_is_the_one_its_measurement_takes_its_start_in_that_measurements_evidence():
    """A round's servers start while the round before measures (plan.in_rounds' ahead): the
    measurement that asks for the same server takes that one, starts none, and stops it."""
    (port,) = free_ports(1)
    log = EvidenceLog()
    host = Host(load_inventory(EXAMPLES / "spark2.toml").node("spark-2"), Remote("spark-2", LocalTransport("spark-2"), log))
    traffic.ready(host, listener, lifetime=30, ports=[port])
    (ahead,) = host.servers.on("spark-2")
    with log.captured() as evidence:
        with traffic.server(host, listener, lifetime=30, ports=[port]) as taken:
            assert taken == port and host.servers.on("spark-2") == {ahead}
    assert ["setsid timeout" in e.command for e in evidence] == [True, False]   # its start, then its stop
    assert host.servers.on("spark-2") == frozenset() and _stopped(port)


def test_a_server_started_ahead_that_no_measurement_took_is_stopped_when_the_rounds_end_whatever_happened():
    (port,) = free_ports(1)
    host = Host(load_inventory(EXAMPLES / "spark2.toml").node("spark-2"),
                Remote("spark-2", LocalTransport("spark-2"), EvidenceLog()))
    with pytest.raises(KeyboardInterrupt):
        with traffic.untaken_stopped([host]):
            traffic.ready(host, listener, lifetime=30, ports=[port])
            assert _listening(port)
            raise KeyboardInterrupt
    assert host.servers.on("spark-2") == frozenset() and _stopped(port)


def test_a_server_started_ahead_that_waited_too_long_is_stopped_and_a_new_one_started(monkeypatch):
    """A round whose nodes another run held: the server started ahead may not live through the
    measurement; a new one is started for it."""
    asked = []

    def answer(command):
        asked.append(command.removeprefix("export LC_ALL=C; "))
        if "setsid timeout" in command:
            pids = f"{4242 + len(asked)} {4243 + len(asked)}"
            return Result(command, 0, f"LISTEN 0 4096 *:5201 *:*\n{pids}\n", "", 0.01)
        return Result(command, 0, "", "", 0.01)
    monkeypatch.setattr(traffic, "LEFT_AT_LEAST_S", 30)     # any wait is too long
    host = Host(load_inventory(EXAMPLES / "spark2.toml").node("spark-2"), Remote("spark-2", Scripted(answer), EvidenceLog()))
    traffic.ready(host, lambda port: f"iperf3 -s -1 -p {port}", lifetime=30, ports=[5201])
    with traffic.server(host, lambda port: f"iperf3 -s -1 -p {port}", lifetime=30, ports=[5201]):
        assert host.servers.on("spark-2") == {(5201, 4246)}
    assert [a.split(";")[0] if a.startswith("kill") else "start" for a in asked] == \
        ["start", "kill 4243 2>/dev/null", "start", "kill 4245 2>/dev/null"]   # the first, then the new one


def _listening(port: int) -> bool:
    return bool(subprocess.run(["ss", "-Hltn", f"sport = :{port}"], text=True, capture_output=True).stdout.strip())


def _stopped(port: int) -> bool:
    """Nothing listens on the port within 5 s (a stopped server's process ends a moment after its signal)."""
    for _ in range(100):
        if not _listening(port):
            return True
        time.sleep(0.05)
    return False


def test_a_port_another_server_won_as_this_one_started_is_taken_and_the_next_port_tried():
    """Two servers started at the same moment on one port (a round's own and the next round's,
    started ahead) both find the port free and something listening on it: the one whose process
    ss does not name lost the bind; it is stopped and the next port tried, never taken for up."""
    asked = []

    def answer(command):
        asked.append(command.removeprefix("export LC_ALL=C; "))
        if "setsid timeout" in command and "sport = :5201" in command:   # the other server (pid 900) listens
            return Result(command, 0, 'LISTEN 0 4096 *:5201 *:* users:(("iperf3",pid=900,fd=3))\n4242 4243\n', "", 0.01)
        if "setsid timeout" in command:
            return Result(command, 0, 'LISTEN 0 4096 *:5205 *:* users:(("iperf3",pid=4245,fd=3))\n4244 4245\n', "", 0.01)
        return Result(command, 0, "", "", 0.01)
    servers = OwnServers(None)
    host = Host(load_inventory(EXAMPLES / "spark2.toml").node("spark-2"), Remote("spark-2", Scripted(answer), EvidenceLog()),
                servers)
    with traffic.server(host, lambda port: f"iperf3 -s -1 -p {port}", lifetime=30, ports=[5201, 5205]) as port:
        assert port == 5205 and servers.on("spark-2") == {(5205, 4245)}
    assert [a.split(";")[0] for a in asked if a.startswith("kill")] == ["kill 4242 2>/dev/null", "kill 4244 2>/dev/null"]


def test_two_starts_at_once_on_one_node_never_try_the_same_port():
    """A round's own start (a second attempt's) and the next round's, ahead, at the same moment:
    each sees the port free and then something listening on it; the run keeps them apart."""
    at_once = threading.Barrier(2, timeout=5)

    def answer(command):
        if "setsid timeout" not in command:
            return Result(command, 0, "", "", 0.01)
        at_once.wait()            # both starts are asked before either answers
        port = re.search(r"sport = :(\d+)", command)[1]
        return Result(command, 0, f'LISTEN 0 4096 *:{port} *:* users:(("iperf3",pid=9{port},fd=3))\n8{port} 9{port}\n',
                      "", 0.01)
    host = Host(load_inventory(EXAMPLES / "spark2.toml").node("spark-2"), Remote("spark-2", Scripted(answer), EvidenceLog()))
    ports = []

    def one():
        with traffic.server(host, lambda port: f"iperf3 -s -1 -p {port}", lifetime=30, ports=[5201, 5205]) as port:
            ports.append(port)
            at_once.wait()        # both up before either stops
    starts = [threading.Thread(target=one) for _ in range(2)]
    for start in starts:
        start.start()
    for start in starts:
        start.join()
    assert sorted(ports) == [5201, 5205] and not at_once.broken
