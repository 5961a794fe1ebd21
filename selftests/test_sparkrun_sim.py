"""sparkrun on the simulated spark2 (issue 14, its first part): the real sparkrun CLI on the head
(spark-1) with the cluster spark-pair made by `sparkrun cluster create` on the CX7 addresses.
Each planted fault fails exactly its check, naming the node(s) and what to do; without the CLI
the definition's checks are left to the runtime check's failure, not passed. And the guide's
interface-name trap: netplan written for the Down twins fails the netplan check, naming both. (Healthy, they pass
with the real CLI's answers in the evidence: test_acceptance_sim's healthy spark2 run.)
"""

from __future__ import annotations

import pytest

from selftests.simrack import SimRack, rack_marks
from selftests.suite import run_suite

pytestmark = rack_marks()

CHECKS = ("tests_serving/test_sparkrun.py", "tests_ssh/test_ssh_mesh.py")


@pytest.fixture(scope="module")
def spark2():
    with SimRack("spark2") as rack:
        yield rack


def sparkrun_checks(pytester, rack):
    return run_suite(pytester, f"--inventory={rack.inventory}", *CHECKS, netns=rack.rack.topo.bench)


def short(test_id: str) -> str:
    return test_id.split("::")[-1]


@pytest.mark.parametrize("fault, check, named", [
    ("sparkrun-order", "test_the_definition_lists_the_nodes_head_first[spark-1]",
     ("spark-1 sparkrun cluster spark-pair", "expected spark-1, spark-2, found spark-2, spark-1", "--hosts")),
    ("sparkrun-one-node", "test_the_definition_lists_the_nodes_head_first[spark-1]",
     ("expected spark-1, spark-2, found spark-1.",)),
    ("sparkrun-on-mgmt", "test_the_multi_node_path_uses_cx7_addresses[spark-1]",
     ("192.168.77.11 (spark-1, on enP7s7)", "192.168.77.12 (spark-2, on enP7s7)", "CX7 address")),
    ("sparkrun-missing", "test_sparkrun_runs_on_the_head[spark-1]", ("spark-1", "not installed on the head")),
])
def test_each_fault_fails_exactly_its_check(pytester, spark2, fault, check, named):
    spark2.fault("spark-1", fault)
    try:
        run = sparkrun_checks(pytester, spark2)
    finally:
        spark2.heal("spark-1", fault)
    assert {short(t) for t in run.failed} == {check}, run.output
    message = next(m for t, m in run.messages.items() if short(t) == check)
    for words in named:
        assert words in message, (words, message)
    if fault == "sparkrun-missing":    # the definition cannot be read: said, never passed
        skipped = {short(t) for t in run.with_outcome("skipped")}
        assert skipped == {"test_the_definition_lists_the_nodes_head_first[spark-1]",
                           "test_the_multi_node_path_uses_cx7_addresses[spark-1]"}, run.output


def test_netplan_on_the_down_twins_fails_the_netplan_check_naming_both_interfaces(pytester, spark2):
    spark2.fault("spark-1", "netplan-down-twin")
    try:   # the addresses stay up: traffic cannot tell, only the file that a reboot applies
        run = run_suite(pytester, f"--inventory={spark2.inventory}", "tests_network/test_cx7.py", "-k",
                        "not roce and not nccl", netns=spark2.rack.topo.bench)
    finally:
        spark2.heal("spark-1", "netplan-down-twin")
    check = "test_netplan_file_persists_the_cx7_addresses[spark-1]"
    assert {short(t) for t in run.failed} == {check}, run.output
    message = next(m for t, m in run.messages.items() if short(t) == check)
    for words in ("netplan configures enp1s0f0np0 (Down in ibdev2netdev) while its twin enp1s0f1np1 (Up",
                  "enP2p1s0f0np0", "enP2p1s0f1np1", "interface-name trap"):
        assert words in message, (words, message)
