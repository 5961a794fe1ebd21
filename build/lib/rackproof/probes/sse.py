"""OpenAI-compatible model servers (vLLM, llama.cpp, trtllm-serve): streamed chat completions
(server-sent events) and GET /v1/models.

A small SSE reader of our own (the WHATWG event-stream rules we need: `data:` lines joined by
newlines, blank line ends an event, `:` comments are keep-alives) rather than a dependency.
"""

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from . import ParseError
from ._text import json_field, load_json

TOOL = "sse"
DONE = "[DONE]"  # OpenAI's end-of-stream sentinel, sent as `data: [DONE]`


@dataclass(frozen=True)
class SseEvent:
    event: str                   # "message" unless the server names it with `event:`
    data: str


def parse_sse_chunks(lines: Iterable[str]) -> Iterator[SseEvent]:
    """Events of an event stream, given its lines (httpx `iter_lines()` or `text.splitlines()`).
    An event still open when the lines run out is dispatched too: a stream cut after its last
    `data:` line has still delivered that data."""
    event, data = "message", []
    for line in lines:
        line = line.rstrip("\r\n")
        if not line:
            if data:
                yield SseEvent(event, "\n".join(data))
            event, data = "message", []
            continue
        if line.startswith(":"):
            continue  # comment / keep-alive
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "data":
            data.append(value)
        elif name == "event":
            event = value
        # id: and retry: steer reconnection, which a one-shot check does not do
    if data:
        yield SseEvent(event, "\n".join(data))


@dataclass(frozen=True)
class ChatStream:
    tokens: int                  # chunks that carried generated text (content or reasoning)
    text: str                    # the content, concatenated (no reasoning)
    finished: bool               # the server sent `data: [DONE]`
    model: str | None
    finish_reason: str | None = None        # "stop", "length", ...; None if never sent
    completion_tokens: int | None = None    # from a usage chunk (stream_options.include_usage)


def collect_chat_stream(lines: Iterable[str]) -> ChatStream:
    """Read a streamed chat completion to its end. An error sent inside the stream (vLLM,
    llama.cpp put {"error": ...} in a data event) raises ParseError with its message."""
    tokens, pieces, finished = 0, [], False
    model = finish_reason = completion_tokens = None
    for event in parse_sse_chunks(lines):
        data = event.data
        if data.strip() == DONE:
            finished = True
            break
        if event.event == "error":
            raise ParseError(TOOL, f"server error in stream: {data}", data)
        chunk = load_json(TOOL, data)
        if isinstance(chunk, dict) and "error" in chunk:
            error = chunk["error"]
            message = error.get("message", error) if isinstance(error, dict) else error
            raise ParseError(TOOL, f"server error in stream: {message}", data)
        model = json_field(TOOL, chunk, "model", str, data, optional=True) or model
        usage = json_field(TOOL, chunk, "usage", dict, data, optional=True)
        if usage is not None:
            completion_tokens = json_field(TOOL, usage, "completion_tokens", int, data, optional=True)
        for choice in json_field(TOOL, chunk, "choices", list, data):
            delta = json_field(TOOL, choice, "delta", dict, data, optional=True) or {}
            content = json_field(TOOL, delta, "content", str, data, optional=True) or ""
            # reasoning parsers move the thinking out of content; it is generated all the same
            reasoning = (json_field(TOOL, delta, "reasoning_content", str, data, optional=True)
                         or json_field(TOOL, delta, "reasoning", str, data, optional=True) or "")
            if content or reasoning:
                tokens += 1
            pieces.append(content)
            finish_reason = json_field(TOOL, choice, "finish_reason", str, data, optional=True) or finish_reason
    return ChatStream(tokens, "".join(pieces), finished, model, finish_reason, completion_tokens)


def parse_models(json_text: str) -> tuple[str, ...]:
    """Model ids served, from GET /v1/models ({"object": "list", "data": [{"id": ...}, ...]})."""
    listing = load_json(TOOL, json_text)
    models = json_field(TOOL, listing, "data", list, json_text)
    return tuple(json_field(TOOL, model, "id", str, json_text) for model in models)
