"""Every node's kernel, in its own words, over the run and the hours before it (issue 43): no
NVIDIA Xid, no PCIe AER error, no mlx5 or mgbe error, no flap of a cluster link, no unclean
previous shutdown; each line quoted, the inventory's allowlist ([expect] kernel_log_allow)
taken out."""

import pytest

from rackproof.judging import kernelreports
from rackproof.measurements.kernel import NODE_KERNEL_LOG

pytestmark = pytest.mark.step(1)


def test_kernel_log_clean(node, planned):
    kernelreports.judge(node.name, planned(NODE_KERNEL_LOG))
