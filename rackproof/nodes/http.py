"""HTTP requests made from a node (httpx): to an engine or the agent, as that node sees them.

Over SSH the controller tunnels through the node (a forwarded local port), so nothing needs
a route from the controller to the cluster network. Requests and answers are evidence like
commands, and can be recorded and replayed: the access key itself is never part of either,
only `auth`, a label of what was sent ("no key", "a wrong key", "the access key").
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit, urlunsplit


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


def exchange(request: HttpRequest, timeout: float, via: tuple[str, int] | None = None) -> HttpResponse:
    """Send the request with httpx, to `via` (a forwarded local port) instead of the URL's
    host:port when given; the Host header still names the real server."""
    import httpx

    url = request.url
    headers = dict(request.headers)
    if via is not None:
        parts = urlsplit(url)
        headers.setdefault("Host", parts.netloc)
        url = urlunsplit(parts._replace(netloc=f"{via[0]}:{via[1]}"))
    started = time.monotonic()
    first = status = None
    lines = []
    try:
        # trust_env=False: never pick up a proxy from the environment; every request stays in the rack
        with httpx.Client(timeout=timeout, trust_env=False) as client:
            with client.stream(request.method, url, json=request.json, headers=headers) as response:
                status = response.status_code
                for line in response.iter_lines():
                    if first is None and line.startswith("data:"):
                        first = time.monotonic() - started
                    lines.append(line)
    except httpx.TimeoutException:
        if first is None:
            raise TimeoutError(f"no complete answer within {timeout:g} s") from None
        # a stream that began and stopped: what it carried is evidence of how far it got
        return HttpResponse(status, "\n".join(lines), first, time.monotonic() - started,
                            stopped=f"nothing more for {timeout:g} s after {len(lines)} lines")
    except httpx.TransportError as e:
        # refused, or (through a tunnel) closed before any answer: nothing serves that port
        return HttpResponse(0, f"no HTTP answer: {e or type(e).__name__}", None, time.monotonic() - started)
    return HttpResponse(response.status_code, "\n".join(lines), first, time.monotonic() - started)
