"""What an OpenAI-compatible server's answers (an engine's, or thor-tigress-agent's) say, as the
checks judge them: the time to first token against its bound, and the usual cause of each answer
that is not what it should be. The answers are asked from a node by rackproof.measuring.serving."""

from __future__ import annotations

from rackproof.judging.failure import Failure
from rackproof.inventory.figures import Measurement
from rackproof.inventory.references import convert

ACCEPTS_BUT_DOES_NOT_GENERATE = "the engine accepts requests but does not generate: check its log and GPU memory"
STOPS_GENERATING = ("the engine starts an answer and stops generating in the middle of it: it hangs or died on the "
                    "request (its log; GPU memory)")
SLOW_FIRST_TOKEN = ("the engine queues requests behind other work, or runs short of GPU memory (check its log); "
                    "the first request after a start can also be slow")
AGENT_NOT_ANSWERING = "nothing answers at the agent's address: the agent is not running, or listens on another address"


def judge_first_token(m: Measurement, where: str) -> Measurement:
    """The time to first token against its bound, in seconds as a person counts them: "first
    token after 20.1 s (bound 5 s)"."""
    if m.verdict == "failed":
        raise Failure(where, f"first token after {convert(m.value, m.unit, 's'):.1f} s "
                             f"(bound {convert(m.expectation.floor, m.unit, 's'):g} s)", cause=SLOW_FIRST_TOKEN)
    return m


# --- usual causes, chosen from what the answers show -----------------------------------------

def engine_answer_cause(path: str, status: int) -> str:
    """Why an engine answered GET `path` (/v1/models first, then /health) with `status`, not 200."""
    if status == 0:
        return ("the server is down, or listens on another address" if path == "/v1/models" else
                "the server stopped answering after its first answer: it crashed or hangs (see its log)")
    if path == "/health" and status == 503:
        return "the engine is still loading its model, or its engine process died"
    return "another program answers on that port, or the server fails the request (its answer says which)"


def engine_chat_cause(chat) -> str:
    """Why a chat (rackproof.measuring.serving.Chat) asked of an engine that listed its model and
    answered /health did not generate."""
    if chat.stalled:
        return ACCEPTS_BUT_DOES_NOT_GENERATE
    if chat.response.stopped:
        return STOPS_GENERATING
    if chat.response.status == 0:
        return "the server gave no HTTP answer (refused or dropped the connection): it is down, or died on the request"
    if chat.response.status != 200:
        return f"the server refused the request (HTTP {chat.response.status}): its answer says why"
    return "the server answered 200 without generated text: check the engine's log (model files, chat template)"


def agent_answer_cause(status: int, agent_node: str) -> str:
    """Why the agent answered `status` instead of 200 to a request that carried its key."""
    if status == 0:
        return AGENT_NOT_ANSWERING
    if status in (401, 403):
        return "the agent refuses the key the inventory points to: it was started with another key"
    if status == 404:
        return ("the agent, or the engine behind it, does not know this model (the answer says which): "
                "see test_agent_routes_exactly_the_inventory_engines")
    if status in (502, 503, 504):
        return (f"the agent cannot reach the engine: it is down, or unreachable from {agent_node} "
                "(the answer says which)")
    return f"the agent failed the request: its answer (HTTP {status}) says why"


def key_refusal_cause(status: int) -> str:
    """Why the agent answered `status` instead of 401/403 to a request without its key."""
    if status == 200:
        return "the agent does not check the key: anyone who reaches it can use every model"
    if status == 0:
        return AGENT_NOT_ANSWERING
    return f"the request failed before the key was checked: the agent's answer (HTTP {status}) says why"
