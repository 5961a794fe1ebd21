"""Fixtures that turn the inventory into test items: one per node, lane or pair of nodes.

Ids read like the checklist: test_lane_speed[thor-3:mgbe0_0], test_passwordless_ssh[thor-1->thor-2].
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from .options import INVENTORY, RECORDING, SCOPE, leave_out, run_step
from rackproof import schedule
from rackproof.host import Host, connect
from rackproof.kinds import KINDS
from rackproof.inventory import ClusterAtStep, Cx7Interface, Engine, Inventory, Lane
from rackproof.remote import EvidenceLog

EVIDENCE_LOG = pytest.StashKey[EvidenceLog]()
NOTHING_TO_CHECK = pytest.mark.nothing_to_check


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


def parametrize(metafunc: pytest.Metafunc) -> None:
    """One item per value of each parameter kind the test asks for, at the run's step and nodes."""
    config = metafunc.config
    inventory: Inventory | None = config.stash.get(INVENTORY, None)
    if inventory is None:
        return
    only = set(config.getoption("node"))
    cluster = inventory.at(run_step(config))
    for kind in KINDS.values():
        if kind.name in metafunc.fixturenames:
            values = kind.values(cluster)
            if only and not kind.whole_cluster:
                values = [v for v in values if only & set(v)]
            if values:
                metafunc.parametrize(kind.name, values, ids=[kind.id(v) for v in values], indirect=True)
            else:   # one item, marked: drop_empty takes it out of the run and into the scope list
                metafunc.parametrize(kind.name, [pytest.param(None, marks=NOTHING_TO_CHECK)], ids=["nothing"],
                                     indirect=True)


def drop_empty(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A check with nothing to check at this step (no lanes on a Spark, one node only) is out
    of scope, not a skip: it goes to the report's scope list."""
    empty = [item for item in items if item.get_closest_marker(NOTHING_TO_CHECK.name)]
    for item in empty:
        config.stash[SCOPE].append((item.originalname, "nothing in the inventory it applies to at this step"))
    if empty:
        leave_out(config, empty)
        items[:] = [item for item in items if not item.get_closest_marker(NOTHING_TO_CHECK.name)]


@pytest.fixture(scope="session")
def inventory(pytestconfig: pytest.Config) -> ClusterAtStep:
    """The cluster as it stands at the run's step (--step, else finished)."""
    return pytestconfig.stash[INVENTORY].at(run_step(pytestconfig))


@pytest.fixture(scope="session")
def evidence_log(pytestconfig: pytest.Config) -> EvidenceLog:
    return pytestconfig.stash.setdefault(EVIDENCE_LOG, EvidenceLog())


@pytest.fixture(scope="session")
def hosts(pytestconfig: pytest.Config, evidence_log: EvidenceLog):
    made = connect(pytestconfig.stash[INVENTORY], evidence_log, replay=pytestconfig.stash[RECORDING],
                   record=pytestconfig.getoption("record"))
    yield made
    for host in made.values():
        host.remote.close()


def _node(request, hosts) -> Host:
    return hosts[request.param[0]]


node = pytest.fixture(_node, name="node")
cluster_node = pytest.fixture(_node, name="cluster_node")
bonded_node = pytest.fixture(_node, name="bonded_node")
cx7_node = pytest.fixture(_node, name="cx7_node")


def _nodes(request, hosts) -> list[Host]:
    return [hosts[name] for name in request.param]


cluster_network = pytest.fixture(_nodes, name="cluster_network")
cx7_cluster = pytest.fixture(_nodes, name="cx7_cluster")
every_node = pytest.fixture(_nodes, name="every_node")
agent = pytest.fixture(_node, name="agent")  # the agent's node


@dataclass
class EngineTarget:
    host: Host          # the engine's node
    spec: Engine
    url: str            # as the agent's node reaches it

    @property
    def where(self) -> str:
        return f"{self.spec.model} on {self.host.name} ({self.url.removeprefix('http://')})"


def _engine(request, hosts, inventory: ClusterAtStep) -> EngineTarget:
    node_name, model = request.param
    spec = next(e for e in inventory.engines if e.node == node_name and e.model == model)
    return EngineTarget(hosts[node_name], spec, inventory.engine_url(spec))


engine = pytest.fixture(_engine, name="engine")
routed_engine = pytest.fixture(_engine, name="routed_engine")
local_and_remote = pytest.fixture(_engine, name="local_and_remote")  # the remote one of the two


@pytest.fixture
def lane(request, hosts, inventory: ClusterAtStep) -> LaneTarget:
    node_name, lane_name = request.param
    spec = inventory.node(node_name)
    lane_spec = spec.lane(lane_name)
    return LaneTarget(hosts[node_name], lane_spec, inventory.where(spec, lane_spec))


@pytest.fixture
def pair(request, hosts) -> Pair:
    src, dst = request.param
    return Pair(hosts[src], hosts[dst])


def lock_dir_of(inventory: Inventory):
    """The folder of the cluster's node locks, shared by every run on that cluster."""
    return schedule.lock_dir(f"{inventory.cluster.name}:{sorted(n.name for n in inventory.nodes)}")


def remove_locks(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput") and INVENTORY in config.stash:
        schedule.remove_when_idle(lock_dir_of(config.stash[INVENTORY]))


@pytest.fixture(scope="session")
def node_locks(pytestconfig: pytest.Config):
    # every node of the inventory, joined or not: one folder for the cluster, whatever the step
    return lock_dir_of(pytestconfig.stash[INVENTORY])


def _exclusive_pair(request, hosts, node_locks):
    """A sender -> receiver pair for throughput; no other throughput test touches either node
    meanwhile (in this process or another xdist worker)."""
    src, dst = request.param
    with schedule.holding(node_locks, [src, dst]):
        yield Pair(hosts[src], hosts[dst])


link_pair = pytest.fixture(_exclusive_pair, name="link_pair")
cx7_pair = pytest.fixture(_exclusive_pair, name="cx7_pair")
bond_pair = pytest.fixture(_exclusive_pair, name="bond_pair")


@pytest.fixture(autouse=True)
def _whole_rack(request, pytestconfig: pytest.Config):
    """A disruptive check runs with nothing else running on the rack, in any xdist worker:
    a lane it takes down must not fail someone else's check."""
    if INVENTORY not in pytestconfig.stash:
        yield
        return
    alone = request.node.get_closest_marker("disruptive") is not None
    with schedule.holding(lock_dir_of(pytestconfig.stash[INVENTORY]), [schedule.WHOLE_RACK], shared=not alone):
        yield


@pytest.fixture
def cx7(request, hosts, inventory: ClusterAtStep) -> Cx7Target:
    node_name, iface = request.param
    return Cx7Target(hosts[node_name], next(c for c in inventory.node(node_name).cx7 if c.name == iface))
