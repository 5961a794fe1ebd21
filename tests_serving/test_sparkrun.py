"""A Spark cluster launched with sparkrun (the Cordatus Sparkrun-cluster page): the head node,
node_0, runs the sparkrun CLI and holds the cluster definition, whose hosts are the inventory's
nodes, head first and the workers in the inventory's order ("their order is the node order");
and the multi-node path uses CX7 addresses, not the Wi-Fi or management ones (the Spark guide's
minimal acceptance, item 4)."""

import pytest

from rackproof import sparkrun
from rackproof.capabilities import MULTI_NODE, SPARKRUN
from rackproof.failure import Failure
from rackproof.probes.sparkrun import CLUSTER_SHOW, SPARKRUN_VERSION

pytestmark = [pytest.mark.platform("spark"), pytest.mark.needs("sparkrun"), pytest.mark.step(5)]


def _definition(head, inventory):
    """The definition on the head; the check is left to test_sparkrun_runs_on_the_head's
    failure when there is no sparkrun to ask."""
    if head.read(SPARKRUN_VERSION) is None:
        pytest.skip(f"sparkrun is not on {head.name} (test_sparkrun_runs_on_the_head fails): "
                    "its cluster definition is read once it is installed")
    name = inventory.sparkrun.cluster
    definition = head.read(CLUSTER_SHOW, cluster=name)
    if definition is None:
        raise Failure(head.name, f"no sparkrun cluster {name} (sparkrun cluster show {name})",
                      cause=f"define it on the head: sparkrun cluster create {name} --hosts HEAD,WORKER,... "
                            "(CX7 addresses, the head first)")
    return definition


def _placed(definition, hosts, inventory):
    return sparkrun.placed(definition.hosts, inventory.nodes,
                           {name: host.interfaces() for name, host in hosts.items()})


@pytest.mark.capability(SPARKRUN)
def test_sparkrun_runs_on_the_head(sparkrun_head):
    if sparkrun_head.read(SPARKRUN_VERSION) is None:
        raise Failure(sparkrun_head.name, "sparkrun is not installed on the head (node_0): nothing can be launched",
                      cause="install it on the head with Python 3.12 (pip install sparkrun, or the Cordatus wizard's "
                            "'Install now'), on the login's PATH")


@pytest.mark.capability(SPARKRUN)
def test_the_definition_lists_the_nodes_head_first(sparkrun_head, hosts, inventory):
    definition = _definition(sparkrun_head, inventory)
    found = [h.node or f"{h.written} (no node of the inventory)" for h in _placed(definition, hosts, inventory)]
    expected = [n.name for n in inventory.nodes]
    if found != expected:
        raise Failure(f"{sparkrun_head.name} sparkrun cluster {definition.name}", "node order (head first)",
                      ", ".join(expected), ", ".join(found),
                      "the head (node_0) serves the API and the workers' order is the node order: "
                      f"sparkrun cluster update {definition.name} --hosts "
                      + ",".join(n.cx7[0].ip if n.cx7 else n.name for n in inventory.nodes))


@pytest.mark.capability(MULTI_NODE)
def test_the_multi_node_path_uses_cx7_addresses(sparkrun_fabric, hosts, inventory):
    definition = _definition(sparkrun_fabric, inventory)
    off_cx7 = [h for h in _placed(definition, hosts, inventory) if not h.cx7]
    if off_cx7:
        raise Failure(f"{sparkrun_fabric.name} sparkrun cluster {definition.name}", "hosts not on CX7: " + ", ".join(
            f"{h.written} ({h.node or 'no node of the inventory'}"
            + (f", on {h.interface}" if h.interface else "") + ")" for h in off_cx7),
            cause="the definition names the Wi-Fi or management addresses, so model traffic between the nodes "
                  "leaves the CX7 link: list each node's CX7 address")
