"""rackproof.probes.sse against real model-server output.

vllm_stream_chat_completions_qwen3_sse.txt: the first three events of a vLLM stream (the rest,
with finish_reason and [DONE], was cut in the source; the tests add the documented ending).
vllm_v1_models_*.json and llamacpp_v1_models_meta_fixture.json: GET /v1/models bodies.
"""

import json
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from rackproof.probes import ParseError
from rackproof.probes.sse import ChatStream, SseEvent, collect_chat_stream, parse_models, parse_sse_chunks

SAMPLES = Path(__file__).parent / "samples"
VLLM_STREAM = (SAMPLES / "vllm_stream_chat_completions_qwen3_sse.txt").read_text()
FINAL_CHUNK = ('data: {"id":"chatcmpl-dc461701bc424bac9de697c529922071","object":"chat.completion.chunk",'
               '"created":1753616032,"model":"Qwen/Qwen3-0.6B","choices":[{"index":0,"delta":{},'
               '"logprobs":null,"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n')


def test_vllm_events():
    events = list(parse_sse_chunks(VLLM_STREAM.splitlines()))
    assert len(events) == 3
    assert {event.event for event in events} == {"message"}
    assert json.loads(events[1].data)["choices"][0]["delta"] == {"content": "<think>"}


def test_vllm_stream_cut_short():
    assert collect_chat_stream(VLLM_STREAM.splitlines()) == ChatStream(
        tokens=2, text="<think>\n", finished=False, model="Qwen/Qwen3-0.6B")


def test_vllm_stream_with_its_ending():
    stream = collect_chat_stream((VLLM_STREAM + FINAL_CHUNK).splitlines())
    assert (stream.tokens, stream.text, stream.finished, stream.finish_reason) == (2, "<think>\n", True, "stop")


def test_event_stream_rules():
    lines = [": keep-alive", "", "event: ping", "data: a", "data:b", "id: 7", "retry: 100", "", "", "data: tail"]
    assert list(parse_sse_chunks(lines)) == [SseEvent("ping", "a\nb"), SseEvent("message", "tail")]


def test_crlf_lines_from_a_socket():
    lines = (VLLM_STREAM + FINAL_CHUNK).replace("\n", "\r\n").splitlines(keepends=True)
    assert collect_chat_stream(lines).finished


def test_reasoning_and_usage():
    chunks = [{"model": "m", "choices": [{"delta": {"reasoning_content": "hmm"}}]},
              {"model": "m", "choices": [{"delta": {"content": "Hi"}, "finish_reason": "length"}]},
              {"model": "m", "choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 2}}]
    lines = [line for chunk in chunks for line in (f"data: {json.dumps(chunk)}\n", "\n")] + ["data: [DONE]"]
    assert collect_chat_stream(lines) == ChatStream(2, "Hi", True, "m", "length", 2)


@pytest.mark.parametrize("lines, message", [
    (['data: {"error": {"message": "prompt too long", "code": 400}}'], "prompt too long"),
    (["event: error", "data: engine died"], "engine died"),
    (["data: {not json"], "not JSON"),
    (['data: {"choices": "x"}'], "choices"),
])
def test_stream_errors(lines, message):
    with pytest.raises(ParseError, match=message):
        collect_chat_stream(lines)


@pytest.mark.parametrize("name, ids", [
    ("vllm_v1_models_with_permission_no_max_model_len.json", ("DeepSeek-R1-Distill-Qwen-32B",)),
    ("llamacpp_v1_models_meta_fixture.json", ("Gemma-4-26B-A4B",)),
])
def test_models(name, ids):
    assert parse_models((SAMPLES / name).read_text()) == ids


@pytest.mark.parametrize("text", ["", "Loading model", '{"error": {"code": 503, "message": "Loading model"}}',
                                  '{"data": [{"object": "model"}]}'])
def test_models_unreadable(text):
    with pytest.raises(ParseError):
        parse_models(text)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.text(max_size=12), max_size=8), st.text("abc/-", min_size=1, max_size=10))
def test_round_trip(pieces, model):
    """Chunks as an OpenAI-compatible server streams them come back as the same text."""
    lines = []
    for piece in pieces:
        chunk = {"model": model, "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]}
        lines += [f"data: {json.dumps(chunk)}", ""]
    lines += ["data: [DONE]", ""]
    assert collect_chat_stream(lines) == ChatStream(
        sum(1 for piece in pieces if piece), "".join(pieces), True, model if pieces else None)
