"""A small real OpenAI-compatible model server (stdlib only, one thread per connection).

    GET  /health                 200, empty body (as vLLM)
    GET  /v1/models              {"object": "list", "data": [{"id": MODEL, ...}]}
    POST /v1/chat/completions    JSON, or with "stream": true Server-Sent Events
                                 (`data: {chunk}` per token at the set tokens/s, then `data: [DONE]`)

It runs inside a node as the login user:
    python3 -m rackproof_sim.engines --model qwen3-8b --host 10.10.0.12 --port 8081 --tokens-per-s 40
The node's model file can slow it down while it runs (the slow-engine fault), hold back its first
token (late-first-token: the answer's headers go out at once, its first token after a delay, the
rest at the usual rate), or stall it: models and health still answer, a completion is accepted and
no token ever comes (the stalled-engine fault), or only its first tokens do (stream-stops).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import time
import uuid
from http.server import ThreadingHTTPServer

from .httpbase import JsonHandler

WORDS = ("The cluster answers from the Thor that holds the model , and the agent passes the reply "
         "back token by token . Each node keeps its model whole in memory , so the network carries "
         "only requests and replies .").split()


def _control(model_file: str | None, model: str) -> dict:
    """What the rack has planted for this engine: {"slow_factor": F, "first_token_delay_s": S,
    "stalled": True, "stops_after_tokens": N}, or {}."""
    if not model_file:
        return {}
    try:
        with open(model_file) as f:
            return json.load(f).get("engines", {}).get(model, {})
    except (OSError, ValueError):
        return {}


class Handler(JsonHandler):
    server_version = "uvicorn"

    def _error(self, code: int, message: str, kind: str = "BadRequestError") -> None:
        self._json(code, {"object": "error", "message": message, "type": kind, "param": None, "code": code})

    # routes -------------------------------------------------------------------------------
    def do_GET(self):
        cfg = self.server.cfg
        if self.path == "/health":
            self.send_response(200)
            self.send_header("content-length", "0")
            self.end_headers()
        elif self.path == "/v1/models":
            self._json(200, {"object": "list", "data": [{
                "id": cfg["model"], "object": "model", "created": cfg["created"], "owned_by": "vllm",
                "root": cfg["model"], "parent": None, "max_model_len": 32768, "permission": []}]})
        else:
            self._error(404, "Not Found", "NotFoundError")

    def do_POST(self):
        cfg = self.server.cfg
        length = int(self.headers.get("content-length") or 0)
        try:
            req = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            return self._error(400, "request body is not JSON")
        if self.path not in ("/v1/chat/completions", "/v1/completions"):
            return self._error(404, "Not Found", "NotFoundError")
        if req.get("model") not in (cfg["model"], None):
            return self._error(404, f"The model `{req.get('model')}` does not exist.", "NotFoundError")
        max_tokens = int(req.get("max_tokens") or req.get("max_completion_tokens") or 32)
        max_tokens = max(1, min(max_tokens, 1024))
        prompt = " ".join(str(m.get("content", "")) for m in req.get("messages", []) if isinstance(m, dict))
        prompt_tokens = max(1, len(prompt.split()))
        control = _control(cfg["model_file"], cfg["model"])
        if control.get("stalled"):
            return self._stall(bool(req.get("stream")))
        rate = cfg["tokens_per_s"] / max(float(control.get("slow_factor", 1.0)), 1e-6)
        delay = 1.0 / rate
        rid = f"chatcmpl-{uuid.uuid4().hex}"
        created = int(time.time())
        tokens = [(" " if i else "") + WORDS[i % len(WORDS)] for i in range(max_tokens)]
        usage = {"prompt_tokens": prompt_tokens, "total_tokens": prompt_tokens + max_tokens,
                 "completion_tokens": max_tokens}
        late = float(control.get("first_token_delay_s", 0.0))
        if not req.get("stream"):
            time.sleep(late + delay * max_tokens)
            return self._json(200, {
                "id": rid, "object": "chat.completion", "created": created, "model": cfg["model"],
                "choices": [{"index": 0, "message": {"role": "assistant", "content": "".join(tokens)},
                             "logprobs": None, "finish_reason": "length"}],
                "usage": usage})
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        self.close_connection = True

        def event(delta, finish=None, choices=True):
            chunk = {"id": rid, "object": "chat.completion.chunk", "created": created, "model": cfg["model"],
                     "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}
            self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
            self.wfile.flush()

        try:
            # as vLLM: the role chunk goes out with the first token, once the prompt is processed
            time.sleep(late)
            event({"role": "assistant", "content": ""})
            start = time.monotonic()
            stop = control.get("stops_after_tokens")
            for i, tok in enumerate(tokens):
                if stop is not None and i >= stop:
                    return self._hang()
                wait = start + (i + 1) * delay - time.monotonic()
                if wait > 0:
                    time.sleep(wait)
                event({"content": tok})
            event({}, "length")
            if (req.get("stream_options") or {}).get("include_usage"):
                self.wfile.write(b"data: " + json.dumps({
                    "id": rid, "object": "chat.completion.chunk", "created": created, "model": cfg["model"],
                    "choices": [], "usage": usage}).encode() + b"\n\n")
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _stall(self, stream: bool) -> None:
        """As an engine whose GPU work never completes: a stream's headers go out (a server sends
        them before the first token), then nothing, until the client gives up and hangs up."""
        if stream:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream; charset=utf-8")
            self.end_headers()
            self.wfile.flush()
        self._hang()

    def _hang(self) -> None:
        """Nothing more, until the client gives up and hangs up."""
        self.close_connection = True
        try:
            self.rfile.read(1)   # returns when the client closes the connection
        except (OSError, ValueError):
            pass


def serve(model: str, host: str, port: int, tokens_per_s: float, model_file: str | None) -> None:
    ThreadingHTTPServer.request_queue_size = 64
    srv = ThreadingHTTPServer((host, port), Handler)
    srv.daemon_threads = True
    srv.cfg = {"model": model, "tokens_per_s": tokens_per_s, "model_file": model_file,
               "created": int(time.time())}
    signal.signal(signal.SIGTERM, lambda *a: os._exit(0))
    srv.serve_forever()


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="rackproof-sim-engine")
    ap.add_argument("--model", required=True)
    ap.add_argument("--host", required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--tokens-per-s", type=float, default=40.0)
    ap.add_argument("--model-file")
    a = ap.parse_args(argv)
    from .util import set_proctitle
    set_proctitle(["rackproof-sim-engine", "--model", a.model, "--host", a.host, "--port", str(a.port)])
    serve(a.model, a.host, a.port, a.tokens_per_s, a.model_file)


if __name__ == "__main__":
    main()
