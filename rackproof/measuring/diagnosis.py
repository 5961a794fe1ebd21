"""Why a measurement failed, found by the controller in the plan's diagnosis phase, never by a
judge (with -n a worker opens no connection, on a failing rack too).

Each diagnosis pairs a symptom, read from what the plan measured (`shows`: a rate under its
floor, a controller not UP, a job refused, a chat that did not come whole, an ssh that did not
reach its peer's name), with what is then asked of the nodes of the targets that show it, and of
no others (`find`: packets of the MTU per bond member, the members' link, a munge credential
decoded on the controller, the engine's /health from the agent's node, where the name leads).
rackproof.measurements.diagnosis makes them plan entries; a judge reads the one it needs.
"""

from __future__ import annotations

from rackproof.measuring import bondrate, munge, pathmtu, serving, traffic
from rackproof.nodes.host import Host
from rackproof.inventory.model import ClusterAtStep
from rackproof.probes.getent import GETENT_HOSTS
from rackproof.probes.iperf import IperfResult
from rackproof.probes.sshcheck import unreached_host
from rackproof.inventory.references import measured
from rackproof.measuring.targets import Pair


def under_floor(name: str, runs: tuple[IperfResult, ...], cluster: ClusterAtStep, **counts) -> bool:
    """The best run's rate fails its reference, as the judge's `measure` finds it."""
    return measured(name, "", traffic.best(runs).received_bps, "bit/s", cluster.expect, **counts).verdict == "failed"


def slow_one_stream(pair: Pair, runs: tuple[IperfResult, ...], cluster: ClusterAtStep) -> bool:
    return under_floor("lane.rate", runs, cluster)


def one_stream_path(pair: Pair, runs: tuple[IperfResult, ...], cluster: ClusterAtStep) -> pathmtu.Blocked | None:
    """Whether packets of the MTU cross from the sender to the receiver over each bond member."""
    return pathmtu.blocked(pair.src, pair.dst.spec, cluster)


def slow_bond(pair: Pair, runs: tuple[IperfResult, ...] | None, cluster: ClusterAtStep) -> bool:
    return runs is not None and under_floor("bond.rate", runs, cluster,
                                            lanes=bondrate.lanes_of(pair.src.spec, pair.dst.spec))


def bond_cause(pair: Pair, runs: tuple[IperfResult, ...], cluster: ClusterAtStep) -> str:
    """Why the bonded rate fell short: its members' link and speed, packets of the MTU per member,
    the streams (bondrate.BondedRate.cause)."""
    return bondrate.BondedRate.of(pair.src, pair.dst, cluster, runs).cause(cluster.expect.lane_speed_mbps, cluster)


def controller_not_up(node: Host, controllers, cluster: ClusterAtStep) -> bool:
    return not any(c.up for c in controllers)


def job_refused(node: Host, job: tuple, cluster: ClusterAtStep) -> bool:
    """Slurm says the node does not respond, or the one-node job on it failed."""
    state, result = job
    if state is None:
        return False
    if not state.takes_jobs:
        return not state.responding
    return not result.ok or result.stdout.strip() != node.name


def munge_refusal(node: Host, cluster: ClusterAtStep) -> str | None:
    """A credential made on the node decoded on the controller: why they refuse each other, or None."""
    return munge.refused_by_munge(node, cluster.slurm.controller, cluster.ssh.connect_timeout)


def chat_broken(engine, runs: tuple[serving.Chat, ...], cluster: ClusterAtStep) -> bool:
    """The chat through the agent that is judged did not come whole."""
    return serving.best_chat(runs).problem is not None


def compared_chat_broken(engine, runs: tuple[serving.Comparison, ...], cluster: ClusterAtStep) -> bool:
    """The chat through the agent of the comparison judged did not come whole."""
    return serving.best_comparison(runs).through_agent.problem is not None


def through_agent_cause(agent: Host, chat: serving.Chat, engine_url: str) -> str:
    """Why a chat through the agent did not generate; a silent one asks the engine's /health
    from the agent's node."""
    return serving.agent_chat_cause(agent, chat, engine_url)


def name_unreached(pair: Pair, result, cluster: ClusterAtStep) -> bool:
    return not result.ok and unreached_host(result.stderr) is not None


def where_the_name_leads(pair: Pair, result) -> tuple[str, ...]:
    """The addresses the sender's resolver gives the name its ssh did not reach."""
    name = unreached_host(result.stderr)
    return tuple(pair.src.read(GETENT_HOSTS, names=[name]).get(name, ()))
