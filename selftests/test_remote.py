"""The runner: evidence for every command, timeouts, unreachable nodes, record and replay."""

import contextlib
import os
import re
import socket
import threading
import time

import pytest

from paramiko import SSHException

from rackproof.nodes.remote import (CommandTimeout, ConnectionLost, EvidenceLog, LocalTransport, NodeUnreachable, Remote,
                              SshTransport)
from rackproof.nodes.replay import Recording, RecordingTransport, ReplayError, ReplayTransport, command_key


def local(log, timeout=5.0):
    return Remote("ctl", LocalTransport("ctl"), log, timeout)


def test_every_command_is_evidence_with_node_exit_output_and_duration():
    log = EvidenceLog()
    log.sink = []
    result = local(log).run("echo out; echo err >&2; exit 3")
    assert (result.exit_status, result.stdout, result.stderr) == (3, "out\n", "err\n")
    (ev,) = log.sink
    assert (ev.node, ev.command, ev.exit_status, ev.stdout, ev.stderr) == ("ctl", "echo out; echo err >&2; exit 3",
                                                                           3, "out\n", "err\n")
    assert ev.duration >= 0


def test_secrets_never_reach_the_evidence():
    log = EvidenceLog()
    log.add_secret("s3cr3t-key")
    log.sink = []
    local(log).run("echo Bearer s3cr3t-key")
    assert "s3cr3t-key" not in repr(log.sink) and "[REDACTED]" in log.sink[0].stdout


def test_a_hung_command_times_out_and_is_recorded_without_exit_status():
    log = EvidenceLog()
    log.sink = []
    started = time.monotonic()
    with pytest.raises(CommandTimeout, match="did not finish within 0.5 s"):
        local(log).run("sleep 30", timeout=0.5)
    assert time.monotonic() - started < 5
    assert log.sink[0].exit_status is None and "timed out" in log.sink[0].note


@pytest.fixture
def silent_listener():
    """Accepts TCP and never says a word, like a hung sshd."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    held = []
    stop = threading.Event()

    def accept():
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                pass

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join()
    for conn in held:
        conn.close()
    server.close()


def ssh_remote(tmp_path, port, connect_timeout=1.0, budget=0.0):
    """thor-9 at 127.0.0.1:port; by default one connect attempt (no connect budget)."""
    config = tmp_path / "ssh_config"
    config.write_text(f"Host thor-9\n  HostName 127.0.0.1\n  Port {port}\n")
    log = EvidenceLog()
    log.sink = []
    return Remote("thor-9", SshTransport("thor-9", "thor-9", "nvidia", connect_timeout, ssh_config=str(config),
                                         connect_budget=budget), log), log


def test_a_node_whose_sshd_hangs_is_unreachable_within_the_connect_timeout(tmp_path, silent_listener):
    remote, log = ssh_remote(tmp_path, silent_listener)
    started = time.monotonic()
    with pytest.raises(NodeUnreachable) as err:
        remote.run("hostname")
    assert time.monotonic() - started < 4
    assert "thor-9 is unreachable" in str(err.value) and "1 s" in str(err.value)
    # the second command does not wait again: the node is known to be unreachable
    started = time.monotonic()
    with pytest.raises(NodeUnreachable):
        remote.run("id -un")
    assert time.monotonic() - started < 0.5
    assert [e.note.startswith("unreachable") for e in log.sink] == [True, True]


def test_a_refused_connection_is_unreachable_with_the_reason(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed once we leave: nothing listens there
    remote, _ = ssh_remote(tmp_path, port)
    with pytest.raises(NodeUnreachable, match="thor-9 is unreachable: ssh to thor-9"):
        remote.run("hostname")


@pytest.mark.parametrize("a, b", [
    ("iperf3 -c 10.10.0.12 -p 5201 -t 5 -J", "iperf3 -c 10.10.0.12 -p 40123 -t 10 -J"),
    ("ssh -o BatchMode=yes -o ConnectTimeout=5 thor-2 hostname", "ssh -o BatchMode=yes -o ConnectTimeout=3 thor-2 hostname"),
    ("cat /tmp/rackproof-abc123.json", "cat /tmp/rackproof-zz9.json"),
    ("ss -Hltn 'sport = :5201' | grep -q .", "ss -Hltn 'sport = :5299' | grep -q ."),
    ("for i in $(seq 50); do ss; sleep 0.1; done", "for i in $(seq 250); do ss; sleep 0.02; done"),
])
def test_replay_keys_ignore_incidental_arguments(a, b):
    assert command_key(a) == command_key(b)


def test_replay_keys_keep_what_matters():
    assert command_key("ethtool mgbe0_0") != command_key("ethtool mgbe1_0")
    assert command_key("HTTP GET http://127.0.0.1:8080/v1/models") != command_key("HTTP GET http://127.0.0.1:8081/v1/models")
    assert command_key("iperf3 -c 10.10.0.12 -P 4") != command_key("iperf3 -c 10.10.0.12 -P 1")
    assert command_key("seq 50; ethtool mgbe0_0") != command_key("seq 50; ethtool mgbe1_0")


def test_a_recording_replays_what_was_recorded(tmp_path):
    log = EvidenceLog()
    live = Remote("thor-1", RecordingTransport(LocalTransport("thor-1"), "thor-1", tmp_path), log)
    live.run("echo one; exit 4")
    with pytest.raises(CommandTimeout):
        live.run("sleep 5", timeout=0.3)
    replayed = Remote("thor-1", ReplayTransport("thor-1", Recording(tmp_path)), log)
    result = replayed.run("echo one; exit 4")
    assert (result.exit_status, result.stdout) == (4, "one\n")
    with pytest.raises(CommandTimeout):
        replayed.run("sleep 5")
    with pytest.raises(ReplayError, match="no answer from thor-1 for `hostname`"):
        replayed.run("hostname")


def test_an_unreachable_node_is_recorded_and_replayed_as_unreachable(tmp_path, silent_listener):
    remote, log = ssh_remote(tmp_path, silent_listener)
    recorder = Remote("thor-9", RecordingTransport(remote.transport, "thor-9", tmp_path / "rec"), log)
    with pytest.raises(NodeUnreachable):
        recorder.run("hostname")
    with pytest.raises(NodeUnreachable, match="sshd"):
        Remote("thor-9", ReplayTransport("thor-9", Recording(tmp_path / "rec")), log).run("anything")


def test_a_missing_recording_directory_is_one_clear_error(tmp_path):
    with pytest.raises(ReplayError, match="no such recording directory"):
        Recording(tmp_path / "nope")


def test_checks_after_the_one_that_found_a_node_unreachable_say_since_when(tmp_path, silent_listener):
    remote, _ = ssh_remote(tmp_path, silent_listener)
    with pytest.raises(NodeUnreachable) as first:
        remote.run("hostname")
    with pytest.raises(NodeUnreachable) as later:
        remote.run("id -un")
    assert "declared at" not in str(first.value)
    assert re.search(r"thor-9 is unreachable: .* \(declared at \d\d:\d\d:\d\d; tried again once before the verdict\)$",
                     str(later.value)), str(later.value)
    assert later.value.reason == first.value.reason


class _Transport:
    def __init__(self, alive: bool):
        self.alive = alive

    def is_active(self) -> bool:
        return self.alive

    def join(self, timeout: float) -> None:
        pass


class _DyingChannel:
    """A command's channel whose connection dies under the command, as paramiko's does: it is
    closed with no exit status, and writing its own CLOSE raises EOFError."""

    def __init__(self):
        self.sent = []

    def exec_command(self, command: str) -> None:
        self.sent.append(command)

    recv_ready = recv_stderr_ready = exit_status_ready = lambda self: False
    eof_received, closed = False, True

    def close(self) -> None:
        raise EOFError()


def test_a_connection_that_dies_under_a_command_is_a_connection_lost_and_the_command_reads_no_input(monkeypatch):
    """No input is said in the command, never with an EOF on the channel (paramiko sends that
    outside its lock: behind the CLOSE answering a quick command's end, sshd drops the connection)."""
    channel = _DyingChannel()
    conn = type("Conn", (), {"client": type("Client", (), {"get_transport": lambda _: _Transport(False)})()})()
    transport = SshTransport("thor-1", "thor-1", "nvidia", 5.0)
    monkeypatch.setattr(transport, "_channel", lambda notes: (conn, channel))
    monkeypatch.setattr(transport, "_forget", lambda conn: None)
    with pytest.raises(ConnectionLost, match=r"thor-1: the SSH connection dropped while `iperf3 -c x` ran "
                                             r"\(the connection closed before the command ended\); not run again"):
        transport.execute("iperf3 -c x", 10.0)
    assert channel.sent == ["exec </dev/null; iperf3 -c x"]


class _EndedChannel:
    """A command's channel after its whole output came and the channel closed. With a status, as
    sshd ends a command; without one, either the connection died before sshd's exit-status
    (`alive` False, as the blips of test_transient_sim did) or a signal killed the command (paramiko
    drops sshd's exit-signal; the connection lives on)."""

    def __init__(self, stdout: bytes, status: int, alive: bool = True):
        self.pending, self.exit_status, self.transport, self.sent = stdout, status, _Transport(alive), []

    def exec_command(self, command: str) -> None:
        self.sent.append(command)

    def recv_ready(self) -> bool:
        return bool(self.pending)

    def recv(self, n: int) -> bytes:
        data, self.pending = self.pending[:n], self.pending[n:]
        return data

    recv_stderr_ready = lambda self: False
    exit_status_ready = lambda self: True
    eof_received = closed = True

    def recv_exit_status(self) -> int:
        return self.exit_status

    def close(self) -> None:
        pass


def _ran_on(monkeypatch, channels: list, repeatable: bool):
    """SshTransport.execute over `channels`, one per attempt, each on a connection of its own."""
    def connected(channel):
        client = type("Client", (), {"get_transport": lambda _: channel.transport})()
        return type("Conn", (), {"client": client})(), channel

    transport = SshTransport("thor-1", "thor-1", "nvidia", 5.0)
    monkeypatch.setattr(transport, "_channel", lambda notes: connected(channels.pop(0)))
    monkeypatch.setattr(transport, "_forget", lambda conn: None)
    return transport.execute("hostname", 10.0, repeatable)


def test_a_connection_that_dies_before_the_exit_status_runs_the_command_again_never_a_status_of_minus_one(
        monkeypatch):
    result = _ran_on(monkeypatch, [_EndedChannel(b"thor-1\n", -1, alive=False), _EndedChannel(b"thor-1\n", 0)], True)
    assert (result.exit_status, result.stdout) == (0, "thor-1\n")
    assert result.note == ("the connection dropped while it ran (the connection closed before the command's exit "
                           "status came); ran again")
    with pytest.raises(ConnectionLost, match=r"`hostname` ran \(the connection closed before the command's exit "
                                             r"status came\); not run again"):
        _ran_on(monkeypatch, [_EndedChannel(b"thor-1\n", -1, alive=False)], False)


class _RacingChannel(_EndedChannel):
    """A channel whose last output, EOF and exit status come together, just after a look at its
    buffer found it empty (paramiko's thread queues them while the reader looks elsewhere)."""

    def __init__(self, first: bytes, rest: bytes):
        super().__init__(first, 0)
        self.rest, self.eof_received, self.closed = rest, False, False
        self.wake_r, self.wake_w = os.pipe()
        os.write(self.wake_w, b"x")   # select() on the channel wakes at once

    def fileno(self) -> int:
        return self.wake_r

    def recv_ready(self) -> bool:
        if self.pending or not self.rest:
            return bool(self.pending)
        self.pending, self.rest, self.eof_received, self.closed = self.rest, b"", True, True
        return False

    def exit_status_ready(self) -> bool:
        return self.eof_received


def test_output_that_comes_with_the_end_of_a_command_is_read_whole(monkeypatch):
    channel = _RacingChannel(b'[{"ifname":"lo",', b'"mtu":65536}]\n')
    try:
        result = _ran_on(monkeypatch, [channel], True)
    finally:
        os.close(channel.wake_r), os.close(channel.wake_w)
    assert (result.exit_status, result.stdout) == (0, '[{"ifname":"lo","mtu":65536}]\n')


def test_a_command_killed_by_a_signal_on_a_live_connection_keeps_its_outcome(monkeypatch):
    result = _ran_on(monkeypatch, [_EndedChannel(b"half", -1, alive=True), _EndedChannel(b"again", 0)], True)
    assert (result.exit_status, result.stdout, result.note) == (-1, "half", "")


class _Requested:
    """A connection whose transport is alive or not as the request ends: `ends` says how the
    request ends, "answered" (HTTP 200), "session closed" (the SSH connection died under it),
    "refused by the node" (its sshd could not connect) or "late"."""

    def __init__(self, ends: str):
        self.ends = ends
        self.transport = _Transport(ends != "session closed")
        self.client = type("Client", (), {"get_transport": lambda _: self.transport})()


def _answered_through(monkeypatch, ends: list[str], connected: str = ""):
    """SshTransport.http over connections that end as `ends` says, one per connect; the answers
    of the request itself (exchange) are made here."""
    from rackproof.nodes import remote
    from rackproof.nodes.http import HttpRequest, HttpResponse

    def exchange(request, timeout, network):
        ends = conns[-1].ends
        if ends == "late":
            raise TimeoutError(f"no complete answer within {timeout:g} s")
        if ends == "refused by the node":
            return HttpResponse(0, "no HTTP answer: the node could not connect to 10.10.0.12:8081", None, 0.01)
        if ends == "session closed":   # as rackproof.nodes.tunnel reads a channel closed with no EOF
            raise EOFError("the SSH connection closed under the request")
        return HttpResponse(200, "ok", None, 0.01)

    def connection(notes):
        if connected:   # what making the connection took, as _opened notes it
            notes.append(connected)
        conns.append(_Requested(ends[len(conns)]))
        return conns[-1]

    conns: list[_Requested] = []
    transport = SshTransport("thor-1", "thor-1", "nvidia", 5.0)
    monkeypatch.setattr(remote, "exchange", exchange)
    monkeypatch.setattr(transport, "_connection", connection)
    monkeypatch.setattr(transport, "_forget", lambda conn: None)
    return transport.http(HttpRequest("GET", "http://127.0.0.1:8080/v1/models"), 10.0), len(conns)


def test_a_request_whose_connection_closed_under_it_is_sent_again_on_a_fresh_connection(monkeypatch):
    response, connects = _answered_through(monkeypatch, ["session closed", "answered"])
    assert response.status == 200 and connects == 2


def test_a_request_that_had_to_connect_again_says_so_in_its_evidence(monkeypatch):
    """A node's first contact can be a request over its SSH (the agent's): an sshd that refused
    the connects before it (restarting, rebooting) is named in that request's evidence."""
    from rackproof.nodes.http import HttpRequest
    from rackproof.nodes.remote import EvidenceLog, Remote

    said = "connected at attempt 4 after 02:35:42.7 refused (Connection refused)"
    response, _ = _answered_through(monkeypatch, ["answered"], connected=said)
    assert response.note == said
    log = EvidenceLog()
    node = Remote("thor-1", type("T", (), {"http": lambda self, request, timeout: response})(), log)
    with log.captured() as kept:
        node.http(HttpRequest("GET", "http://127.0.0.1:8080/v1/models"))
    assert [ev.note for ev in kept] == [said]


def test_a_request_whose_connection_closed_twice_is_a_connection_lost_not_a_verdict(monkeypatch):
    with pytest.raises(ConnectionLost, match=r"\(the SSH connection closed under the request\); it dropped again "
                                             r"when it ran once more"):
        _answered_through(monkeypatch, ["session closed", "session closed"])


def test_a_port_the_node_cannot_connect_to_is_the_nodes_answer_at_once(monkeypatch):
    response, connects = _answered_through(monkeypatch, ["refused by the node"])
    assert (response.status, connects) == (0, 1)
    assert response.text == "no HTTP answer: the node could not connect to 10.10.0.12:8081"


def test_a_late_answer_on_a_live_connection_stays_a_late_answer(monkeypatch):
    with pytest.raises(TimeoutError, match="no complete answer within 10 s"):
        _answered_through(monkeypatch, ["late"])


class _OpeningTransport(_Transport):
    """A paramiko transport whose sshd answers each direct-tcpip open with `failure` (RFC 4254's
    code and text), or after `delay` seconds of trying."""

    def __init__(self, failure: tuple[int, str] | None = None, delay: float = 0.0):
        super().__init__(True)
        self.failure, self.delay = failure, delay

    def open_channel(self, kind, dest, src, timeout=None):
        from paramiko import ChannelException
        if self.delay:
            time.sleep(min(self.delay, timeout))
            raise SSHException("Timeout opening channel.")
        raise ChannelException(*self.failure)


@pytest.mark.parametrize("failure, said", [
    ((2, "Connect failed"), "the node could not connect to 10.10.0.12:8081 (its sshd: Connect failed)"),
    ((1, "administratively prohibited"), "the node's sshd does not allow TCP forwarding (AllowTcpForwarding): "
                                         "10.10.0.12:8081 was not tried (its sshd: administratively prohibited)"),
])
def test_the_nodes_sshd_saying_it_did_not_connect_is_no_http_answer_naming_why(failure, said):
    from rackproof.nodes.http import HttpRequest, exchange
    from rackproof.nodes.tunnel import Through

    started = time.monotonic()
    response = exchange(HttpRequest("GET", "http://10.10.0.12:8081/v1/models"), 10.0, Through(_OpeningTransport(failure)))
    assert (response.status, response.text) == (0, f"no HTTP answer: {said}")
    assert time.monotonic() - started < 2


class _Closed:
    """A direct-tcpip channel at its end: the server closed its side (the node's sshd sent EOF), or
    the SSH connection died (paramiko closed the channel, no EOF came)."""

    def __init__(self, eof: bool):
        self.eof_received = eof

    def settimeout(self, timeout):
        pass

    def recv(self, n: int) -> bytes:
        return b""


def test_an_answer_cut_by_the_ssh_connections_death_is_never_read_as_the_answers_end():
    """A body delimited by the connection's end would look whole: a channel that closed with no
    EOF from the node's sshd is the SSH connection's fault (SshTransport.http sends it again)."""
    from rackproof.nodes.tunnel import ChannelStream

    assert ChannelStream(_Closed(eof=True)).read(65536, 5.0) == b""
    with pytest.raises(EOFError, match="the SSH connection closed under the request"):
        ChannelStream(_Closed(eof=False)).read(65536, 5.0)


def test_an_sshd_still_connecting_when_the_request_times_out_is_a_late_answer_and_other_refusals_are_the_connections():
    from paramiko import ChannelException

    from rackproof.nodes.http import HttpRequest, exchange
    from rackproof.nodes.tunnel import Through

    with pytest.raises(TimeoutError, match="no complete answer within 0.3 s"):
        exchange(HttpRequest("GET", "http://10.10.0.12:8081/v1/models"), 0.3, Through(_OpeningTransport(delay=1.0)))
    with pytest.raises(ChannelException):   # short of resources: SshTransport.http connects again
        exchange(HttpRequest("GET", "http://10.10.0.12:8081/v1/models"), 5.0,
                 Through(_OpeningTransport((4, "Resource shortage"))))


def test_a_refused_connect_is_tried_again_through_the_budget_and_the_message_names_every_attempt(tmp_path,
                                                                                                monkeypatch):
    from rackproof.nodes import remote as remote_module
    monkeypatch.setattr(remote_module, "CONNECT_BACKOFF", (0.2, 0.4))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed once we leave: nothing listens there (sshd restarting)
    remote, log = ssh_remote(tmp_path, port, budget=1.6)
    started = time.monotonic()
    with pytest.raises(NodeUnreachable) as err:
        remote.run("hostname")
    # attempts at 0, 0.2, 0.6, 1.0 and 1.4 s; the next would start past the budget
    assert 1.3 < time.monotonic() - started < 3
    attempt = r"\d\d:\d\d:\d\d\.\d refused \(Connection refused\)"
    assert re.fullmatch(rf"thor-9 is unreachable: ssh to thor-9: 5 connect attempts in the connect budget of 1.6 s "
                        rf"failed: {attempt}(; {attempt}){{4}}", str(err.value)), str(err.value)
    (ev,) = log.sink
    assert ev.exit_status is None and ev.note == f"unreachable: {err.value.reason}"


class _Connecting:
    """A fabric Connection whose open() fails as `fails` says (an exception), or opens."""

    def __init__(self, opened: list, fails: BaseException | None):
        self.opened, self.fails = opened, fails

    def open(self) -> None:
        self.opened.append(self)
        if self.fails is not None:
            raise self.fails

    def close(self) -> None:
        pass


def _opened_after(monkeypatch, failures: list, budget: float = 10.0):
    """SshTransport._opened over connections failing as `failures` say, then one that opens."""
    import errno as errnos
    from rackproof.nodes import remote as remote_module
    monkeypatch.setattr(remote_module, "CONNECT_BACKOFF", (0.01,))
    transport = SshTransport("thor-3", "thor-3", "nvidia", 5.0, connect_budget=budget)
    opened, fails = [], [*failures, None]
    monkeypatch.setattr(transport, "_made", lambda: _Connecting(opened, fails[len(opened)]))
    notes = []
    conn = transport._opened(transport._made(), notes)
    return conn, opened, notes, transport, errnos


def test_refused_reset_timed_out_and_no_route_each_get_their_own_retry_and_each_attempt_is_noted(monkeypatch):
    import errno
    import paramiko
    refused = paramiko.ssh_exception.NoValidConnectionsError(
        {("10.0.0.13", 22): ConnectionRefusedError(errno.ECONNREFUSED, "Connection refused")})
    conn, opened, notes, transport, _ = _opened_after(monkeypatch, [
        refused, ConnectionResetError(errno.ECONNRESET, "Connection reset by peer"), socket.timeout("timed out"),
        OSError(errno.EHOSTUNREACH, "No route to host"), EOFError()])
    assert conn is opened[-1] and len(opened) == 6 and transport.connects == 1
    (note,) = notes
    kinds = re.findall(r"\d\d:\d\d:\d\d\.\d ([a-z ]+) \(", note)
    assert note.startswith("connected at attempt 6 after ") and \
        kinds == ["refused", "reset", "timed out", "no route", "closed before login"], note
    # kept for the node's row in the report (results.json nodes[].reach.connects), whichever
    # command's evidence the note went to
    assert transport.retried == [note]


def test_a_refused_login_is_said_at_once_never_waited_on(monkeypatch):
    import paramiko
    with pytest.raises(NodeUnreachable, match="authentication failed") as err:
        _opened_after(monkeypatch, [paramiko.AuthenticationException("no"), None])
    assert "attempt" not in str(err.value)


def test_a_node_declared_unreachable_is_tried_once_more_with_one_attempt(tmp_path, monkeypatch):
    from rackproof.nodes import remote as remote_module
    monkeypatch.setattr(remote_module, "CONNECT_BACKOFF", (0.2,))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    remote, log = ssh_remote(tmp_path, port, budget=0.5)
    with pytest.raises(NodeUnreachable, match="3 connect attempts"):
        remote.run("hostname")
    declared = remote.unreachable
    assert declared is not None
    with remote.tried_once_more():
        with pytest.raises(NodeUnreachable) as again:
            remote.run("hostname")
    assert ": 1 connect attempt in " in str(again.value) and remote.transport.connect_budget == 0.5
    assert remote.unreachable is declared      # the later checks say when and why it was declared


def test_commands_that_waited_for_a_connect_failing_through_its_budget_fail_with_it(monkeypatch):
    """Each trying the budget again in turn would cost a node that is down the budget once per
    command: the facts of a node ask for it many at once."""
    transport = SshTransport("thor-3", "thor-3", "nvidia", 5.0, connect_budget=20.0)
    tried = []

    def opened(conn, notes):
        tried.append(1)
        time.sleep(0.3)
        raise NodeUnreachable("thor-3", "ssh to thor-3: 4 connect attempts in the connect budget of 20 s failed: ...")
    monkeypatch.setattr(transport, "_made", lambda: type("Conn", (), {"is_connected": False})())
    monkeypatch.setattr(transport, "_opened", opened)
    failed = []

    def command():
        try:
            transport._connection([])
        except NodeUnreachable as e:
            failed.append(e.reason)
    threads = [threading.Thread(target=command) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(tried) == 1 and len(failed) == 4 and len(set(failed)) == 1, (tried, failed)
    with pytest.raises(NodeUnreachable):     # a command after it tries again
        transport._connection([])
    assert len(tried) == 2


class _Served:
    """An httpcore network whose one connection answers with `answer`, handed over in pieces of
    `piece` bytes (as a node's stream comes in packets), then closes."""

    def __init__(self, answer: bytes, piece: int):
        self.pieces = [answer[k:k + piece] for k in range(0, len(answer), piece)]

    def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        import httpcore

        pieces = self.pieces

        class Stream(httpcore.NetworkStream):
            def read(self, max_bytes, timeout=None):
                return pieces.pop(0) if pieces else b""

            def write(self, buffer, timeout=None):
                pass

            def close(self):
                pass

        return Stream()


STREAMED = (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n"
            b": keep-alive\r\n\r\ndata: {\"token\": 1}\r\n\r\ndata: [DONE]\r\n\r\n")


@pytest.mark.parametrize("piece", [1, 2, 3, 5, 7, 64])
def test_an_event_stream_in_any_pieces_reads_as_its_lines_with_its_first_data_line_seen(piece):
    from rackproof.nodes.http import HttpRequest, exchange

    response = exchange(HttpRequest("POST", "http://10.10.0.11:8081/v1/chat/completions", json={}), 5.0,
                        _Served(STREAMED, piece))
    assert response.status == 200 and response.first_byte_s is not None
    assert response.text.split("\n") == [": keep-alive", "", 'data: {"token": 1}', "", "data: [DONE]", ""]


def test_an_answer_without_a_data_line_has_no_first_token_and_a_last_line_without_its_end_is_kept():
    from rackproof.nodes.http import HttpRequest, exchange

    answer = b"HTTP/1.1 200 OK\r\n\r\n" + b"x" * 4_000_000 + b"data: not at a line's start\nlast"
    response = exchange(HttpRequest("GET", "http://10.10.0.11:8081/v1/models"), 5.0, _Served(answer, 65536))
    assert response.first_byte_s is None
    assert [len(line) for line in response.text.split("\n")] == [4_000_000 + len("data: not at a line's start"), 4]
