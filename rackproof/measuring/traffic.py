"""Traffic between two nodes: a short-lived server on the receiver, a client on the sender.

Every measurement between nodes is declared once in its tool's module (probes._between.Between:
its server, its client, its tool); `between` runs any of them. The server is the only thing the
suite starts on a node. It is bounded twice: `timeout` ends it even if no client ever comes
(and iperf3's `-1` after one test); on top of that the suite kills it when the measurement ends,
whatever happened. A round's iperf3 servers may start ahead, while the round before measures
(`ready`, rackproof.measuring.plan.in_rounds): the measurement takes one instead of starting its own.
"""

from __future__ import annotations

import random
import re
import signal
import time
from concurrent.futures import ThreadPoolExecutor, wait
from contextlib import ExitStack, contextmanager, suppress
from typing import Callable, Iterable, Iterator, Sequence

from rackproof.probes import bondhash
from rackproof.judging.failure import NotVerified
from rackproof.nodes.host import Host, ProbeFailed
from rackproof.nodes.ownservers import Ready
from rackproof.nodes.remote import Evidence, Result
from rackproof.probes.safetext import one_line
from rackproof.probes.probe import Command, Probe
from rackproof.probes import ParseError
from rackproof.probes._between import Between
from rackproof.probes.iperf import IPERF3, IPERF3_FROM_PORT, WARM_UP_SECONDS, IperfResult
from rackproof.probes.sockets import HELD_CLIENT_PORTS, parse_ss_listen

PORTS = range(5201, 5300)
SERVER_TRIES = 3
# The server in the background, bounded by `timeout`; once it listens on the port (asked every
# 20 ms, for 5 s: a round waits for its slowest server, so a coarser poll was time lost per round),
# the listening socket's row (ss -p: the server's own pid) and then the pid to stop (timeout's)
# with its child's (the server: ss -p lists a socket made between its look at /proc and its
# listing without a process); or exit 1 when the port is taken, or the server's exit status when it
# died or never listened (try another port), with what it printed on stderr, kept in a file of
# mktemp's until then: a server that does not start says why (a broken install: the loader's
# words). A server counts as up when something listens on its port, so a port anything listens
# on already is refused first: a server started there would fail to bind and look up.
START_SERVER = Probe(
    "start a server", "starts a measurement's server in the background, bounded in time, and waits until it listens "
    "(what it printed on stderr kept when it does not)",
    'ss -Hltn {filter} | grep -q . && exit 1; e=$(mktemp) || exit 1; '
    'setsid timeout {lifetime} {server} >/dev/null 2>"$e" </dev/null & pid=$!; '
    'for i in $(seq 250); do ss -Hltnp {filter} | grep . && {{ rm -f "$e"; echo $pid $(pgrep -P $pid); exit 0; }}; '
    'kill -0 $pid 2>/dev/null || break; sleep 0.02; done; kill $pid 2>/dev/null; wait $pid; s=$?; '
    'head -c 4000 "$e" >&2; rm -f "$e"; exit $((s > 1 ? s : 1))', timeout=15, repeatable=False,
    unseen="its own answer (the pids it echoes; ss's rows, as `server listener` reads them): no tool's format")
STOP_SERVER = Probe("stop a server", "stops that server when the measurement ends, whatever happened",
                    "kill {pid} 2>/dev/null; true", timeout=10, repeatable=False,
                    unseen="prints nothing: nothing is read")
# a run interrupted while its server started does not know the pid: the server is found by its
# whole command line (`timeout` passes the signal on to the server)
STOP_STARTING = Probe("stop a starting server", "stops a server whose start was interrupted, by its command line",
                      "pkill -x -f -- {pattern}; true", timeout=10, repeatable=False,
                      unseen="prints nothing: nothing is read")


def _start_server(host: Host, command: Command, port: int, lifetime: float) -> tuple[int, int]:
    """Start `command` in the background on host, wait until it listens on `port`: (the pid to
    stop it by, the pid of the process that listens)."""
    result = host.run(START_SERVER, lifetime=f"{lifetime:g}", server=command, filter=f"sport = :{port}")
    *rows, last = result.stdout.splitlines() or [""]
    pids = last.split()
    if not result.ok or not pids or not all(p.isdigit() for p in pids):
        said = f" (exit status {result.exit_status})" if result.exit_status > 1 else ""
        raise ProbeFailed(host.name, result, f"could not start a server listening on port {port}{said}")
    try:
        listed = parse_ss_listen("\n".join(rows))
    except ParseError as e:
        raise ProbeFailed(host.name, result, f"started a server on port {port}, but {e}") from None
    # every row is of the port (ss's filter); ss's own pid, else timeout's child: never timeout's
    children = [int(p) for p in pids[1:]]
    named = [row.pid for row in listed if row.pid]
    # a server started on the port at the same moment won it (when the start names its child at all)
    if named and children and not set(named) & set(children):
        host.run(STOP_SERVER, pid=pids[0])
        raise ProbeFailed(host.name, result, f"port {port} was taken by another process (pid {named[0]}) "
                                             "as the server started")
    listening = named + children
    if not listening:
        raise ProbeFailed(host.name, result, f"a server listens on port {port}, but which process is not known")
    return int(pids[0]), listening[0]


@contextmanager
def server(host: Host, command_for_port, lifetime: float, tries: int = SERVER_TRIES,
           ports: Sequence[int] | None = None) -> Iterator[int]:
    """A server started from command_for_port(port) on a free port (the first of `ports` that
    is, else of `tries` random ones), or the same one started ahead (`ready`); yields the port,
    always stopped."""
    ready = host.servers.take(host.name, _what(command_for_port, ports))
    if ready is not None and time.monotonic() - ready.since <= lifetime - LEFT_AT_LEAST_S:
        for ev in ready.evidence:     # its start is this measurement's evidence
            host.remote.log.add(ev)
        port, pid, listener = ready.port, ready.pid, ready.listener
    else:
        if ready is not None:   # it waited too long (a round's nodes held by another run): a new one
            _stop(host, ready.port, ready.pid, ready.listener)
        port, pid, listener = _started(host, command_for_port, lifetime, tries, ports)
    try:
        yield port
    finally:
        _stop(host, port, pid, listener)


def _started(host: Host, command_for_port, lifetime: float, tries: int,
             ports: Sequence[int] | None) -> tuple[int, int, int]:
    """(port, pid to stop it by, pid that listens) of a server started on the first free port
    of `ports` (else of `tries` random ones), noted as the run's."""
    last: ProbeFailed | None = None
    # never a port of the run's own servers on the node, nor one another of its starts is trying
    # (OwnServers.reserve): iperf3 -s closes its listening socket once its test's streams are in,
    # so a port mid-test looks free, and a server started there (the next round's, ahead) took the
    # test's late stream and ended, refusing its own client; two starts at once on one port both
    # see it listening
    candidates = list(ports) if ports else random.sample(PORTS, len(PORTS))
    for _ in range(len(candidates) if ports else tries):
        port = host.servers.reserve(host.name, candidates)
        if port is None and ports:   # every one of `ports` is the run's own now: any other
            candidates = random.sample(PORTS, len(PORTS))
            port = host.servers.reserve(host.name, candidates)
        if port is None:
            break
        candidates.remove(port)
        command = command_for_port(port)
        try:
            pid, listener = _start_server(host, command, port, lifetime)
            host.servers.started(host.name, port, listener)
            return port, pid, listener
        except ProbeFailed as e:  # port taken by someone else: try another
            last = e
        except BaseException:     # interrupted (Ctrl-C, SIGTERM) while it started
            with suppress(Exception):
                host.run(STOP_STARTING, pattern=_exactly(f"timeout {lifetime:g} {command}"))
            raise
        finally:
            host.servers.release(host.name, port)
    raise last or ProbeFailed(host.name, Result("", 1, "", "", 0.0), "no port was free of the run's own servers")


def _stop(host: Host, port: int, pid: int, listener: int) -> None:
    host.run(STOP_SERVER, pid=pid)
    host.servers.stopped(host.name, port, listener)


# a server started ahead serves a measurement only while this much of its lifetime is left: the
# measurement's length and time to spare (a lifetime gives 30 s more than the length: `_lifetime`)
LEFT_AT_LEAST_S = 20


def _what(command_for_port, ports: Sequence[int] | None) -> tuple[str, tuple[int, ...] | None]:
    """What a server is, for one started ahead to be taken by the measurement that asks for the
    same: its command (on port 0, standing for any) and the ports it may take."""
    return str(command_for_port(0)), tuple(ports) if ports else None


def ready(host: Host, command_for_port, lifetime: float, ports: Sequence[int] | None = None) -> None:
    """A server started now and kept for a measurement to come that asks `server` for the same
    (its evidence goes to that measurement's); one that does not start is not kept (that
    measurement starts its own, and fails with its own evidence)."""
    with host.remote.log.captured() as evidence:
        try:
            port, pid, listener = _started(host, command_for_port, lifetime, SERVER_TRIES, ports)
        except ProbeFailed:
            return
    host.servers.readied(host.name, _what(command_for_port, ports),
                         Ready(port, pid, listener, time.monotonic(), tuple(evidence)))


@contextmanager
def untaken_stopped(hosts: Iterable[Host]) -> Iterator[None]:
    """On leaving, whatever happened: every server started ahead on these hosts that no
    measurement took is stopped (one whose stop gets no answer stays noted as the run's)."""
    by_name = {host.name: host for host in hosts}
    try:
        yield
    finally:
        for servers in {id(host.servers): host.servers for host in by_name.values()}.values():
            for name, ready in servers.untaken():
                with suppress(Exception):
                    _stop(by_name[name], ready.port, ready.pid, ready.listener)


def _exactly(text: str) -> str:
    """`text` as an extended regular expression matching only itself."""
    return re.sub(r"([][\\.^$*+?(){}|])", r"\\\1", text)


def between(measurement: Between, sender: Host, receiver: Host, runs: Sequence[tuple[dict, dict, str]],
            lifetime: float) -> list:
    """measurement from sender to receiver, once per run (its server's values, its client's, and
    where it goes, in words): a server on the receiver for each run, on a free port, stopped
    whatever happens; the clients on the sender, at once when the measurement goes together,
    else one after the other, each with its own server. What each client read, in runs' order.
    Each probe takes the values it names (a latency run takes no duration)."""
    def made(probe, values: dict, **more) -> dict:
        return {k: v for k, v in {**values, **more}.items() if k in probe.fields() | set(probe.parser_takes)}

    def serving(stack: ExitStack, values: dict) -> int:
        return stack.enter_context(server(receiver, lambda port: measurement.server.command(
            **made(measurement.server, values, port=port)), lifetime=lifetime))

    if len(runs) == 1 or not measurement.together:
        found = []
        for server_values, client_values, _ in runs:
            with ExitStack() as stack:
                port = serving(stack, server_values)
                found.append(sender.read(measurement.client, timeout=lifetime,
                                         **made(measurement.client, client_values, port=port)))
        return found
    with ExitStack() as stack:
        values = {str(i): made(measurement.client, client_values, port=serving(stack, server_values))
                  for i, (server_values, client_values, _) in enumerate(runs)}
        clients = {label: measurement.client.command(**made(measurement.client, v)) for label, v in values.items()}
        return list(sender.read_at_once(
            clients, lambda text, label: measurement.client.parse(text, values[label]), timeout=lifetime,
            describe=lambda label: f"{clients[label]} ({runs[int(label)][2]})").values())


def _iperf3_server(address: str):
    return lambda port: IPERF3.server.command(address=address, port=port)


def iperf3(sender: Host, receiver: Host, address: str, streams: int = 1, seconds: int = 5, *,
           attempt: int = 0, client_ports: Sequence[int] | None = None) -> IperfResult:
    """TCP from sender to receiver's `address`; the figure is what the receiver got.

    Several streams from a bonded sender are as many one-stream clients at once, one server
    each, from client ports on which the sender's layer3+4 hash spreads them over its bond's
    lanes (bondhash.spread_ports; `attempt` k takes the k-th such set, `client_ports` imposes
    the ports): with -P N, iperf3's streams come from ports that connect() or --cport picks, and
    two of four then share a lane about nine times in ten (with --cport always, see bondhash).
    The result holds the sums and every stream."""
    def measured() -> IperfResult:
        if _over_bond(sender, streams):
            return _spread(sender, receiver, address, streams, seconds, attempt, client_ports)
        return between(IPERF3, sender, receiver, [({"address": address},
                                                  {"address": address, "seconds": seconds, "streams": streams},
                                                  f"to {receiver.name} {address}")], _lifetime(seconds))[0]
    return _unless_killed(measured, sender, receiver)


def ready_iperf3(sender: Host, receiver: Host, address: str, streams: int = 1, seconds: int = 5) -> None:
    """The servers iperf3(sender, receiver, address, streams, seconds) will ask for, started now,
    side by side (`ready`): a round's, while the round before it measures."""
    ports = [PORTS[i::streams][:SERVER_TRIES] for i in range(streams)] if _over_bond(sender, streams) else [None]
    with ThreadPoolExecutor(max_workers=len(ports)) as pool:
        list(pool.map(lambda some: ready(receiver, _iperf3_server(address), _lifetime(seconds), some), ports))


def _over_bond(sender: Host, streams: int) -> bool:
    """Whether several streams go as one-stream clients spread over the sender's bond (`_spread`)."""
    return streams > 1 and sender.spec.bond is not None


def _unless_killed(measured: Callable[[], IperfResult], sender: Host, receiver: Host) -> IperfResult:
    """measured(), once more when one of its iperf3 processes died from outside (the OOM killer,
    another operator's kill): that is the node's life, never the path's figure. Killed twice,
    the check is not verified, naming both deaths; every death is named in the evidence."""
    deaths = []
    for _ in range(2):
        try:
            return measured()
        except ProbeFailed as e:
            death, failed = _death(e, receiver.name), e
            if death is None:
                raise
        host = sender if failed.node == sender.name else receiver
        words = host.run(KILLED_WORDS).stdout.strip()
        deaths.append(death + (f" (the node's kernel log: {one_line(words)[:400]})" if words else ""))
        host.remote.log.add(Evidence(host.name, failed.result.command, failed.result.exit_status, failed.result.stdout,
                                     failed.result.stderr, failed.result.duration, time.time(),
                                     note=f"{deaths[-1]}: " + ("measured again" if len(deaths) == 1 else
                                                               "not measured a third time")))
    raise NotVerified(f"{sender.name} -> {receiver.name}", "iperf3 throughput",
                      f"the measurement died from outside twice: {'; then '.join(deaths)}",
                      "measure again when nothing else kills processes on the nodes (the OOM killer: see the "
                      "node's memory; another operator's kill)")


def _death(e: ProbeFailed, receiver: str) -> str | None:
    """How an iperf3 of the measurement died from outside, in words, from what its client left;
    None when the failure says something else (refused, no route, an unreadable answer)."""
    if "iperf3 -c" not in e.result.command:     # a server that did not start says so itself
        return None
    status = e.result.exit_status
    if status > 128 and status - 128 in _SIGNALS:
        return f"{e.node}'s iperf3 was killed by signal {status - 128} ({_SIGNALS[status - 128]}) mid-measurement"
    if status == -1:
        return f"{e.node}'s iperf3 was killed by a signal mid-measurement (its connection carried no exit status)"
    said = e.result.stdout + e.reason
    if not e.result.stdout.strip():    # an iperf3 -J client always prints its JSON, errors too, unless it dies
        return f"{e.node}'s iperf3 ended without a word mid-measurement (killed, or it crashed)"
    # the server's end closed (control socket) or its process died and the kernel reset the
    # stream (as a server SIGKILLed when the test began leaves it: samples/iperf3_J_local_3.12_server_killed_reset.json)
    if ("control socket has closed unexpectedly" in said or "the server has terminated" in said
            or "stream socket: Connection reset by peer" in said):
        return f"{receiver}'s iperf3 server ended mid-measurement (the client: \"{one_line(e.reason)[-200:]}\")"
    return None


_SIGNALS = {s.value: s.name for s in signal.Signals}
# the kernel's own words on a process it killed (the OOM killer), where the login may read them
KILLED_WORDS = Probe("kernel's words on killed processes", "the kernel log's last lines on processes it killed "
                     "(read when a measurement died; nothing where the login may not read the log)",
                     "dmesg 2>/dev/null | grep -E 'Killed process|Out of memory|oom-kill' | tail -n 3; true",
                     timeout=10, unseen="its lines are quoted as the kernel wrote them, never parsed: no real OOM "
                                        "capture of a target platform was kept")


def attempts(sender: Host, receiver: Host, address: str, floor_bps: float, seconds: int, streams: int = 1,
             first_ports: Sequence[int] | None = None) -> tuple[IperfResult, ...]:
    """Measured, and once more when the figure came in under `floor_bps`: a moment's load on a
    node or on the path, or two -P streams an unlucky hash put on one bond lane, is not a slow
    link, and a slow one fails both times (the second -P run takes other client ports).
    `first_ports` imposes the first run's client ports. Every run, in the order run."""
    first = iperf3(sender, receiver, address, streams, seconds, client_ports=first_ports)
    if first.received_bps >= floor_bps:
        return (first,)
    return first, iperf3(sender, receiver, address, streams, seconds, attempt=1)


def best(runs: Sequence[IperfResult]) -> IperfResult:
    return max(runs, key=lambda result: result.received_bps)


# iperf3 at or above this share of one core was limited by its node's CPU, not by the path: a
# Jetson with receive packet steering off takes every interrupt on one core; a controller running
# three simulated racks on two cores once failed a healthy bond at 0.894 of 0.9 Gbit/s that way
CPU_BOUND_PERCENT = 90.0
CPU_BOUND_FIX = ("measure again with the node idle; on a Jetson, spread receive processing over the cores (receive "
                 "packet steering: /sys/class/net/IFACE/queues/rx-*/rps_cpus) so that one core does not take every "
                 "interrupt")


def cpu_bound(result: IperfResult, sender: str, receiver: str) -> str | None:
    """Which end's iperf3 was CPU-bound in the run, in words; None when neither was."""
    for node, used in ((sender, result.sender_cpu), (receiver, result.receiver_cpu)):
        if used is not None and used >= CPU_BOUND_PERCENT:
            return f"{node}'s iperf3 was CPU-bound ({used:.0f}%)"
    return None


def unless_cpu_bound(runs: Sequence[IperfResult], sender: Host, receiver: Host, where: str, what: str) -> None:
    """For a figure under its floor: NotVerified when the run measured again (the last of `runs`)
    was still CPU-bound at either end, since the figure then says what the node's CPU could do,
    not the path; a run measured once is judged as it is."""
    bound = cpu_bound(runs[-1], sender.name, receiver.name) if len(runs) > 1 else None
    if bound is not None:
        figures = ", ".join(f"{run.received_bps / 1e9:.3g}" for run in runs)
        raise NotVerified(where, what, f"{bound}: measured {len(runs)} times under the floor ({figures} Gbit/s), "
                                       "CPU-bound the last time", CPU_BOUND_FIX)


def _lifetime(seconds: int) -> float:
    """How long a measurement's server may live: the run, its warm-up, and time to start."""
    return seconds + WARM_UP_SECONDS + 30


def _spread(sender: Host, receiver: Host, address: str, streams: int, seconds: int, attempt: int,
            client_ports: Sequence[int] | None) -> IperfResult:
    lifetime = _lifetime(seconds)
    # the servers (ports in a fixed order: stream i PORTS[i], PORTS[i + streams], ...) start side
    # by side, beside the read of the sender's held client ports, and stop side by side; every
    # one that started is stopped on leaving, whatever happened
    stacks = [ExitStack() for _ in range(streams)]
    carried = receiver.remote.log.carried
    with ThreadPoolExecutor(max_workers=streams + 1) as pool:
        starts = [pool.submit(carried(lambda i=i: stacks[i].enter_context(server(
            receiver, _iperf3_server(address), lifetime=lifetime, ports=PORTS[i::streams][:SERVER_TRIES]))))
            for i in range(streams)]
        try:
            # never a client port a connection still holds: one that stalled (a path that drops
            # full-size frames leaves it retransmitting for minutes) would fail the next client's bind
            held = frozenset() if client_ports else sender.read(HELD_CLIENT_PORTS)
            dports = [start.result() for start in starts]
            cports = list(client_ports or bondhash.spread_ports(sender.spec.ip, address, dports,
                                                                len(sender.spec.bond.lanes), attempt, held))
            # stream i's section is named by its first port, PORTS[i], whichever it got (the next
            # round's servers, started ahead, take others): the same names in every round
            clients = {f"iperf3->{address}:{PORTS[i]}":
                       IPERF3_FROM_PORT.command(address=address, port=dport, client_port=cport, seconds=seconds)
                       for i, (cport, dport) in enumerate(zip(cports, dports))}
            results = sender.read_at_once(clients, lambda text, _: IPERF3_FROM_PORT.parser(text), timeout=lifetime)
        finally:
            wait(starts)
            list(pool.map(carried(ExitStack.close), stacks))
    return _together(list(results.values()))


def _together(results: list[IperfResult]) -> IperfResult:
    """One result for one-stream clients that ran at once: the sums, and every stream."""
    retransmits = [r.retransmits for r in results]
    first = results[0]
    return IperfResult(
        received_bps=sum(r.received_bps for r in results), sent_bps=sum(r.sent_bps for r in results),
        retransmits=None if None in retransmits else sum(retransmits),
        num_streams=sum(r.num_streams for r in results), duration=max(r.duration for r in results),
        local_host=first.local_host, remote_host=first.remote_host, remote_port=first.remote_port,
        reverse=False, streams=tuple(s for r in results for s in r.streams),
        sender_cpu=_most(r.sender_cpu for r in results), receiver_cpu=_most(r.receiver_cpu for r in results))


def _most(values) -> float | None:
    """The busiest of several iperf3 processes at one end (None when one is not known)."""
    found = list(values)
    return None if None in found else max(found)


def over_links(measurement: Between, sender: Host, receiver: Host, links, seconds: int = 5,
               gid_index: int = 3) -> list:
    """An RDMA measurement (perftest's) over each RoCE link from sender to receiver, one server
    port per link. `links`: (sender's, receiver's) CX7 interface per link, each a PCIe function of
    a cabled port; results in that order. `gid_index`: NVIDIA's playbook uses 3, the RoCE v2 GID of
    the interface's IPv4 address on a DGX Spark."""
    shared = {"gid_index": gid_index, "seconds": seconds}
    return between(measurement, sender, receiver,
                   [({"device": dst.rdma_device, **shared},
                     {"device": src.rdma_device, "address": dst.address.split("/")[0], **shared},
                     f"from {src.name} to {receiver.name} {dst.name}") for src, dst in links],
                   lifetime=seconds + 30)
