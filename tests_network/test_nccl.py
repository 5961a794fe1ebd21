"""NCCL across the CX7 nodes: one rank per node, started by mpirun over SSH on the CX7
addresses, its bus bandwidth near what the inventory expects, and NCCL's own set-up as its debug
lines say it: a release build, both PCIe functions of the cabled port in use, no NCCL setting on
a node beyond the inventory's. (Spark playbook; "Prueba mínima de aceptación"; issue 43.)"""

import pytest

from rackproof.judging import ncclsetup
from rackproof.judging.capabilities import MULTI_NODE
from rackproof.judging.failure import Failure, judge
from rackproof.measurements.nccl import CX7_NCCL, CX7_NCCL_SETTINGS

pytestmark = pytest.mark.capability(MULTI_NODE)

SLOW = "NCCL fell back to sockets (NCCL_DEBUG=INFO shows NET/Socket instead of NET/IB), or a CX7 link is down"


@pytest.mark.step(4)   # mpirun starts the ranks over SSH
@pytest.mark.capability(MULTI_NODE)
def test_nccl_across_the_nodes(cx7_cluster, inventory, measure, planned):
    nodes = [h.spec for h in cx7_cluster]
    iface = nodes[0].cx7[0].name
    result = planned(CX7_NCCL)
    if len(result.distinct_hosts) != len(nodes):
        raise Failure(inventory.expect.nccl_test, f"ranks ran on {', '.join(result.distinct_hosts)}, not on every "
                      "node: MPI did not run one job across the nodes", cause="wrong -H addresses, or no "
                      "passwordless SSH on the CX7 addresses")
    if not result.ok or result.out_of_bounds:
        raise Failure(inventory.expect.nccl_test, f"{result.out_of_bounds} out-of-bounds values: the collective "
                      "returned wrong data")
    # recorded only once the run is known sane: a broken run's figure never reaches the charts
    m = measure("nccl.busbw", f"{inventory.expect.nccl_test} over {iface}", result.avg_busbw_gbs, "GB/s")
    facts = planned(CX7_NCCL_SETTINGS)
    causes = ncclsetup.causes(result.setup, facts, nodes, inventory.expect)
    slow = causes + ncclsetup.slow_causes(facts)
    judge(m, inventory.expect.nccl_test, "; ".join(slow) or SLOW, seen=bool(slow))
    if causes:
        raise Failure(inventory.expect.nccl_test, "NCCL's set-up", "a release build over both PCIe functions of "
                      "each cabled port, no NCCL setting beyond the inventory's", "; ".join(causes), seen=True)
