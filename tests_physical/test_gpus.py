"""Every node at full speed: its GPUs seen by their driver, and every Thor in the same power mode."""

import pytest

from rackproof import gpus
from rackproof.capabilities import FULL_SPEED
from rackproof.probes.jetson import NVPMODEL
from rackproof.probes.nvidia_smi import GPUS

pytestmark = [pytest.mark.step(1), pytest.mark.capability(FULL_SPEED)]


def test_gpus_seen_by_the_driver(node, inventory):
    gpus.gpus_seen(node.name, node.read(GPUS), inventory.expect)


@pytest.mark.platform("thor")
def test_same_power_mode(every_node, inventory):
    if problem := gpus.same_power_mode({host.name: host.read(NVPMODEL) for host in every_node},
                                       inventory.expect.power_mode):
        raise problem
