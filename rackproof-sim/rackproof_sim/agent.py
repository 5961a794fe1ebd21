"""thor-tigress-agent, as the chapter describes it: the front door on thor-1. It checks the
access key and passes each request to the engine named by its "model", streaming the reply back.

    thor-tigress-agent [--listen 127.0.0.1:8080] [--model 127.0.0.1:8079]
                       [--engine MODEL=HOST:PORT]... [--search 127.0.0.1:8888]

The key comes from the environment (THOR_AGENT_KEY), never from the command line. Engine hosts
such as thor-2 are resolved by the node's own /etc/hosts.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import signal
import socket
import sys
import time
from http.server import ThreadingHTTPServer

from .httpbase import JsonHandler


class Handler(JsonHandler):
    server_version = "thor-tigress-agent"

    def _error(self, code: int, message: str, kind: str, extra: dict | None = None) -> None:
        self._json(code, {"error": {"message": message, "type": kind, "code": code}}, extra)

    def _authorized(self) -> bool:
        key = self.server.key
        got = self.headers.get("authorization", "")
        if key and got == f"Bearer {key}":
            return True
        self._error(401, "missing or wrong access key (send Authorization: Bearer <key>)",
                    "authentication_error", {"www-authenticate": "Bearer"})
        return False

    def do_GET(self):
        if self.path == "/health":
            self.send_response(200)
            self.send_header("content-length", "0")
            self.end_headers()
            return
        if not self._authorized():
            return
        if self.path == "/v1/models":
            now = int(self.server.started)
            self._json(200, {"object": "list", "data": [
                {"id": model, "object": "model", "created": now, "owned_by": f"{host}:{port}"}
                for model, (host, port) in self.server.engines.items()]})
        else:
            self._error(404, "Not Found", "not_found_error")

    def do_POST(self):
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length)
        if not self._authorized():
            return
        if self.path not in ("/v1/chat/completions", "/v1/completions"):
            return self._error(404, "Not Found", "not_found_error")
        try:
            model = json.loads(body or b"{}").get("model")
        except (ValueError, AttributeError):
            return self._error(400, "request body is not JSON", "invalid_request_error")
        if model not in self.server.engines:
            return self._error(404, f"no engine serves model {model!r}; routed: "
                               f"{', '.join(self.server.engines)}", "not_found_error")
        host, port = self.server.engines[model]
        try:
            conn = http.client.HTTPConnection(host, port, timeout=30)
            conn.request("POST", self.path, body=body, headers={"content-type": "application/json"})
            resp = conn.getresponse()
        except (OSError, http.client.HTTPException) as e:
            reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e) or type(e).__name__
            return self._error(502, f"engine for {model} at {host}:{port} is unreachable: {reason}", "bad_gateway")
        self.send_response(resp.status)
        for k in ("content-type", "cache-control"):
            if resp.getheader(k):
                self.send_header(k, resp.getheader(k))
        self.send_header("connection", "close")
        self.end_headers()
        self.close_connection = True
        try:
            while True:
                chunk = resp.read1(65536)
                if not chunk:
                    break
                self.wfile.write(chunk)
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, socket.timeout):
            pass
        finally:
            conn.close()


def parse_engine(spec: str) -> tuple[str, tuple[str, int]]:
    model, _, target = spec.partition("=")
    host, _, port = target.rpartition(":")
    if not model or not host or not port.isdigit():
        raise argparse.ArgumentTypeError(f"--engine wants MODEL=HOST:PORT, not {spec!r}")
    return model, (host, int(port))


def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(prog="thor-tigress-agent")
    ap.add_argument("--listen", default="127.0.0.1:8080")
    ap.add_argument("--model", default=None, help="the agent's own model server (unused here)")
    ap.add_argument("--engine", action="append", type=parse_engine, default=[])
    ap.add_argument("--search", default=None)
    a = ap.parse_args(argv)
    from .util import set_proctitle
    set_proctitle(["thor-tigress-agent", *argv])
    host, _, port = a.listen.rpartition(":")
    ThreadingHTTPServer.request_queue_size = 64
    srv = ThreadingHTTPServer((host, int(port)), Handler)
    srv.daemon_threads = True
    srv.engines = dict(a.engine)
    srv.key = os.environ.get("THOR_AGENT_KEY", "")
    srv.started = time.time()
    signal.signal(signal.SIGTERM, lambda *x: os._exit(0))
    srv.serve_forever()


if __name__ == "__main__":
    main()
