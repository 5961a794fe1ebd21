"""Run a command on a node and keep what happened as evidence.

Three ways to reach a node, one interface (`Remote.run`): SSH with fabric, a local
shell when the controller is that node, and replay of a recording. Every call
returns a Result and appends an Evidence record to the run's EvidenceLog.
"""

from __future__ import annotations

import errno
import logging
import select
import shlex
import socket
import subprocess
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field, fields, replace
from typing import Callable, Iterator, Protocol, TypeVar

from rackproof.nodes.http import HttpRequest, HttpResponse, exchange

# paramiko logs every failed connection from its transport thread, traceback and all
# ("Exception (client): Error reading SSH protocol banner"), and pytest puts the records of every
# logger, propagating or not, in the failure's report; NodeUnreachable's reason already says what
# happened. Above CRITICAL, paramiko's records are not made at all.
logging.getLogger("paramiko").setLevel(logging.CRITICAL + 1)

T = TypeVar("T")


class NodeUnreachable(Exception):
    """A fresh connect to the node failed through the connect budget (not a failing command,
    not one refused channel)."""

    def __init__(self, node: str, reason: str, since: str = ""):
        self.node, self.reason, self.since = node, reason, since
        # `since`: the node was declared unreachable earlier in the run, at that time
        super().__init__(f"{node} is unreachable: {reason}"
                         + (f" (declared at {since}; tried again once before the verdict)" if since else ""))


class NoAnswer(Exception):
    """A command that got no whole answer (late, no channel, its connection dropped): that
    command could not be judged; it says nothing about the node or its cables."""


class ChannelRefused(NoAnswer):
    """The node's connection works, but it gave this command no channel, asked again and again
    (sshd's MaxSessions, a node too busy to fork): that command's failure, not the node's."""

    def __init__(self, node: str, command: str, reason: str, waited: float):
        self.node, self.command, self.reason, self.waited = node, command, reason, waited
        super().__init__(f"{node}: `{command}` got no SSH channel within {waited:g} s of asking again ({reason}); "
                         f"the connection to {node} itself works")


class ConnectionLost(NoAnswer):
    """The connection dropped while a command ran that is not safe to run twice (a server
    started, a lane taken down), or under one that only reads both times it ran: reported as
    that command's failure, never run again blindly."""

    def __init__(self, node: str, command: str, reason: str, again: bool = False):
        self.node, self.command, self.reason, self.again = node, command, reason, again
        super().__init__(f"{node}: the SSH connection dropped while `{command}` ran ({reason}); "
                         + ("it dropped again when it ran once more on a fresh connection" if again
                            else "not run again, as it is not safe to repeat"))


class Rebooted(ConnectionLost):
    """What was measured on a node before it rebooted during the run (its boot id changed): never
    judged on facts from before a reboot, cut short as the connection it was measured on was."""

    def __init__(self, node: str, what: str, between: tuple[str, str]):
        self.node, self.what, self.command, self.again, self.between = node, what, what, False, between
        self.reason = f"measured before {node} rebooted at {between[0]}–{between[1]}"
        NoAnswer.__init__(self, f"{node}: {what} was {self.reason} (its boot id changed in between): not judged on "
                                "facts from before a reboot; run the check again")


class CommandTimeout(NoAnswer):
    def __init__(self, node: str, command: str, timeout: float):
        self.node, self.command, self.timeout = node, command, timeout
        super().__init__(f"{node}: `{command}` did not finish within {timeout:g} s")


@dataclass
class Evidence:
    node: str
    command: str
    exit_status: int | None      # None: no exit status (unreachable, timed out)
    stdout: str
    stderr: str
    duration: float
    started: float
    note: str = ""               # why there is no exit status, or that the answer was recalled
    probe: str = ""              # the probe that made the command ("" for a request, or what no probe made)
    values: dict = field(default_factory=dict)   # the values it was made with (str, or a list of str)

    def as_dict(self) -> dict:
        # asdict() without its deep copy (each value is a str, a number or a list of str): a run
        # makes a dict of every record of every check, and at 8 nodes each SSH pair's check
        # carries its source's whole fan-out
        out = {name: getattr(self, name) for name in _EVIDENCE_FIELDS}
        out["values"] = {k: list(v) if isinstance(v, list) else v for k, v in self.values.items()}
        return out


_EVIDENCE_FIELDS = tuple(f.name for f in fields(Evidence))


@dataclass
class Result:
    command: str
    exit_status: int
    stdout: str
    stderr: str
    duration: float
    note: str = ""      # what it took: a channel asked for again, a fresh connection

    @property
    def ok(self) -> bool:
        return self.exit_status == 0


class EvidenceLog:
    """Where evidence goes. The pytest glue points `sink` at the current test; a thread that
    measures one part of a group for several tests at once keeps its own (`captured`)."""

    def __init__(self):
        self._secrets: set[str] = set()
        self.sink: list[Evidence] | None = None
        self._local = threading.local()

    @contextmanager
    def captured(self) -> Iterator[list[Evidence]]:
        """The evidence this thread adds meanwhile, kept apart from the current test's."""
        kept: list[Evidence] = []
        self._local.sink = kept
        try:
            yield kept
        finally:
            self._local.sink = None

    def carried(self, fn: Callable[..., T]) -> Callable[..., T]:
        """fn, to run in another thread with its evidence going where this thread's goes (the
        parts of one measurement started side by side)."""
        sink = getattr(self._local, "sink", None)

        def run(*args, **kwargs) -> T:
            self._local.sink = sink
            try:
                return fn(*args, **kwargs)
            finally:
                self._local.sink = None
        return run

    def add_secret(self, secret: str) -> None:
        """A value (an access key) that must never appear in evidence, recordings or reports."""
        if secret:
            self._secrets.add(secret)

    def redact(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, "[REDACTED]")
        return text

    def add(self, ev: Evidence) -> None:
        ev.command, ev.stdout, ev.stderr, ev.note = (
            self.redact(ev.command), self.redact(ev.stdout), self.redact(ev.stderr), self.redact(ev.note))
        ev.values = {k: [self.redact(x) for x in v] if isinstance(v, list) else self.redact(v)
                     for k, v in ev.values.items()}
        sink = getattr(self._local, "sink", None)
        if sink is None:
            sink = self.sink
        if sink is not None:
            sink.append(ev)


class Transport(Protocol):
    def execute(self, command: str, timeout: float, repeatable: bool = False) -> Result: ...
    def http(self, request: HttpRequest, timeout: float) -> HttpResponse: ...
    def close(self) -> None: ...


@dataclass
class Remote:
    """One node, as the suite talks to it. A node whose fresh connect failed through its connect
    budget is remembered, so a dead node costs the budget once per run (and one attempt before
    the verdict), not once per test; the checks after say when and why it was declared unreachable."""

    node: str
    transport: Transport
    log: EvidenceLog
    default_timeout: float = 60.0
    # read on each fresh connection ("" for none): a connection lives within one boot of the node,
    # so what it carried was measured in the boot this command names
    boot_command: str = ""
    boots: list[tuple[str, float]] = field(default_factory=list)   # (what it printed, when its connection was made)
    _unreachable: NodeUnreachable | None = field(default=None, repr=False)
    _connects: int = field(default=0, repr=False)
    _boot_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def unreachable(self) -> NodeUnreachable | None:
        """Why the node was declared unreachable in this run (None: it was not)."""
        return self._unreachable

    @contextmanager
    def tried_once_more(self) -> Iterator[None]:
        """The node declared unreachable, tried again before the verdict with one connect attempt
        (its connect budget was spent when it was declared). Still unreachable, it stays declared
        as it was: when and why."""
        declared, self._unreachable = self._unreachable, None
        budget = getattr(self.transport, "connect_budget", None)
        if budget is not None:
            self.transport.connect_budget = 0.0
        try:
            yield
        finally:
            if budget is not None:
                self.transport.connect_budget = budget
            if self._unreachable is not None:
                self._unreachable = declared

    def run(self, command: str, timeout: float | None = None, repeatable: bool = False, probe: str = "",
            values: dict | None = None) -> Result:
        """`repeatable`: the command only reads, so it may run again on a fresh connection if
        the connection drops while it runs. `probe` and `values`: what made it, for its evidence."""
        timeout = timeout or self.default_timeout
        result, started = self._attempt(command, lambda: self.transport.execute(command, timeout, repeatable), timeout)
        self.log.add(Evidence(self.node, command, result.exit_status, result.stdout, result.stderr,
                              result.duration, started, note=result.note, probe=probe, values=values or {}))
        self._note_boot(result if command == self.boot_command else None)
        return result

    def _note_boot(self, answer: Result | None) -> None:
        """The node's boot id, read when the transport made a fresh connection since the last look
        (`answer`: the boot id command's own, when that was the command)."""
        connects = getattr(self.transport, "connects", 0)
        if not self.boot_command or connects == self._connects:
            return
        with self._boot_lock:
            if connects == self._connects:   # another thread on the same connection looked
                return
            self._connects = connects
        made = getattr(self.transport, "connected_at", time.time())
        try:
            answer = answer or self.run(self.boot_command, repeatable=True, probe="boot id")
        except (NoAnswer, NodeUnreachable):   # not known on this connection
            return
        if answer.ok:
            self.boots.append((answer.stdout.strip(), made))

    def http(self, request: HttpRequest, timeout: float = 30.0) -> HttpResponse:
        """An HTTP request as this node makes it; evidence like a command (exit status: HTTP status)."""
        response, started = self._attempt(request.describe(), lambda: self.transport.http(request, timeout), timeout)
        stopped = f"the answer stopped: {response.stopped}" if response.stopped else ""
        self.log.add(Evidence(self.node, request.describe(), response.status, response.text, "",
                              response.duration_s, started, note="; ".join(n for n in (response.note, stopped) if n)))
        self._note_boot(None)
        return response

    def _attempt(self, what: str, call: Callable, timeout: float):
        """call() -> (its answer, start time); an unreachable node or a timeout is evidence too."""
        started = time.time()
        try:
            if self._unreachable:
                raise self._unreachable
            return call(), started
        except NodeUnreachable as e:
            self._no_answer(what, started, f"unreachable: {e.reason}")
            if e is self._unreachable:
                raise
            # the check that found it says so; the later ones say since when
            self._unreachable = NodeUnreachable(self.node, e.reason, time.strftime("%H:%M:%S", time.localtime(started)))
            raise
        except (ChannelRefused, ConnectionLost) as e:
            self._no_answer(what, started, e.reason)
            raise
        except (TimeoutError, CommandTimeout):
            self._no_answer(what, started, f"timed out after {timeout:g} s")
            raise CommandTimeout(self.node, what, timeout) from None

    def _no_answer(self, what: str, started: float, note: str) -> None:
        self.log.add(Evidence(self.node, what, None, "", "", time.time() - started, started, note=note))

    def close(self) -> None:
        self.transport.close()


class LocalTransport:
    """The controller is this node: run through the local shell."""

    def __init__(self, node: str):
        self.node = node

    def execute(self, command: str, timeout: float, repeatable: bool = False) -> Result:
        started = time.monotonic()
        try:
            proc = subprocess.run(["bash", "-c", command], capture_output=True, text=True,
                                  timeout=timeout, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise CommandTimeout(self.node, command, timeout) from None
        return Result(command, proc.returncode, proc.stdout, proc.stderr, time.monotonic() - started)

    def http(self, request: HttpRequest, timeout: float) -> HttpResponse:
        return exchange(request, timeout)

    def close(self) -> None:
        pass


# sshd's stock MaxSessions is 10 sessions per connection; the suite opens at most this many at
# once on a node's connection (the threads of a round, the checks of a worker), the rest wait
CHANNELS_PER_CONNECTION = 8
# a channel refused on a working connection is asked for again after each of these (6.6 s in all)
CHANNEL_WAITS = (0.1, 0.3, 0.7, 1.5, 4.0)
# a fresh connect that failed the way the rack's own life makes it fail (refused: sshd restarting;
# reset or closed before its banner: MaxStartups shedding it; timed out, no route: a node
# rebooting, a link flapping) is tried again after each of these waits, the last one repeated,
# while the connect budget ([ssh] connect_budget) lasts; a refused login, a changed host key or
# a name that does not resolve is said at once: waiting changes none of them
CONNECT_BACKOFF = (0.5, 1.0, 2.0, 4.0, 8.0)
CONNECT_BUDGET = 20.0    # seconds, the inventory's default
# a command reads no input, as one given to `ssh HOST CMD </dev/null`. Said in the command, not
# with an EOF on the channel: paramiko sends a channel's EOF outside its lock, so it could follow
# the CLOSE its own thread answered a quick command's end with, and sshd then drops the whole
# connection ("ieof packet referred to nonexistent channel"), every other command on it with it
NO_INPUT = "exec </dev/null; "


class SshTransport:
    """fabric over SSH: honours the ssh_config (HostName, User, IdentityFile, ProxyJump),
    with a connect timeout that also bounds the banner and auth phases, so a host that
    accepts TCP and never answers is reported as unreachable, not waited on.

    One connection per node carries every command, several at once on channels of their own.
    A transient fault is what it is: a refused channel is asked for again, a dropped connection
    is made again, and only a fresh connect that fails makes the node unreachable."""

    def __init__(self, node: str, host: str, user: str | None, connect_timeout: float,
                 ssh_config: str | None = None, identity: str | None = None, jump: str | None = None,
                 channels: int = CHANNELS_PER_CONNECTION, connect_budget: float = CONNECT_BUDGET):
        self.node, self.host, self.user = node, host, user
        self.connect_timeout, self.connect_budget = connect_timeout, connect_budget
        # fresh connections made, the last one when (a new one after a drop may be a node that rebooted)
        self.connects, self.connected_at = 0, 0.0
        self.retried: list[str] = []   # each connect that needed more than one attempt, in words
        self._failed: tuple[NodeUnreachable, float] | None = None   # the last connect that failed, when
        self.ssh_config, self.identity, self.jump = ssh_config, identity, jump
        self._conn = None
        # opening the connection is not safe from two threads at once; its channels are
        self._lock = threading.Lock()
        self._channels = threading.BoundedSemaphore(channels)

    def _connection(self, notes: list[str]):
        """The node's connection, made (again) if there is none or it dropped since the last
        command (said in `notes`): NodeUnreachable when a fresh connect fails, with its own reason.
        A command that waited for another's connect to fail through the budget fails with it: each
        one trying the budget again in turn would cost the budget once per command."""
        asked = time.monotonic()
        with self._lock:
            if self._failed is not None and self._failed[1] > asked:
                raise NodeUnreachable(self.node, self._failed[0].reason)
            if self._conn is not None and not self._conn.is_connected:
                self._conn.close()
                self._conn = None
                notes.append("the connection had dropped since the last command; connected again")
            conn = self._made()
            if conn.is_connected:
                return conn
            try:
                conn = self._opened(conn, notes)
            except NodeUnreachable as e:
                self._failed = (e, time.monotonic())
                raise
            self._failed = None
            # small messages go out at once: with Nagle's algorithm each command's channel
            # request waited for the peer's delayed ACK (40 ms on Linux)
            sock = conn.client.get_transport().sock
            if isinstance(sock, socket.socket):   # (through a jump host it is a channel)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            return conn

    def _opened(self, conn, notes: list[str]):
        """conn opened, tried again with backoff while the connect budget lasts when it fails as
        the rack's own life makes it fail; each failed attempt said in `notes`. NodeUnreachable
        names every attempt when the budget ran out, or the one failure that waiting cannot help."""
        import paramiko

        first, attempts = time.monotonic(), []
        waits = iter(CONNECT_BACKOFF)
        wait = next(waits)
        while True:
            at = time.time()
            try:
                conn.open()
                self.connects, self.connected_at = self.connects + 1, at
                if attempts:
                    notes.append(f"connected at attempt {len(attempts) + 1} after " + "; ".join(attempts))
                    self.retried.append(notes[-1])
                return conn
            except (OSError, socket.timeout, EOFError, paramiko.SSHException) as e:
                self._conn = None
                conn.close()
                kind = connect_failure(e)
                said = _ssh_reason(e, self.connect_timeout)
                if kind is None:   # waiting changes nothing: said as it is, as the only attempt
                    raise NodeUnreachable(self.node, f"ssh to {self.host}: {said}") from None
                attempts.append(f"{_clock(at)} {kind} ({said})")
                if time.monotonic() - first + wait > self.connect_budget:
                    raise NodeUnreachable(self.node, f"ssh to {self.host}: {len(attempts)} connect attempt"
                                          f"{'s' * (len(attempts) > 1)} in the connect budget of "
                                          f"{self.connect_budget:g} s failed: " + "; ".join(attempts)) from None
                time.sleep(wait)
                wait = next(waits, wait)
                conn = self._made()

    def _made(self):
        import fabric  # imported here: replay runs need neither paramiko nor a network

        if self._conn is None:
            config = fabric.Config(runtime_ssh_path=self.ssh_config) if self.ssh_config else fabric.Config()
            kwargs = {"banner_timeout": self.connect_timeout, "auth_timeout": self.connect_timeout,
                      "allow_agent": False}
            if self.identity:
                kwargs["key_filename"] = self.identity
            gateway = fabric.Connection(self.jump, config=config, connect_timeout=self.connect_timeout,
                                        connect_kwargs=kwargs) if self.jump else None
            self._conn = fabric.Connection(self.host, user=self.user, config=config, gateway=gateway,
                                           connect_timeout=self.connect_timeout, connect_kwargs=kwargs)
        return self._conn

    def _forget(self, conn) -> None:
        """Drop a connection that died, unless another thread already made a new one; a working
        connection is never closed under the channels of other commands."""
        with self._lock:
            if self._conn is conn:
                self._conn = None
        conn.close()

    def _channel(self, notes: list[str]):
        """A session channel on the node's connection: refused channels asked for again, a dead
        connection made again once."""
        import paramiko

        waits = iter(CHANNEL_WAITS)
        waited, remade = 0.0, False
        while True:
            conn = self._connection(notes)
            transport = conn.client.get_transport()
            try:
                return conn, transport.open_session(timeout=self.connect_timeout)
            except (OSError, socket.timeout, EOFError, paramiko.SSHException, AttributeError) as e:
                reason = _ssh_reason(e, self.connect_timeout)
                if transport is not None and transport.is_active():
                    wait = next(waits, None)
                    if wait is None:
                        raise ChannelRefused(self.node, "", reason, waited) from None
                    notes.append(f"no channel ({reason}), asked again after {wait:g} s")
                    time.sleep(wait)
                    waited += wait
                    continue
                self._forget(conn)
                if remade:
                    raise NodeUnreachable(self.node, f"ssh to {self.host}: the connection dropped again at once "
                                                     f"({reason})") from None
                remade = True
                notes.append(f"the connection had dropped ({reason}); connected again")

    def execute(self, command: str, timeout: float, repeatable: bool = False) -> Result:
        """The command on a channel of its own over the node's connection. fabric connects
        (ssh_config, jump host); the command runs on paramiko's channel directly: fabric's runner
        polls its threads and took about 40 ms for `true`, which every check paid."""
        import paramiko

        started = time.monotonic()
        deadline = started + timeout
        notes: list[str] = []
        if not self._channels.acquire(timeout=timeout):
            raise CommandTimeout(self.node, command, timeout)
        try:
            while True:
                try:
                    conn, channel = self._channel(notes)
                except ChannelRefused as e:
                    raise ChannelRefused(self.node, command, e.reason, e.waited) from None
                try:
                    channel.exec_command(NO_INPUT + command)
                    out, err = _drained(channel, deadline)
                    status = channel.recv_exit_status()
                except TimeoutError:
                    raise CommandTimeout(self.node, command, timeout) from None
                except (OSError, EOFError, paramiko.SSHException) as e:
                    reason = _ssh_reason(e, self.connect_timeout)
                    transport = conn.client.get_transport()
                    if transport is None or not transport.is_active():
                        self._forget(conn)
                    if not repeatable or any("ran again" in n for n in notes):
                        raise ConnectionLost(self.node, command, reason, again=repeatable) from None
                    notes.append(f"the connection dropped while it ran ({reason}); ran again")
                    continue
                finally:
                    _close(channel)
                return Result(command, status, out, err, time.monotonic() - started, "; ".join(notes))
        finally:
            self._channels.release()

    def http(self, request: HttpRequest, timeout: float) -> HttpResponse:
        """On a connection the node's sshd opens for it (rackproof.nodes.tunnel): the request
        leaves the node. The suite's requests only ask (models, health, a short chat): one whose SSH
        connection died under it is sent once more on a fresh connection."""
        import paramiko

        from rackproof.nodes.tunnel import Through

        notes: list[str] = []
        for again in (False, True):
            conn = self._connection(notes)
            transport = conn.client.get_transport()
            try:
                response = exchange(request, timeout, Through(transport))
            except TimeoutError:  # the HTTP answer was late: a connection problem only if the connection died
                if transport.is_active():
                    raise
                reason = "the SSH connection closed under the request"
            except (OSError, EOFError, paramiko.SSHException) as e:   # no channel, or the connection died
                reason = _ssh_reason(e, self.connect_timeout)
            else:
                return replace(response, note="; ".join(notes))
            self._forget(conn)
            if again:
                raise ConnectionLost(self.node, request.describe(), reason, again=True)
            notes.append(f"the connection had dropped ({reason}); connected again")

    def close(self) -> None:
        with self._lock:
            conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()


def _close(channel) -> None:
    """Close a command's channel; on a connection that died under it there is nothing left to close
    (paramiko raises EOFError writing the CLOSE), and the command's own outcome stands."""
    import paramiko

    try:
        channel.close()
    except (OSError, EOFError, paramiko.SSHException):
        pass


def _drained(channel, deadline: float) -> tuple[str, str]:
    """(stdout, stderr) of a command's channel until it ends, both read as they come (a command
    that writes much to one while the other waits would otherwise fill the channel's window)."""
    out, err = bytearray(), bytearray()
    while True:
        # the end is looked at before the buffers: paramiko's thread queues a command's last output,
        # its EOF and its exit status between two looks, and output that came after an empty look
        # and before the end was seen was lost (CI: a node's `ip -j addr` cut at 387 bytes)
        ended, closed = channel.eof_received and channel.exit_status_ready(), channel.closed
        if channel.recv_ready():
            out += channel.recv(65536)
        elif channel.recv_stderr_ready():
            err += channel.recv_stderr(65536)
        elif ended:
            if channel.exit_status == -1 and _died(channel.transport):
                raise EOFError("the connection closed before the command's exit status came")
            return out.decode(errors="replace"), err.decode(errors="replace")
        elif closed:   # closed with no end of output: the connection died under the command
            raise EOFError("the connection closed before the command ended")
        else:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError
            select.select([channel], [], [], min(remaining, 0.5))


# how long a connection's thread is given to end once a channel closed with no exit status
_SETTLE_S = 1.0


def _died(transport) -> bool:
    """Whether the connection under a channel that closed with no exit status died. Its thread
    closes the channels first and marks itself inactive after, so it is given a moment to end;
    a command killed by a signal closes its channel with no status too (paramiko drops sshd's
    exit-signal), and its connection lives on."""
    transport.join(_SETTLE_S)
    return not transport.is_active()


def connect_failure(e: BaseException) -> str | None:
    """What a failed connect was, when it is what the rack's own life makes (worth another
    attempt): "refused", "reset", "timed out", "no route", "no banner", "closed before login"; None for what
    waiting cannot change (a refused login, a changed host key, a name that does not resolve)."""
    import paramiko

    if isinstance(e, (paramiko.AuthenticationException, paramiko.BadHostKeyException, socket.gaierror)):
        return None
    if isinstance(e, (socket.timeout, TimeoutError)):
        return "timed out"
    if isinstance(e, paramiko.ssh_exception.NoValidConnectionsError):   # every address of the name failed
        e = next(iter(e.errors.values()), e)
    number = getattr(e, "errno", None)
    if isinstance(e, ConnectionRefusedError) or number == errno.ECONNREFUSED:
        return "refused"
    if isinstance(e, ConnectionResetError) or number == errno.ECONNRESET:
        return "reset"
    if number in (errno.EHOSTUNREACH, errno.ENETUNREACH):
        return "no route"
    if number == errno.ETIMEDOUT:
        return "timed out"
    if isinstance(e, paramiko.SSHException) and ("banner" in str(e).lower() or "no existing session" in str(e).lower()):
        return "no banner"   # TCP connected, sshd said nothing: stopped, or too busy
    if isinstance(e, (EOFError, paramiko.SSHException)):   # sshd closed it before login
        return "closed before login"
    return "failed"


def _clock(at: float) -> str:
    """A time of day to the tenth of a second, as attempts a second apart are told apart."""
    return time.strftime("%H:%M:%S", time.localtime(at)) + f".{int(at * 10) % 10}"


def _ssh_reason(e: Exception, connect_timeout: float) -> str:
    import paramiko

    if isinstance(e, paramiko.AuthenticationException):
        return "authentication failed (is the controller's key in the node's authorized_keys?)"
    if isinstance(e, (socket.timeout, TimeoutError)):
        return f"no answer within the connect timeout of {connect_timeout:g} s (powered off, wrong address, or sshd hung)"
    if isinstance(e, paramiko.ssh_exception.NoValidConnectionsError) and e.errors:   # say the address's own error
        e = next(iter(e.errors.values()))
    if isinstance(e, OSError) and e.strerror:
        return e.strerror
    text = str(e) or type(e).__name__
    # paramiko reports a silent sshd as a banner error, or as "No existing session" once the
    # transport thread gave up waiting for the banner
    if "banner" in text.lower() or "no existing session" in text.lower():
        return f"TCP connected but sshd sent no banner within {connect_timeout:g} s (sshd hung?)"
    return text.splitlines()[0]


def quote(*words: str) -> str:
    """A shell command from words, each safely quoted."""
    return " ".join(shlex.quote(w) for w in words)
