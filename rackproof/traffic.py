"""Traffic between two nodes: a short-lived server on the receiver, a client on the sender.

The server is the only thing the suite starts on a node. It is bounded twice: `-1` makes
iperf3 exit after one test and `timeout` ends it even if no client ever comes; on top of
that the suite kills it when the measurement ends, whatever happened.
"""

from __future__ import annotations

import random
from contextlib import ExitStack, contextmanager
from typing import Iterator, Sequence

from . import bondhash
from .host import Host, ProbeFailed, section
from .probes.iperf import IperfResult, parse_iperf3
from .remote import quote

PORTS = range(5201, 5300)
SERVER_TRIES = 3
# iperf3 -O: the first second is sent but not counted. It holds TCP's slow start (and on the
# simulated rack the bond's first choice of lane, see sim/bond.py), which made short runs vary.
WARM_UP_SECONDS = 1


def _start_server(host: Host, argv: list[str], port: int, lifetime: float) -> int:
    """Start `argv` in the background on host, wait until it listens on `port`, return its pid."""
    command = (
        f"setsid timeout {lifetime:g} {quote(*argv)} >/dev/null 2>&1 </dev/null & pid=$!; "
        f"for i in $(seq 50); do ss -Hltn 'sport = :{port}' | grep -q . && {{ echo $pid; exit 0; }}; "
        f"kill -0 $pid 2>/dev/null || break; sleep 0.1; done; kill $pid 2>/dev/null; exit 1")
    result = host.run(command, timeout=15)
    if not result.ok:
        raise ProbeFailed(host.name, result, f"could not start a server listening on port {port}")
    return int(result.stdout.split()[-1])


@contextmanager
def server(host: Host, argv_for_port, lifetime: float, tries: int = SERVER_TRIES,
           ports: Sequence[int] | None = None) -> Iterator[int]:
    """A server started from argv_for_port(port) on a free port (the first of `ports` that is,
    else of `tries` random ones); yields the port, always stopped."""
    last: ProbeFailed | None = None
    for port in ports or random.sample(PORTS, tries):
        try:
            pid = _start_server(host, argv_for_port(port), port, lifetime)
        except ProbeFailed as e:  # port taken by someone else: try another
            last = e
            continue
        try:
            yield port
        finally:
            host.run(f"kill {pid} 2>/dev/null; true", timeout=10)
        return
    raise last


def _iperf3_server(address: str):
    return lambda port: ["iperf3", "-s", "-1", "-B", address, "-p", str(port)]


def iperf3(sender: Host, receiver: Host, address: str, streams: int = 1, seconds: int = 5, *,
           attempt: int = 0, client_ports: Sequence[int] | None = None) -> IperfResult:
    """TCP from sender to receiver's `address`; the figure is what the receiver got.

    Several streams from a bonded sender are as many one-stream clients at once, one server
    each, from client ports on which the sender's layer3+4 hash spreads them over its bond's
    lanes (bondhash.spread_ports; `attempt` k takes the k-th such set, `client_ports` imposes
    the ports): with -P N, iperf3's streams come from ports that connect() or --cport picks, and
    two of four then share a lane about nine times in ten (with --cport always, see bondhash).
    The result holds the sums and every stream."""
    if streams > 1 and sender.spec.bond is not None:
        return _spread(sender, receiver, address, streams, seconds, attempt, client_ports)
    lifetime = seconds + WARM_UP_SECONDS + 30
    with server(receiver, _iperf3_server(address), lifetime=lifetime) as port:
        return sender.read(
            quote("iperf3", "-c", address, "-p", str(port), "-t", str(seconds), "-O", str(WARM_UP_SECONDS),
                  "-P", str(streams), "-J"),
            parse_iperf3, ok_exit=(0, 1),  # iperf3 -J exits 1 on errors and says why in its JSON
            timeout=lifetime)


def one_stream_attempts(sender: Host, receiver: Host, address: str, floor_bps: float, seconds: int
                        ) -> list[IperfResult]:
    """One TCP stream, measured once more when it came in under `floor_bps`: a moment's load on
    a node or on the path is not a slow lane, and a slow lane fails both times. Every attempt,
    the best last."""
    attempts = [iperf3(sender, receiver, address, 1, seconds)]
    if attempts[0].received_bps < floor_bps:
        attempts.append(iperf3(sender, receiver, address, 1, seconds))
    return sorted(attempts, key=lambda r: r.received_bps)


def _spread(sender: Host, receiver: Host, address: str, streams: int, seconds: int, attempt: int,
            client_ports: Sequence[int] | None) -> IperfResult:
    lifetime = seconds + WARM_UP_SECONDS + 30
    with ExitStack() as stack:
        # server ports in a fixed order (stream i: PORTS[i], PORTS[i + streams], ...) and client
        # ports computed from them: the same run asks the same commands, so a recording replays
        dports = [stack.enter_context(server(receiver, _iperf3_server(address), lifetime=lifetime,
                                             ports=PORTS[i::streams][:SERVER_TRIES]))
                  for i in range(streams)]
        cports = list(client_ports or bondhash.spread_ports(sender.spec.ip, address, dports,
                                                            len(sender.spec.bond.lanes), attempt))
        labels = [f"iperf3:{cport}->{address}:{dport}" for cport, dport in zip(cports, dports)]
        clients = [quote("iperf3", "-c", address, "-p", str(dport), "--cport", str(cport), "-t", str(seconds),
                         "-O", str(WARM_UP_SECONDS), "-J")
                   for cport, dport in zip(cports, dports)]
        out = sender.read(
            "t=$(mktemp -d); " + " ".join(f'{client} >"$t/{k}" 2>&1 &' for k, client in enumerate(clients))
            + " wait; " + "; ".join(f'{section(label)}; cat "$t/{k}"' for k, label in enumerate(labels))
            + '; rm -rf "$t"', str, timeout=lifetime)
    return _together(list(sender.parse_sections(out, labels, parse_iperf3).values()))


def _together(results: list[IperfResult]) -> IperfResult:
    """One result for one-stream clients that ran at once: the sums, and every stream."""
    retransmits = [r.retransmits for r in results]
    first = results[0]
    return IperfResult(
        received_bps=sum(r.received_bps for r in results), sent_bps=sum(r.sent_bps for r in results),
        retransmits=None if None in retransmits else sum(retransmits),
        num_streams=sum(r.num_streams for r in results), duration=max(r.duration for r in results),
        local_host=first.local_host, remote_host=first.remote_host, remote_port=first.remote_port,
        reverse=False, streams=tuple(s for r in results for s in r.streams))


def ib_write_bw(sender: Host, receiver: Host, links, seconds: int = 5, gid_index: int = 3) -> list:
    """RDMA write bandwidth over several RoCE links at once (one server port per link), as
    NVIDIA measures a Spark's QSFP port: one run per logical interface, added up.
    `links`: (sender's, receiver's) CX7 interface per link; results in that order. `gid_index`:
    NVIDIA's playbook uses 3, the RoCE v2 GID of the interface's IPv4 address on a DGX Spark."""
    from contextlib import ExitStack

    from .probes import ParseError
    from .probes.perftest import parse_ib_write_bw

    def perftest(device: str) -> list[str]:
        return ["ib_write_bw", "-d", device, "-x", str(gid_index), "-F", "--report_gbits", "-D", str(seconds)]

    def parse(text: str):
        try:
            return parse_ib_write_bw(text)
        except ParseError as e:
            if e.reason != "no result row":
                raise
            # perftest exits 0 when its queue pairs never connect over a GID that does not route
            raise ParseError(e.tool, f"the run printed its header and no result row, so no data moved. Usual cause: "
                             f"GID index {gid_index} (-x {gid_index}) is not the RoCE v2 GID of the interface's IPv4 "
                             "address on one of the nodes (show_gids lists each device's GIDs)", text) from None

    with ExitStack() as stack:
        ports = [stack.enter_context(server(receiver, lambda port, d=dst.rdma_device: perftest(d) + ["-p", str(port)],
                                            lifetime=seconds + 30))
                 for _, dst in links]
        commands = [quote(*perftest(src.rdma_device), "-p", str(port), dst.address.split("/")[0])
                    for (src, dst), port in zip(links, ports)]
        clients = " ".join(f"{command} >\"$t/{i}\" 2>&1 &" for i, command in enumerate(commands))
        shows = "; ".join(f"{section(str(i))}; cat \"$t/{i}\"" for i in range(len(links)))
        out = sender.read(f"t=$(mktemp -d); {clients} wait; {shows}; rm -rf \"$t\"", str, timeout=seconds + 30)

    def describe(label: str) -> str:
        src, dst = links[int(label)]
        return f"{commands[int(label)]} (from {src.name} to {receiver.name} {dst.name})"

    return list(sender.parse_sections(out, [str(i) for i in range(len(links))], parse, describe).values())
