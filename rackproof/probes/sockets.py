"""`ss -Hltnp` (listening TCP sockets) -> who listens where; `ss -Htan` -> the ports sockets hold.

The guide wants an engine server on the node's cluster address: not 127.0.0.1 (the other
nodes cannot reach it) and not every address (the house network could).
"""

import ipaddress
import re
from dataclasses import dataclass

from . import ParseError
from ._text import int_value
from rackproof.probes.probe import Probe

TOOL = "ss"

_STATES = {"LISTEN", "UNCONN"}  # TCP listening, UDP bound
# 'users:(("llama-server",pid=7649,fd=7))': the first process holding the socket
_PROCESS = re.compile(r'users:\(\("(?P<name>[^"]*)",pid=(?P<pid>[0-9]+)')


@dataclass(frozen=True)
class Listener:
    proto: str                   # "tcp", "udp"
    local_address: str           # "10.10.0.12", "0.0.0.0", "::", "*", "::ffff:127.0.0.1" (no brackets)
    port: int
    process: str | None = None   # needs -p, and root to see other users' processes
    pid: int | None = None
    interface: str | None = None  # "0.0.0.0%mgbe0_0": bound to one device (SO_BINDTODEVICE)


def parse_ss_listen(text: str) -> tuple[Listener, ...]:
    """Rows of `ss -Hltnp`, `ss -Hltn` or `ss -Htulnp` (Netid column first); a header line is
    skipped. Without a Netid column the rows are TCP: that is what `ss -lt` lists."""
    listeners = []
    for line in text.splitlines():
        columns = line.split()
        if not columns or columns[0] in ("State", "Netid"):
            continue
        proto = "tcp"
        if columns[0] not in _STATES:
            proto, columns = columns[0], columns[1:]
        # State Recv-Q Send-Q Local:Port Peer:Port [Process]
        if len(columns) < 5 or columns[0] not in _STATES:
            raise ParseError(TOOL, f"not an ss socket row: {line!r}", text)
        address, interface, port = _split_endpoint(columns[3], text)
        process = _PROCESS.search(line)
        listeners.append(Listener(
            proto=proto, local_address=address, port=port,
            process=process["name"] if process else None,
            pid=int_value(TOOL, process["pid"], "pid", text) if process else None,
            interface=interface,
        ))
    return tuple(listeners)


def _split_endpoint(endpoint: str, text: str) -> tuple[str, str | None, int]:
    """'[::ffff:127.0.0.1]:8083' -> ('::ffff:127.0.0.1', None, 8083); '0.0.0.0%eth0:67' -> (.., 'eth0', 67)."""
    host, _, port = endpoint.rpartition(":")
    if not host or not re.fullmatch(r"[0-9]{1,5}", port) or int(port) > 65535:
        raise ParseError(TOOL, f"not address:port: {endpoint!r}", text)
    host, _, interface = host.partition("%")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host, interface or None, int(port)


def scope(address: str) -> str:
    """'any' (all addresses), 'loopback' (this node only) or 'specific' (one address)."""
    address = address.strip("[]").partition("%")[0]
    if address == "*":
        return "any"
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return "specific"  # a name, as ss prints without -n
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped  # "::ffff:127.0.0.1" is 127.0.0.1
    if ip.is_unspecified:
        return "any"
    return "loopback" if ip.is_loopback else "specific"


def parse_ss_ports(text: str) -> frozenset[int]:
    """The local ports of the sockets `ss -Htan` lists (every state: a connection that stalled,
    one in TIME_WAIT)."""
    ports = set()
    for line in text.splitlines():
        columns = line.split()
        if not columns:
            continue
        if len(columns) < 5:
            raise ParseError(TOOL, f"not an ss socket row: {line!r}", text)
        ports.add(_split_endpoint(columns[3], text)[2])
    return frozenset(ports)


LISTENING = Probe("ss", "every TCP socket listening, and on which address", "ss -Hltn", parse_ss_listen,
                  seen_on=("Ubuntu 20.04", "Ubuntu 22.04", "Debian 12"),
                  unseen="no ss of a Jetson AGX Thor or a DGX Spark was found")
# every listener with the process holding it (root sees every user's: the suite's sudoers rule)
LISTENING_PROCESSES = Probe("sudo ss", "every TCP and UDP socket listening, and the process holding it",
                            "sudo -n ss -Hltnup", parse_ss_listen,
                            seen_on=("Ubuntu 24.04", "Ubuntu 20.04", "Debian 12"),
                            unseen="no ss of a Jetson AGX Thor or a DGX Spark was found")
# The range the suite chooses client ports from (rackproof.probes.bondhash), above Linux's default
# ephemeral range (ip_local_port_range 32768-60999): connect() never hands these ports out, so a
# chosen one is free unless something listens on it, which this probe reads.
CLIENT_PORTS = range(61000, 65536)
HELD_CLIENT_PORTS = Probe("ss client ports", "the client ports that TCP sockets hold, in any state",
                          f"ss -Htan 'sport >= :{CLIENT_PORTS.start}'", parse_ss_ports,
                          seen_on=("Ubuntu",),
                          unseen="no ss of a Jetson AGX Thor or a DGX Spark was found")
