"""What a check's parameter is: a node, a lane, a pair, a CX7 interface, an engine, built from
its kind's value (rackproof.inventory.kinds) and the run's hosts. The suite's fixtures give them to the
checks; the measurement plan (rackproof.measuring.plan) measures them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from rackproof.nodes.host import Host
from rackproof.inventory.model import ClusterAtStep, Cx7Interface, Engine, Lane


@dataclass
class LaneTarget:
    host: Host
    spec: Lane
    where: str          # "thor-3 mgbe0_0 (switch sw-25g port 9, cable thor-3/1)"

    @property
    def name(self) -> str:
        return self.spec.name


@dataclass
class Pair:
    src: Host
    dst: Host

    @property
    def where(self) -> str:
        return f"{self.src.name} -> {self.dst.name}"


@dataclass
class Cx7Target:
    host: Host
    spec: Cx7Interface

    @property
    def where(self) -> str:
        return f"{self.host.name} {self.spec.name} ({self.spec.rdma_device}, {self.spec.address})"


@dataclass
class HeadImage:
    host: Host          # the head node (node_0), whose runtime sparkrun launches from
    image: str


@dataclass
class EngineTarget:
    host: Host          # the engine's node
    spec: Engine
    url: str            # as the agent's node reaches it

    @property
    def where(self) -> str:
        return f"{self.spec.model} on {self.host.name} ({self.url.removeprefix('http://')})"


def _engine(param: tuple, hosts, cluster: ClusterAtStep) -> EngineTarget:
    node_name, model = param
    spec = next(e for e in cluster.engines if e.node == node_name and e.model == model)
    return EngineTarget(hosts[node_name], spec, cluster.engine_url(spec))


def _lane(param: tuple, hosts, cluster: ClusterAtStep) -> LaneTarget:
    node_name, lane_name = param
    spec = cluster.node(node_name)
    return LaneTarget(hosts[node_name], spec.lane(lane_name), cluster.where(spec, spec.lane(lane_name)))


def _cx7(param: tuple, hosts, cluster: ClusterAtStep) -> Cx7Target:
    node_name, iface = param
    return Cx7Target(hosts[node_name], next(x for x in cluster.node(node_name).cx7 if x.name == iface))


def _node(param: tuple, hosts, cluster: ClusterAtStep) -> Host:
    return hosts[param[0]]


def _nodes(param: tuple, hosts, cluster: ClusterAtStep) -> list[Host]:
    return [hosts[name] for name in param]


def _pair(param: tuple, hosts, cluster: ClusterAtStep) -> Pair:
    return Pair(hosts[param[0]], hosts[param[1]])


# what a value of each kind is to a check (rackproof.inventory.kinds names the kinds)
TARGETS: dict[str, Callable[[tuple, dict, ClusterAtStep], object]] = {
    **dict.fromkeys(("node", "cluster_node", "bonded_node", "cx7_node", "network_node", "agent", "slurm_controller",
                     "sparkrun_head", "sparkrun_fabric", "sparkrun_node"), _node),
    **dict.fromkeys(("cluster_network", "cx7_cluster", "every_node"), _nodes),
    **dict.fromkeys(("engine", "routed_engine", "local_and_remote"), _engine),   # local_and_remote: the remote one
    **dict.fromkeys(("pair", "cx7_ssh_pair", "link_pair", "cx7_pair", "bond_pair"), _pair),
    "lane": _lane,
    "cx7": _cx7,
    "sparkrun_image": lambda param, hosts, cluster: HeadImage(hosts[param[0]], param[1]),
}


def target(kind: str, param: tuple, hosts: dict[str, Host], cluster: ClusterAtStep):
    """The target a check of `kind` gets for the value `param`."""
    return TARGETS[kind](tuple(param), hosts, cluster)
