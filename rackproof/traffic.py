"""Traffic between two nodes: a short-lived server on the receiver, a client on the sender.

The server is the only thing the suite starts on a node. It is bounded twice: `-1` makes
iperf3 exit after one test and `timeout` ends it even if no client ever comes; on top of
that the suite kills it when the measurement ends, whatever happened.
"""

from __future__ import annotations

import random
from contextlib import contextmanager
from typing import Iterator

from .host import Host, ProbeFailed, section
from .probes.iperf import IperfResult, parse_iperf3
from .remote import quote

PORTS = range(5201, 5300)


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
def server(host: Host, argv_for_port, lifetime: float, tries: int = 3) -> Iterator[int]:
    """A server started from argv_for_port(port) on a free port; yields the port, always stopped."""
    last: ProbeFailed | None = None
    for port in random.sample(PORTS, tries):
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


def iperf3(sender: Host, receiver: Host, address: str, streams: int = 1, seconds: int = 5) -> IperfResult:
    """TCP from sender to receiver's `address`; the figure is what the receiver got."""
    with server(receiver, lambda port: ["iperf3", "-s", "-1", "-B", address, "-p", str(port)],
                lifetime=seconds + 30) as port:
        return sender.read(
            quote("iperf3", "-c", address, "-p", str(port), "-t", str(seconds), "-P", str(streams), "-J"),
            parse_iperf3, ok_exit=(0, 1),  # iperf3 -J exits 1 on errors and says why in its JSON
            timeout=seconds + 30)


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
