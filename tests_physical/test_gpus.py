"""Step 5, what serving needs: every node at full speed, its GPUs seen by their driver, every Thor in
the same power mode and, where the inventory asks, with its clocks locked."""

import pytest

from rackproof.judging import gpus
from rackproof.judging.capabilities import FULL_SPEED
from rackproof.measurements.nodes import NODES_POWER_MODE, NODE_CLOCKS, NODE_GPUS

pytestmark = [pytest.mark.step(5), pytest.mark.capability(FULL_SPEED)]


def test_gpus_seen_by_the_driver(node, inventory, planned):
    gpus.gpus_seen(node.name, planned(NODE_GPUS), inventory.expect)


@pytest.mark.platform("thor")
def test_same_power_mode(every_node, inventory, planned):
    if problem := gpus.same_power_mode(planned(NODES_POWER_MODE), inventory.expect.power_mode):
        raise problem


@pytest.mark.platform("thor")
def test_clocks_locked(node, inventory, planned, facts):
    if not inventory.expect.clocks_locked:
        pytest.skip("the inventory does not ask for locked clocks ([expect] clocks_locked)")
    if left_out := gpus.clocks_locked(node.name, planned(NODE_CLOCKS)):
        facts(node.name, "clocks locked", left_out)
