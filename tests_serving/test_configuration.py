"""Step 5: every node on the same kernel and system firmware (the report's configuration table
shows them beside the driver, CUDA, JetPack and the rest)."""

import pytest

from rackproof.judging.capabilities import VERSIONS
from rackproof.measurements.configuration import NODES_FIRMWARE, NODES_KERNEL
from rackproof.judging.releases import same_kernel_and_firmware

pytestmark = [pytest.mark.step(5), pytest.mark.capability(VERSIONS)]


def test_same_kernel_and_firmware(every_node, planned):
    if problem := same_kernel_and_firmware(planned(NODES_KERNEL), planned(NODES_FIRMWARE)):
        raise problem
