"""The engines and the agent: what listens, the engines' answers, the agent's keys, models and streams, and a remote model beside the local one."""

from __future__ import annotations

from rackproof.measuring import plan, serving
from rackproof.measuring.plan import Phase
from rackproof.inventory.references import reference
from rackproof.probes import agent as agent_probes
from rackproof.probes.sockets import LISTENING


def _agent_url(ctx: plan.Context) -> str:
    return f"http://{ctx.cluster.agent.listen}"


def _without_the_key(agent, ctx: plan.Context) -> dict:
    """The agent's answer to a request with no key and to one with a wrong key."""
    return {auth.label: serving.get(agent, f"{_agent_url(ctx)}/v1/models", auth)
            for auth in (serving.NO_KEY, serving.bearer(serving.wrong_key(), "a wrong key"))}


def _through_agent(engine, ctx: plan.Context) -> serving.Chat:
    agent = ctx.cluster.agent
    return serving.chat(ctx.hosts[agent.node], f"http://{agent.listen}", engine.spec.model, ctx.cluster.expect,
                        serving.bearer(ctx.access_key(), "the access key"))


def _streamed(engine, ctx: plan.Context) -> tuple[serving.Chat, ...]:
    """The model through the agent; once more when under the engine's tokens/s floor."""
    return serving.once_more_if_short(lambda: _through_agent(engine, ctx),
                                      serving.short_chat(engine.spec.tokens_per_s_floor))


def _compared(engine, ctx: plan.Context) -> tuple[serving.Comparison, ...]:
    """The model on another node through the agent, then the same model on the agent's node;
    once more when the ratio fell under remote_tokens_ratio_floor."""
    agent = ctx.cluster.agent.node
    local = next(e for e in ctx.cluster.engines if e.node == agent and e.model == engine.spec.model)
    return serving.once_more_if_short(lambda: serving.Comparison(_through_agent(engine, ctx), serving.chat(
        ctx.hosts[agent], ctx.cluster.engine_url(local), local.model, ctx.cluster.expect)),
        serving.short_comparison(reference("remote_ratio").bound(ctx.cluster.expect)))


ENGINE_LISTENERS = plan.each("engine.listeners", Phase.FACTS, "engine", lambda engine, ctx: engine.host.read(LISTENING))
AGENT_PROCESS = plan.each("agent.process", Phase.FACTS, "agent", lambda agent, ctx: agent.read(
    agent_probes.AGENT_PROCESS, program=ctx.cluster.agent.process))
AGENT_WITHOUT_THE_KEY = plan.each("agent.without_the_key", Phase.FACTS, "agent", _without_the_key)
AGENT_MODELS = plan.each("agent.models", Phase.FACTS, "agent", lambda agent, ctx: serving.models(
    agent, _agent_url(ctx), serving.bearer(ctx.access_key(), "the access key")))
ENGINE_ANSWERS = plan.one_per_node("engine.answers", Phase.SERVING, "engine", lambda engine, ctx: serving.engine_answers(
    ctx.hosts[ctx.cluster.agent.node] if ctx.cluster.agent else engine.host, engine.url, engine.spec.model,
    ctx.cluster.expect))
AGENT_STREAM = plan.one_per_node("agent.stream", Phase.SERVING, "routed_engine", _streamed)
# both engines of a comparison in turn, and one comparison at a time (they share the agent's node's engine)
AGENT_COMPARISON = plan.one_per_node("agent.comparison", Phase.SERVING, "local_and_remote",
                                     _compared, shares=lambda value: "the agent's node")
