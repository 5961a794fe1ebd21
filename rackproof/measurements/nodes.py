"""What each node is: its name, addresses, routes, resolver, software and settings, as the plan reads them."""

from __future__ import annotations

from rackproof.judging import addressing, sharing

from rackproof.measuring import pathmtu, plan

from rackproof.ticket import snapshot
from rackproof.measuring.plan import Phase
from rackproof.probes.getent import GETENT_HOSTS
from rackproof.probes.jetson import DPKG_VERSIONS, JETSON_CLOCKS, NV_TEGRA_RELEASE, NVPMODEL
from rackproof.probes.nvidia_smi import GPUS, NVIDIA_SMI
from rackproof.probes.sockets import LISTENING_PROCESSES
from rackproof.probes.sysctl import SYSCTL
from rackproof.probes.system import HOSTNAME, LOGIN
from rackproof.judging.versions import JETPACK_PACKAGES


def reads(probe):
    """What a node's probe reads, with no values: the most common entry."""
    return lambda node, ctx: node.read(probe)


def _packages(node, ctx: plan.Context) -> dict[str, str]:
    """The versions of a Thor's engine packages on a node (dpkg), one package at a time; a
    package not installed is not in it."""
    return {package: version for name in JETPACK_PACKAGES
            for package, version in node.read(DPKG_VERSIONS, packages=[name]).items()}


def _names(node, ctx: plan.Context) -> dict:
    """What the node's resolver answers for every addressed node's name."""
    return node.read(GETENT_HOSTS, names=[n.name for n in ctx.cluster.nodes if n.address])


def _routes(node, ctx: plan.Context) -> dict:
    """The node's route to each addressed peer."""
    return node.route_to([n.ip for n in ctx.cluster.nodes if n.address and n.name != node.name])


def _listening_openly(node, ctx: plan.Context) -> list:
    """What listens on the node's cluster addresses or on every address, beyond its engines' and
    the agent's ports and what the inventory allows."""
    cluster = ctx.cluster
    ports = {e.port for e in cluster.engines if e.node == node.name}
    if cluster.agent and cluster.agent.node == node.name:
        ports.add(cluster.agent.port)
    return sharing.listening_openly(lambda: node.read(LISTENING_PROCESSES), lambda: node.servers.on(node.name),
                                    set(addressing.cluster_addresses([node.spec])), ports,
                                    sharing.allowed_programs(cluster))


NODE_HOSTNAME = plan.each("node.hostname", Phase.FACTS, "node", reads(HOSTNAME))
NODE_INTERFACES = plan.each("node.interfaces", Phase.FACTS, "cluster_node", lambda node, ctx: node.interfaces())
NODES_INTERFACES = plan.of_every_node("nodes.interfaces", Phase.FACTS, "cluster_network",
                                      lambda node, ctx: node.interfaces())
NODE_NAMES = plan.each("node.names", Phase.FACTS, "cluster_node", _names)
NODE_ROUTES = plan.each("node.routes", Phase.FACTS, "cluster_node", _routes)
NODE_GPUS = plan.each("node.gpus", Phase.FACTS, "node", reads(GPUS))
NODE_FORWARDING = plan.each("node.forwarding", Phase.FACTS, "network_node", reads(SYSCTL))
NODE_LISTENING_OPENLY = plan.each("node.listening_openly", Phase.FACTS, "network_node", _listening_openly)
NODE_CLOCKS = plan.each("node.clocks", Phase.FACTS, "node",
                        lambda node, ctx: node.read(JETSON_CLOCKS) if ctx.cluster.expect.clocks_locked else None)
NODES_POWER_MODE = plan.of_every_node("nodes.power_mode", Phase.FACTS, "every_node", reads(NVPMODEL))
NODES_L4T_RELEASE = plan.of_every_node("nodes.l4t_release", Phase.FACTS, "every_node", reads(NV_TEGRA_RELEASE))
NODES_GPU_DRIVER = plan.of_every_node("nodes.gpu_driver", Phase.FACTS, "every_node", reads(NVIDIA_SMI))
NODES_PACKAGES = plan.of_every_node("nodes.packages", Phase.FACTS, "every_node", _packages)
NODE_PEER_PINGS = plan.each("node.peer_pings", Phase.FACTS, "cluster_node",
                            lambda node, ctx: node.ping(addressing.peers(ctx.cluster.nodes, node.name)))
NODE_PATH_MTU = plan.each("node.path_mtu", Phase.FACTS, "cluster_node",
                          lambda node, ctx: pathmtu.problems_of(node, ctx.cluster, ctx.hosts))
NODE_SNAPSHOT = plan.each("node.snapshot", Phase.FACTS, "node",
                          lambda node, ctx: snapshot.node_facts(ctx.cluster.cluster.platform, node.spec, node))
NODE_LOGIN = plan.each("node.login", Phase.FACTS, "node", reads(LOGIN))
