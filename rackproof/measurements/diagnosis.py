"""The causes a failed measurement asks for: the plan's diagnosis phase, run by the controller
after every other phase, for the targets whose measured result shows the symptom (rackproof.
diagnosis decides which, and finds the cause); the others are asked nothing more. A judge that
fails names the entry it would need to know and reads it, as it reads its own measurement."""

from __future__ import annotations

from rackproof.measuring import diagnosis, plan, serving

from .engines import AGENT_COMPARISON, AGENT_STREAM
from .jobs import NODE_SLURM_CONTROLLERS, NODE_SLURM_JOB
from .lanes import BOND_FOUR_STREAMS, LANE_ONE_STREAM
from .logins import PAIR_SSH


def _through_agent(engine, chat, ctx: plan.Context) -> str:
    return diagnosis.through_agent_cause(ctx.hosts[ctx.cluster.agent.node], chat, ctx.cluster.engine_url(engine.spec))


# a lane's one stream under its floor: packets of the MTU over each of the sender's bond members
LANE_ONE_STREAM_PATH = plan.diagnosis("lane.one_stream.path", [(LANE_ONE_STREAM, diagnosis.slow_one_stream)],
                                      lambda pair, runs, ctx: diagnosis.one_stream_path(pair, runs, ctx.cluster))
# a bonded rate under its floor: the members' link on both nodes, packets of the MTU per member, the streams
BOND_FOUR_STREAMS_CAUSE = plan.diagnosis("bond.four_streams.cause", [(BOND_FOUR_STREAMS, diagnosis.slow_bond)],
                                         lambda pair, runs, ctx: diagnosis.bond_cause(pair, runs, ctx.cluster))
# the controller not UP, or the node's jobs refused: a credential of the node decoded on the controller
NODE_MUNGE_REFUSAL = plan.diagnosis("node.munge_refusal", [(NODE_SLURM_CONTROLLERS, diagnosis.controller_not_up),
                                                            (NODE_SLURM_JOB, diagnosis.job_refused)],
                                    lambda node, measured, ctx: diagnosis.munge_refusal(node, ctx.cluster))
# a chat through the agent not whole: a silent one asks the engine's /health from the agent's node
AGENT_STREAM_CAUSE = plan.diagnosis("agent.stream.cause", [(AGENT_STREAM, diagnosis.chat_broken)],
                                    lambda engine, runs, ctx: _through_agent(engine, serving.best_chat(runs), ctx))
AGENT_COMPARISON_CAUSE = plan.diagnosis("agent.comparison.cause", [(AGENT_COMPARISON, diagnosis.compared_chat_broken)],
                                        lambda engine, runs, ctx: _through_agent(
                                            engine, serving.best_comparison(runs).through_agent, ctx))
# an ssh of the mesh that did not reach its peer's name: where the sender's resolver sends that name
PAIR_SSH_NAME_LEADS = plan.diagnosis("pair.ssh.name_leads", [(PAIR_SSH, diagnosis.name_unreached)],
                                     lambda pair, result, ctx: diagnosis.where_the_name_leads(pair, result))
