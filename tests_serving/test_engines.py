"""Step 5: each engine's server listens on its node's cluster address (not 127.0.0.1, not every
address), and from the agent's node it lists its model, is healthy and really generates."""

import pytest

from rackproof.judging import capabilities, serving
from rackproof.judging.failure import Failure
from rackproof.measurements.engines import ENGINE_ANSWERS, ENGINE_LISTENERS
from rackproof.probes.sockets import scope

pytestmark = pytest.mark.step(5)


@pytest.fixture(autouse=True)
def _serving_capability(engine, guards):
    guards(*capabilities.serving(engine.spec.model))


def test_engine_listens_on_its_cluster_address(engine, inventory, planned):
    expected = inventory.engine_listen(engine.spec)
    port = engine.spec.port
    listeners = [l for l in planned(ENGINE_LISTENERS) if l.port == port]
    addresses = sorted({l.local_address for l in listeners})
    if not listeners:
        raise Failure(engine.where, f"nothing listens on port {port} of {engine.host.name}", cause="the engine "
                      "server is not running (crashed while loading, or never started)")
    if scope(expected) != "loopback" and any(scope(a) == "loopback" for a in addresses) and expected not in addresses:
        raise Failure(engine.where, f"the server listens on {', '.join(addresses)} port {port}: it accepts "
                      "connections from its own machine only: the agent on "
                      f"{inventory.agent.node if inventory.agent else 'the head node'} cannot reach it. "
                      f"Start it with --host {expected}")
    if any(scope(a) == "any" for a in addresses):
        raise Failure(engine.where, f"the server listens on every address ({', '.join(addresses)} port {port}), so "
                      "it is exposed beyond the cluster switch (the house network too). Start it with "
                      f"--host {expected}")
    if expected not in addresses:
        raise Failure(engine.where, "listen address", f"{expected}:{port}",
                      ", ".join(f"{a}:{port}" for a in addresses), "the server was started with another --host")

def test_engine_answers_from_the_agent_node(engine, measure, planned):
    answers = planned(ENGINE_ANSWERS)
    response, models = answers.models, answers.listed
    seen_from = f"(from {answers.via})"
    if response.status != 200:
        raise Failure(engine.where, f"GET /v1/models {seen_from} answered {response.status or 'nothing'}: "
                      f"{response.text[:200].strip()}", cause=serving.engine_answer_cause('/v1/models', response.status))
    if not (models and engine.spec.model in models):
        raise Failure(engine.where, f"models listed by GET /v1/models {seen_from}", engine.spec.model,
                      ", ".join(models or ()) or "none", "the server loaded another model folder")
    health = answers.health
    if health.status != 200:
        raise Failure(engine.where, f"GET /health {seen_from} answered {health.status or 'nothing'}, after "
                      "/v1/models answered", cause=serving.engine_answer_cause('/health', health.status))
    chat = answers.chat
    if chat.problem is not None:
        raise Failure(engine.where, f"a short streamed chat completion {seen_from} did not come whole: {chat.problem}, "
                      "although /v1/models and /health answered", cause=serving.engine_chat_cause(chat))
    if chat.tokens_per_s is not None:
        measure("tokens.direct", f"{engine.spec.model} on {engine.host.name}", chat.tokens_per_s, "tokens/s")
    if chat.ttft_s is not None:
        serving.judge_first_token(measure("first_token", f"{engine.spec.model} on {engine.host.name} (direct)",
                                          chat.ttft_s, "s"), engine.where)
