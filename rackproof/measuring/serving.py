"""Asking an OpenAI-compatible server (an engine, or thor-tigress-agent) for models, health and
a short streamed chat, from a node, and reading the answer: tokens, time to first token, rate.
What the answers say is judged by rackproof.judging.serving."""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, TypeVar

from rackproof.judging.serving import ACCEPTS_BUT_DOES_NOT_GENERATE, agent_answer_cause, engine_chat_cause
from rackproof.nodes.host import Host
from rackproof.nodes.http import HttpRequest, HttpResponse
from rackproof.inventory.model import Agent, Expect
from rackproof.probes import ParseError
from rackproof.probes.sse import ChatStream, collect_chat_stream, parse_models
from rackproof.inventory.references import first_token_wait_s
from rackproof.nodes.remote import CommandTimeout

T = TypeVar("T")

PROMPT = "Reply with one short sentence: what is a cluster?"
MAX_TOKENS = 32
# How long an engine's /health may take when a chat got no token: it answers at once or not at all.
HEALTH_SECONDS = 5.0


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
    response: HttpResponse | None  # None: the stream stayed silent past the wait for a token
    stream: ChatStream | None      # None when the answer was no stream at all
    problem: str | None            # why it does not count as generated text

    @property
    def stalled(self) -> bool:
        return self.response is None

    @property
    def ttft_s(self) -> float | None:
        return self.response.first_byte_s if self.response else None

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


def chat(host: Host, base_url: str, model: str, expect: Expect, auth: Auth = NO_KEY) -> Chat:
    """A short streamed chat completion. Every silence of the answer (the HTTP client's read
    timeout), the wait for the first token included, lasts at most first_token_wait_s(expect),
    well beyond the first-token bound: a late first token is measured and judged, and only an
    engine that sends none by then counts as not generating."""
    body = {"model": model, "stream": True, "max_tokens": MAX_TOKENS,
            "messages": [{"role": "user", "content": PROMPT}]}
    wait = first_token_wait_s(expect)
    try:
        response = host.remote.http(HttpRequest("POST", f"{base_url}/v1/chat/completions", json=body,
                                                headers=auth.header, auth=auth.label, stream=True), wait)
    except CommandTimeout:
        return Chat(None, None, f"no token within {wait:g} s")
    if response.status != 200:
        return Chat(response, None, f"HTTP {response.status or 'no answer'}: {response.text[:200].strip()}")
    try:
        stream = collect_chat_stream(response.text.splitlines())
    except ParseError as e:
        return Chat(response, None, f"the answer is not a chat completion stream: {e.reason}")
    if response.stopped:
        return Chat(response, stream, f"the stream stopped after {stream.tokens} token{'s' * (stream.tokens != 1)}: "
                                      f"nothing more for {wait:g} s")
    if stream.tokens == 0:
        return Chat(response, stream, "the stream carried no generated text")
    return Chat(response, stream, None)


@dataclass(frozen=True)
class Comparison:
    """A model on another node through the agent, then the same model on the agent's node."""
    through_agent: Chat
    on_agent_node: Chat

    @property
    def ratio(self) -> float | None:
        """Tokens/s through the agent over tokens/s on the agent's node (None: either has no rate)."""
        remote, local = self.through_agent.tokens_per_s, self.on_agent_node.tokens_per_s
        return remote / local if remote and local else None


def once_more_if_short(measure: Callable[[], T], short: Callable[[T], bool]) -> tuple[T, ...]:
    """Measured, and once more when the figure came in short: a moment's load on a node or on
    the controller slows one chat (two operators' runs on one controller once made a comparison
    0.879 of its 0.9, five selftest workers a stream 15.8 of its 30 tokens/s), and a node that is
    slow is short both times (as traffic.attempts). Every run, in the order run."""
    first = measure()
    return (first, measure()) if short(first) else (first,)


def best(runs: tuple[T, ...], figure: Callable[[T], float | None]) -> T:
    """The run with the highest figure; the first when none has one."""
    return max(runs, key=lambda run: -1.0 if figure(run) is None else figure(run))


def short_chat(floor: float | None) -> Callable[[Chat], bool]:
    return lambda chat: floor is not None and chat.tokens_per_s is not None and chat.tokens_per_s < floor


def short_comparison(floor: float) -> Callable[[Comparison], bool]:
    return lambda run: run.ratio is not None and run.ratio < floor


def best_chat(runs: tuple[Chat, ...]) -> Chat:
    return best(runs, lambda chat: chat.tokens_per_s)


def best_comparison(runs: tuple[Comparison, ...]) -> Comparison:
    return best(runs, lambda run: run.ratio)


@dataclass(frozen=True)
class EngineAnswers:
    """What an engine answered when asked from `via` (the agent's node): the models it lists,
    its health once it listed its model, and a short streamed chat once it was healthy."""
    via: str
    models: HttpResponse
    listed: tuple[str, ...] | None
    health: HttpResponse | None
    chat: Chat | None


def engine_answers(via: Host, base_url: str, model: str, expect: Expect) -> EngineAnswers:
    response, listed = models(via, base_url)
    if response.status != 200 or not (listed and model in listed):
        return EngineAnswers(via.name, response, listed, None, None)
    health = get(via, f"{base_url}/health")
    if health.status != 200:
        return EngineAnswers(via.name, response, listed, health, None)
    return EngineAnswers(via.name, response, listed, health, chat(via, base_url, model, expect))


def agent_chat_cause(agent: Host, chat: Chat, engine_url: str) -> str:
    """Why a chat through the agent did not generate. For a silent stream the engine's own /health,
    asked from the agent's node, tells a stalled engine from a dead one."""
    if chat.stalled:
        health = _status(agent, f"{engine_url}/health")
        if health != 200:
            return (f"the engine behind it answers /health from {agent.name} with {health or 'nothing'}: "
                    "it is down or hung")
        return (f"{ACCEPTS_BUT_DOES_NOT_GENERATE} (its /health answers 200; should "
                "test_engine_answers_from_the_agent_node pass, the agent is what holds the request)")
    if chat.response.status != 200:
        return agent_answer_cause(chat.response.status, agent.name)
    return engine_chat_cause(chat)


def _status(host: Host, url: str) -> int:
    """The HTTP status of GET url from host; 0 when nothing answered in time."""
    try:
        return get(host, url, timeout=HEALTH_SECONDS).status
    except CommandTimeout:
        return 0
