"""The kinds of thing a check runs on (a node, a lane, a pair of nodes, an engine, ...), in one
registry. Each kind declares its values in the cluster at a step, the id a value takes in the
test's name, and the subjects a value touches (nodes, interfaces, pairs of nodes), which the
report reads from here instead of guessing them from names.

A value is a tuple of names, node names first: ("thor-3", "mgbe1_0") is a lane of thor-3.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence, TypeVar

from rackproof.inventory.model import ClusterAtStep, Inventory


@dataclass(frozen=True)
class Subjects:
    nodes: tuple[str, ...] = ()
    interfaces: tuple[tuple[str, str], ...] = ()     # (node, interface): a lane, a CX7 interface, a bond
    pairs: tuple[tuple[str, str], ...] = ()          # (sender, receiver)

    def __or__(self, other: Subjects) -> Subjects:
        return Subjects(self.nodes + other.nodes, self.interfaces + other.interfaces, self.pairs + other.pairs)

    def in_order(self, inventory: Inventory) -> dict:
        """As results.json has them: each subject once, in inventory order."""
        order = {n.name: i for i, n in enumerate(inventory.nodes)}
        return {
            "nodes": sorted(set(self.nodes), key=order.__getitem__),
            "interfaces": [list(i) for i in sorted(set(self.interfaces), key=lambda i: (order[i[0]], i[1]))],
            "pairs": [list(p) for p in sorted(set(self.pairs), key=lambda p: (order[p[0]], order[p[1]]))],
        }


def _nodes(value: tuple, cluster: ClusterAtStep) -> Subjects:
    return Subjects(nodes=tuple(value))


def _first_node(value: tuple, cluster: ClusterAtStep) -> Subjects:
    return Subjects(nodes=(value[0],))


def _interface(value: tuple, cluster: ClusterAtStep) -> Subjects:
    return Subjects(nodes=(value[0],), interfaces=((value[0], value[1]),))


def _bond(value: tuple, cluster: ClusterAtStep) -> Subjects:
    return Subjects(nodes=(value[0],), interfaces=((value[0], cluster.node(value[0]).bond.name),))


def _pair(value: tuple, cluster: ClusterAtStep) -> Subjects:
    return Subjects(nodes=(value[0], value[1]), pairs=((value[0], value[1]),))


def _remote_and_agent(value: tuple, cluster: ClusterAtStep) -> Subjects:
    """The remote engine's node and the agent's, whose local engine it is compared with."""
    return Subjects(nodes=(value[0], cluster.agent.node))


@dataclass(frozen=True)
class Kind:
    name: str
    values: Callable[[ClusterAtStep], list[tuple]]
    touches: Callable[[tuple, ClusterAtStep], Subjects]
    name_value: Callable[[tuple], str] = ":".join
    whole_cluster: bool = False     # one value for the whole cluster: id "all", and --node does not narrow it

    def id(self, value: tuple) -> str:
        return "all" if self.whole_cluster else self.name_value(value)


T = TypeVar("T")


def derangements(items: Sequence[T]) -> list[list[tuple[T, T]]]:
    """Every ordered pair exactly once, in len(items) - 1 rounds: in round r, item i sends to
    item i + r (around), so each item sends once and receives once per round."""
    n = len(items)
    return [[(items[i], items[(i + r) % n]) for i in range(n)] for r in range(1, n)] if n > 1 else []


def covering_round(items: Sequence[T]) -> list[list[tuple[T, T]]]:
    """One round for a large rack: each item sends to the next (the first of `derangements`),
    so every node's sending and receiving side is measured once."""
    return derangements(items)[:1]


def rounds(kind: str, cluster: ClusterAtStep) -> list[list[tuple[str, str]]]:
    """The sender -> receiver pairs of a throughput kind, round by round (each node sends once
    and receives once in a round): every ordered pair on a small rack, one round above the
    inventory's size limit; the bond's lane-loss check takes one round (it disrupts)."""
    names = _names(cluster, lambda node: _ON_NETWORK[kind](cluster, node))
    if kind == "bond_pair" or len(names) > cluster.expect.all_pairs_max_nodes:
        return covering_round(names)
    return derangements(names)


_ON_NETWORK = {"link_pair": lambda c, n: n.address, "cx7_pair": lambda c, n: n.cx7, "bond_pair": lambda c, n: c.bonded(n)}


def _in_rounds(kind: str):
    return lambda cluster: [pair for rnd in rounds(kind, cluster) for pair in rnd]


def _local_and_remote(cluster: ClusterAtStep) -> list[tuple]:
    """(remote node, model): a model served on another node through the agent that also runs on
    the agent's own node, so the two rates can be compared (the chapter's step 6)."""
    if not cluster.agent:
        return []
    joined = {n.name for n in cluster.nodes}
    local = {e.model for e in cluster.engines if e.node == cluster.agent.node}
    return [(e.node, e.model) for e in cluster.engines
            if e.agent and e.node != cluster.agent.node and e.model in local and e.node in joined]


def _names(cluster: ClusterAtStep, keep=lambda node: True) -> list[str]:
    return [n.name for n in cluster.nodes if keep(n)]


def _joined_engines(cluster: ClusterAtStep, routed: bool) -> list[tuple]:
    joined = {n.name for n in cluster.nodes}
    return [(e.node, e.model) for e in cluster.engines if e.node in joined and (e.agent or not routed)]


def _pair_id(value: tuple) -> str:
    return f"{value[0]}->{value[1]}"


def _at_node_id(value: tuple) -> str:
    """A thing on a node (a model, an image): "THING@NODE"."""
    return f"{value[1]}@{value[0]}"


def _whole(names: list[str], at_least: int) -> list[tuple]:
    return [tuple(names)] if len(names) >= at_least else []


KINDS = {k.name: k for k in (
    Kind("node", lambda c: [(name,) for name in _names(c)], _first_node),
    Kind("cluster_node", lambda c: [(name,) for name in _names(c, lambda n: n.address)], _first_node),  # addressed
    Kind("bonded_node", lambda c: [(name,) for name in _names(c, c.bonded)], _bond),   # the node and its bond
    Kind("cx7_node", lambda c: [(name,) for name in _names(c, lambda n: n.cx7)], _first_node),
    # a node on a cluster network: its address (Thor) or CX7 addresses (Spark)
    Kind("network_node", lambda c: [(name,) for name in _names(c, lambda n: n.address or n.cx7)], _first_node),
    Kind("lane", lambda c: [(n.name, lane.name) for n, lane in c.lanes], _interface),
    Kind("cx7", lambda c: [(n.name, x.name) for n in c.nodes for x in n.cx7], _interface),
    Kind("pair", lambda c: [(a.name, b.name) for a, b in c.ordered_pairs], _pair, _pair_id),
    Kind("link_pair", _in_rounds("link_pair"), _pair, _pair_id),
    Kind("cx7_pair", _in_rounds("cx7_pair"), _pair, _pair_id),
    Kind("bond_pair", _in_rounds("bond_pair"), _pair, _pair_id),
    # checks of the whole cluster network, or of a collective across every CX7 node
    Kind("cluster_network", lambda c: _whole(_names(c, lambda n: n.address), 2), _nodes, whole_cluster=True),
    Kind("cx7_cluster", lambda c: _whole(_names(c, lambda n: n.cx7), 2) if c.expect.run_nccl else [], _nodes,
         whole_cluster=True),
    Kind("every_node", lambda c: _whole(_names(c), 1), _nodes, whole_cluster=True),
    # serving: engines of nodes that have joined, the agent (its node first)
    Kind("engine", lambda c: _joined_engines(c, routed=False), _first_node, _at_node_id),
    Kind("routed_engine", lambda c: _joined_engines(c, routed=True), _first_node, _at_node_id),
    Kind("agent", lambda c: [(c.agent.node,)] if c.agent and c.agent.node in _names(c) else [], _first_node),
    # the Spark head (node_0) holding the sparkrun definition; with two or more CX7 nodes, its multi-node path
    Kind("sparkrun_head", lambda c: [(c.nodes[0].name,)] if c.sparkrun and c.nodes else [], _first_node),
    # every node of a sparkrun cluster (judged from the head's setup check), the images its recipes need
    Kind("sparkrun_node", lambda c: [(name,) for name in _names(c)] if c.sparkrun else [], _first_node),
    Kind("sparkrun_image", lambda c: [(c.nodes[0].name, image) for image in c.sparkrun.images]
         if c.sparkrun and c.nodes else [], _first_node, _at_node_id),
    Kind("sparkrun_fabric", lambda c: [(c.nodes[0].name,)] if c.sparkrun and len(_names(c, lambda n: n.cx7)) > 1
         else [], _first_node),
    Kind("cx7_ssh_pair", lambda c: [(a.name, b.name) for a, b in c.ordered_pairs if a.cx7 and b.cx7], _pair,
         _pair_id),
    Kind("slurm_controller", lambda c: [(c.slurm.controller,)] if c.slurm and c.slurm.controller in _names(c) else [],
         _first_node),
    Kind("local_and_remote", _local_and_remote, _remote_and_agent, _at_node_id),
)}


def subjects(params: dict, cluster: ClusterAtStep) -> dict:
    """What a test with these parameters touched, in inventory order; parameters that are not
    kinds (a package name, a fault) touch nothing."""
    found = Subjects()
    for name, value in params.items():
        if name in KINDS and value is not None:
            found |= KINDS[name].touches(tuple(value), cluster)
    return found.in_order(cluster.inventory)
