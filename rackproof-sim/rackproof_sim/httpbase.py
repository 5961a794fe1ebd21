"""What the simulated agent and engines share as HTTP servers: the server name they announce,
HTTP/1.1 keep-alive, a log line per request on stderr, and JSON replies."""

from __future__ import annotations

import json
import sys
from http.server import BaseHTTPRequestHandler


class JsonHandler(BaseHTTPRequestHandler):
    server_version = "python"   # each server says its own
    sys_version = ""
    protocol_version = "HTTP/1.1"

    def version_string(self):
        return self.server_version

    def log_message(self, fmt, *args):  # quiet, but keep a line per request in the log
        sys.stderr.write("%s %s\n" % (self.address_string(), fmt % args))

    def _json(self, code: int, obj, extra: dict | None = None) -> None:
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)
