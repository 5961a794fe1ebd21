"""A node's TCP connections, opened by its sshd for the controller (direct-tcpip channels): an
HTTP request made through one leaves the node, as the node would make it, and nothing listens on
the controller meanwhile (a forwarded local port is open to every user of a shared controller).

The node's sshd says at once when it cannot connect (its channel-open failure, "Connect
failed" for a refused port): that is the node's answer, as a refused connection made from the
node would be, never a dropped SSH connection and never a wait for the request's timeout.
"""

from __future__ import annotations

import socket
import time
from typing import Any, Iterable

import httpcore
import paramiko

# RFC 4254 5.1: the node's sshd answered that it did not open the connection. The other reasons
# (an unknown channel type, a shortage of resources) are the SSH connection's, not an answer
_OPEN_FAILURES = {1: "the node's sshd does not allow TCP forwarding (AllowTcpForwarding): {target} was not tried",
                  2: "the node could not connect to {target}"}


class ChannelStream(httpcore.NetworkStream):
    """A direct-tcpip channel, read and written as httpcore reads and writes a socket."""

    def __init__(self, channel):
        self.channel = channel

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        self.channel.settimeout(timeout)
        try:
            data = self.channel.recv(max_bytes)
        except socket.timeout:
            raise httpcore.ReadTimeout(f"nothing for {timeout:g} s") from None
        self._unless_the_connection_died(data)
        return data    # b"": the server closed the connection (an answer delimited by its end, or none)

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self.channel.settimeout(timeout)
        try:
            self.channel.sendall(buffer)
        except socket.timeout:
            raise httpcore.WriteTimeout(f"could not send for {timeout:g} s") from None
        except OSError as e:    # paramiko: "Socket is closed" once the channel is
            self._unless_the_connection_died(b"")
            raise httpcore.WriteError(str(e)) from None

    def _unless_the_connection_died(self, data: bytes) -> None:
        """A channel the SSH connection's death closed ends with no EOF from the node's sshd, which
        sends one when the server closes its end: an answer so cut short (a body delimited by the
        connection's end would look whole) is the SSH connection's fault, not the server's."""
        if not data and not self.channel.eof_received:
            raise EOFError("the SSH connection closed under the request")

    def close(self) -> None:
        self.channel.close()

    def start_tls(self, ssl_context, server_hostname: str | None = None, timeout: float | None = None):
        raise httpcore.ConnectError("the suite's requests to engines and the agent are plain HTTP")

    def get_extra_info(self, info: str) -> Any:
        return None


class Through(httpcore.NetworkBackend):
    """Connections made by the node at the other end of a live paramiko transport."""

    def __init__(self, transport):
        self.transport = transport

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Iterable | None = None) -> ChannelStream:
        started = time.monotonic()
        try:
            channel = self.transport.open_channel("direct-tcpip", (host, port), ("127.0.0.1", 0), timeout=timeout)
        except paramiko.ChannelException as e:
            if e.code not in _OPEN_FAILURES:
                raise
            # the node's own answer: httpcore's ConnectError, as a refused connection from here
            why = _OPEN_FAILURES[e.code]
            raise httpcore.ConnectError(f"{why.format(target=f'{host}:{port}')} (its sshd: {e.text or e.code})") from None
        except paramiko.SSHException:
            if timeout is None or time.monotonic() - started < timeout or not self.transport.is_active():
                raise   # the SSH connection's fault: the caller connects again
            # the node was still trying (a target that drops its packets): as a connect timing out from here
            raise httpcore.ConnectTimeout(f"the node did not connect to {host}:{port} within {timeout:g} s") from None
        return ChannelStream(channel)

    def connect_unix_socket(self, path: str, timeout: float | None = None, socket_options: Iterable | None = None):
        raise httpcore.ConnectError("the suite reaches engines and the agent over TCP")

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)
