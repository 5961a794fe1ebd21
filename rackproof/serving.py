"""Asking an OpenAI-compatible server (an engine, or thor-tigress-agent) for models, health and
a short streamed chat, from a node, and reading the answer: tokens, time to first token, rate."""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from .host import Host
from .http import HttpRequest, HttpResponse
from .inventory import Agent
from .probes import ParseError
from .probes.sse import ChatStream, collect_chat_stream, parse_models

PROMPT = "Reply with one short sentence: what is a cluster?"
MAX_TOKENS = 32


class AccessKeyError(Exception):
    pass


def read_access_key(agent: Agent) -> str:
    """The agent's access key from where the inventory says; never from the TOML itself."""
    if agent.key_env:
        key = os.environ.get(agent.key_env, "").strip()
        if not key:
            raise AccessKeyError(f"agent.key_env: the environment variable {agent.key_env} is not set")
        return key
    path = Path(agent.key_file).expanduser()
    try:
        key = path.read_text().strip()
    except OSError as e:
        raise AccessKeyError(f"agent.key_file: cannot read {path}: {e.strerror}") from None
    if not key:
        raise AccessKeyError(f"agent.key_file: {path} is empty")
    return key


def wrong_key() -> str:
    return "wrong-" + secrets.token_hex(8)


@dataclass(frozen=True)
class Auth:
    """What a request carries, and how evidence names it (the key itself never appears)."""
    header: dict
    label: str


NO_KEY = Auth({}, "no key")


def bearer(key: str, label: str) -> Auth:
    return Auth({"Authorization": f"Bearer {key}"}, label)


@dataclass(frozen=True)
class Chat:
    response: HttpResponse
    stream: ChatStream | None      # None when the answer was no stream at all
    problem: str | None            # why it does not count as generated text

    @property
    def ttft_s(self) -> float | None:
        return self.response.first_byte_s

    @property
    def tokens_per_s(self) -> float | None:
        """Generation rate after the first token (what a person waits for per word)."""
        if not self.stream or self.stream.tokens < 2 or self.ttft_s is None:
            return None
        span = self.response.duration_s - self.ttft_s
        return (self.stream.tokens - 1) / span if span > 0 else None


def get(host: Host, url: str, auth: Auth = NO_KEY, timeout: float = 10.0) -> HttpResponse:
    return host.remote.http(HttpRequest("GET", url, headers=auth.header, auth=auth.label), timeout)


def models(host: Host, base_url: str, auth: Auth = NO_KEY) -> tuple[HttpResponse, tuple[str, ...] | None]:
    response = get(host, f"{base_url}/v1/models", auth)
    try:
        return response, parse_models(response.text) if response.status == 200 else None
    except ParseError:
        return response, None


def chat(host: Host, base_url: str, model: str, auth: Auth = NO_KEY, timeout: float = 60.0) -> Chat:
    body = {"model": model, "stream": True, "max_tokens": MAX_TOKENS,
            "messages": [{"role": "user", "content": PROMPT}]}
    response = host.remote.http(HttpRequest("POST", f"{base_url}/v1/chat/completions", json=body,
                                            headers=auth.header, auth=auth.label, stream=True), timeout)
    if response.status != 200:
        return Chat(response, None, f"HTTP {response.status or 'no answer'}: {response.text[:200].strip()}")
    try:
        stream = collect_chat_stream(response.text.splitlines())
    except ParseError as e:
        return Chat(response, None, f"the answer is not a chat completion stream: {e.reason}")
    if stream.tokens == 0:
        return Chat(response, stream, "the stream carried no generated text")
    return Chat(response, stream, None)
