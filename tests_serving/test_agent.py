"""Step 6: thor-tigress-agent on the head node checks the access key and routes each model named
by an `--engine MODEL=HOST:PORT` to its engine; tokens per second through it are recorded, and
a model served on another node keeps up with the same model on the agent's own node."""

import pytest

from rackproof.judging import capabilities, serving
from rackproof.judging.failure import Failure, judge
from rackproof.measurements.diagnosis import AGENT_COMPARISON_CAUSE, AGENT_STREAM_CAUSE
from rackproof.measuring.serving import best_chat, best_comparison
from rackproof.measurements.engines import AGENT_COMPARISON, AGENT_MODELS, AGENT_PROCESS, AGENT_STREAM, \
    AGENT_WITHOUT_THE_KEY
from rackproof.probes.agent import DEFAULT_LISTEN

pytestmark = pytest.mark.step(6)

AGENT_CAPABILITY = pytest.mark.capability("the agent: one address and one key for every model", blocks=True)


@AGENT_CAPABILITY
def test_agent_routes_exactly_the_inventory_engines(agent, inventory, planned):
    process = planned(AGENT_PROCESS)
    if not process:
        raise Failure(agent.name, f"no {inventory.agent.process} process is running", cause="it was not started, "
                      "or exited (a bad --engine argument, the port already taken)")
    found = dict(process.engines)
    wanted = {e.model: f"{inventory.engine_flag_host(e)}:{e.port}" for e in inventory.engines if e.agent}
    problems = [f"missing --engine {m}={t}" for m, t in wanted.items() if m not in found]
    problems += [f"--engine {m}={found[m]} points elsewhere (expected {m}={t})"
                 for m, t in wanted.items() if m in found and found[m] != t]
    problems += [f"extra --engine {m}={t} (not in the inventory)" for m, t in found.items() if m not in wanted]
    duplicated = [m for m, _ in process.engines if [x for x, _ in process.engines].count(m) > 1]
    problems += [f"--engine {m} given more than once" for m in sorted(set(duplicated))]
    if problems:
        raise Failure(f"{agent.name} {inventory.agent.process} (pid {process.pid})", "; ".join(problems))
    if (process.listen or DEFAULT_LISTEN) != inventory.agent.listen:
        raise Failure(f"{agent.name} {inventory.agent.process}", "--listen", inventory.agent.listen,
                      process.listen or f"none given, so its default {DEFAULT_LISTEN}",
                      "the agent was started with another --listen, or without one")

@AGENT_CAPABILITY
@pytest.mark.parametrize("auth", ["no key", "a wrong key"])
def test_agent_refuses_requests_without_the_key(agent, inventory, auth, planned):
    response = planned(AGENT_WITHOUT_THE_KEY)[auth]
    if response.status not in (401, 403):
        raise Failure(f"{agent.name} agent at {inventory.agent.listen}",
                      f"a request with {auth} was answered {response.status or 'nothing'}",
                      cause=serving.key_refusal_cause(response.status))

@AGENT_CAPABILITY
def test_agent_lists_every_model_with_the_key(agent, inventory, planned):
    response, models = planned(AGENT_MODELS)
    if response.status != 200:
        raise Failure(f"{agent.name} agent at {inventory.agent.listen}", f"GET /v1/models with the key answered "
                      f"{response.status or 'nothing'}: {response.text[:200].strip()}",
                      cause=serving.agent_answer_cause(response.status, agent.name))
    wanted = [e.model for e in inventory.engines if e.agent]
    missing = [m for m in wanted if m not in (models or ())]
    if missing:
        raise Failure(f"{agent.name} agent", "models listed with the key", ", ".join(wanted),
                      ", ".join(models or ()) or "none", "a missing --engine entry")

def test_agent_streams_each_model(routed_engine, inventory, hosts, measure, guards, planned):
    model = routed_engine.spec.model
    guards(*capabilities.serving(model))
    agent = hosts[inventory.agent.node]
    runs = planned(AGENT_STREAM)
    chat = best_chat(runs)
    where = f"{model} through the agent on {agent.name} (-> {inventory.engine_flag_host(routed_engine.spec)}:" \
            f"{routed_engine.spec.port})"
    if chat.problem is not None:
        raise Failure(where, f"the streamed chat completion did not come whole: {chat.problem}",
                      cause=planned(AGENT_STREAM_CAUSE))
    if chat.ttft_s is not None:
        serving.judge_first_token(measure("first_token", where, chat.ttft_s, "s"), where)
    if chat.tokens_per_s is None:
        raise Failure(where, f"no rate can be measured from an answer of {chat.stream.tokens} token(s)")
    for other in runs:   # the chat a second one replaced, kept for the report
        if other is not chat and other.tokens_per_s is not None:
            measure("tokens.other_attempt", where, other.tokens_per_s, "tokens/s")
    m = measure("tokens", where, chat.tokens_per_s, "tokens/s", floor=routed_engine.spec.tokens_per_s_floor)
    judge(m, where, "the engine's node is busy, in a lower power mode (nvpmodel), or the engine was built for "
          "other settings", also=f"the better of {len(runs)} chats" if len(runs) > 1 else "")

def test_remote_model_keeps_up_with_the_local_one(local_and_remote, inventory, hosts, measure, guards, planned):
    """The chapter's step 6: the model through the agent from another node vs the same model on
    the agent's node."""
    remote = local_and_remote.spec
    guards(*capabilities.serving(remote.model))
    agent = hosts[inventory.agent.node]
    runs = planned(AGENT_COMPARISON)
    run = best_comparison(runs)
    through_agent, on_agent_node = run.through_agent, run.on_agent_node
    if through_agent.problem is not None:
        raise Failure(f"{remote.model} on {remote.node} through the agent", f"no rate to compare: "
                      f"{through_agent.problem}", cause=planned(AGENT_COMPARISON_CAUSE))
    if on_agent_node.problem is not None:
        raise Failure(f"{remote.model} on {agent.name}", f"no rate to compare: {on_agent_node.problem}",
                      cause=serving.engine_chat_cause(on_agent_node))
    if run.ratio is None:
        raise Failure(remote.model, "no rate to compare: a rate cannot be measured from an answer of one token")
    subject = f"{remote.model}: {remote.node} via agent / {agent.name}"
    for other in runs:   # the comparison a second one replaced, kept for the report
        if other is not run and other.ratio is not None:
            measure("remote_ratio.other_attempt", subject, other.ratio, "ratio")
    measure("tokens", f"{remote.model} on {remote.node} via the agent", through_agent.tokens_per_s, "tokens/s")
    measure("tokens", f"{remote.model} on {agent.name} (local)", on_agent_node.tokens_per_s, "tokens/s")
    m = measure("remote_ratio", subject, run.ratio, "ratio")
    judge(m, f"{remote.model} on {remote.node} through the agent", f"{remote.node} runs another JetPack or power "
          "mode, its engine was built with other settings, or it is busy with other work",
          also=f"{through_agent.tokens_per_s:.1f} tokens/s through the agent, {on_agent_node.tokens_per_s:.1f} on "
               f"{agent.name}" + (f"; the better of {len(runs)} comparisons" if len(runs) > 1 else ""))
