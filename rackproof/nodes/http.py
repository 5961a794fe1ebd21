"""HTTP requests made from a node (httpcore): to an engine or the agent, as that node sees them.

Over SSH the node's sshd opens the connection for the controller (rackproof.nodes.tunnel), so
nothing needs a route from the controller to the cluster network. Requests and answers are evidence like
commands, and can be recorded and replayed: the access key itself is never part of either,
only `auth`, a label of what was sent ("no key", "a wrong key", "the access key").
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field


@dataclass(frozen=True)
class HttpRequest:
    method: str
    url: str                         # as the node would use it: http://10.10.0.12:8081/v1/models
    json: dict | None = None
    headers: dict = field(default_factory=dict)
    auth: str = "no key"             # what the headers carry, in words (evidence and replay key)
    stream: bool = False

    def describe(self) -> str:
        return f"HTTP {self.method} {self.url} ({self.auth})"


@dataclass
class HttpResponse:
    status: int
    text: str
    first_byte_s: float | None       # when the first streamed data line arrived (time to first token)
    duration_s: float
    stopped: str | None = None       # the answer began, then went silent: for how long (text: what came)
    note: str = ""                   # what reaching the node took (a connect tried again), as a command's note


def exchange(request: HttpRequest, timeout: float, network=None) -> HttpResponse:
    """Send the request with httpcore, over `network` (an httpcore NetworkBackend: the node's own
    connections, rackproof.nodes.tunnel.Through) when given, else from here."""
    import httpcore

    headers = [(name.encode(), value.encode()) for name, value in request.headers.items()]
    content = None
    if request.json is not None:
        content = json.dumps(request.json).encode()
        headers.append((b"Content-Type", b"application/json"))
    started = time.monotonic()
    first = None
    body = bytearray()
    status = 0
    try:
        with httpcore.ConnectionPool(network_backend=network) as pool:
            with pool.stream(request.method, request.url, headers=headers, content=content,
                             extensions={"timeout": dict.fromkeys(("connect", "read", "write", "pool"), timeout)}) as answer:
                status = answer.status
                for chunk in answer.iter_stream():
                    if first is None and _begins_a_data_line(body, chunk):
                        first = time.monotonic() - started
                    body += chunk
    except httpcore.TimeoutException:
        if first is None:
            raise TimeoutError(f"no complete answer within {timeout:g} s") from None
        # a stream that began and stopped: what it carried is evidence of how far it got
        lines = _lines(body)
        return HttpResponse(status, "\n".join(lines), first, time.monotonic() - started,
                            stopped=f"nothing more for {timeout:g} s after {len(lines)} lines")
    except (httpcore.NetworkError, httpcore.ProtocolError) as e:
        # refused (from the node: its sshd could not connect), or closed before a whole answer
        return HttpResponse(0, f"no HTTP answer: {e or type(e).__name__}", None, time.monotonic() - started)
    return HttpResponse(status, "\n".join(_lines(body)), first, time.monotonic() - started)


DATA = b"data:"   # an event stream's data line: the first one carries the first token


def _begins_a_data_line(body: bytearray, chunk: bytes) -> bool:
    """Whether `chunk` completes the start of a `data:` line, looking only at the chunk and the
    few bytes before it: each byte of an answer is looked at a bounded number of times (the
    answer is a node's to make as long as it likes; split into lines once, at its end)."""
    before = body[-len(DATA):] if len(body) >= len(DATA) else b"\n" + body   # the answer's start begins a line
    return b"\n" + DATA in before + chunk


def _lines(body: bytearray) -> list[str]:
    """The answer's lines, split once at its end ("\r\n" or "\n"; a last line without one too)."""
    lines = [line.rstrip("\r") for line in body.decode(errors="replace").split("\n")]
    return lines[:-1] if lines[-1] == "" else lines
