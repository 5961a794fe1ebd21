"""The hardware behind each CX7 link on a simulated spark2 (issue 43 item 2): a healthy pair passes
every check of tests_physical/test_cx7_hardware.py and test_cx7_speed; each planted fault fails
its own check, with its cause, and nothing else; with all of them planted the whole suite fails
those checks only.

What a namespace cannot have is modelled (rackproof_sim.standins.infiniband: the RDMA devices' sysfs
files; standins/ethtool.py: speed and firmware); the MTU is the real interfaces'. Under
`flock /work/spark.lock`."""

from __future__ import annotations

import pytest

from selftests.simrack import rack_fixture, rack_marks
from selftests.suite import run_suite

pytestmark = rack_marks()
HARDWARE = "tests_physical/test_cx7_hardware.py"
SPEED = "tests_network/test_cx7.py::test_cx7_speed"
CHECKS = ("test_cx7_pcie_link_at_full_speed_and_width", "test_cx7_firmware_the_same_at_both_ends",
          "test_cx7_mtu_the_same_at_both_ends", "test_roce_v2_gid_index_the_same_at_both_ends", "test_cx7_speed")


spark2 = rack_fixture("spark2")



def function(test_id: str) -> str:
    return test_id.split("::")[-1].split("[")[0]


def test_a_healthy_spark2_passes_every_check_of_its_cx7_hardware(pytester, spark2):
    run = spark2.suite(pytester, HARDWARE, SPEED)
    assert run.failed == set() and run.with_outcome("error") == set(), run.output
    assert {function(t) for t in run.with_outcome("passed")} == set(CHECKS), run.output


# kind, node, the check it fails, the targets (in the test id) it fails on, what its message says
FAULTS = [
    ("cx7-pcie-x2", "spark-2", "test_cx7_pcie_link_at_full_speed_and_width", ["spark-2:enP2p1s0f1np1"],
     ["PCIe link of its function", "expected 32.0 GT/s PCIe x4", "32.0 GT/s PCIe x2", "early BIOS"]),
    ("cx7-firmware-differs", "spark-1", "test_cx7_firmware_the_same_at_both_ends",
     ["spark-1->spark-2", "spark-2->spark-1"],
     ["ConnectX-7 firmware (ethtool -i) differs", "spark-1 enp1s0f1np1 (rocep1s0f1): 28.45.1016 (NVD0000000087)",
      "spark-2 enp1s0f1np1 (rocep1s0f1): 28.45.4028 (NVD0000000087)", "DGX OS update"]),
    ("cx7-speed-100g", "spark-2", "test_cx7_speed", ["spark-2:enp1s0f1np1", "spark-2:enP2p1s0f1np1"],
     ["100000Mb/s", "cable or switch port"]),
    ("cx7-mtu-1500", "spark-2", "test_cx7_mtu_the_same_at_both_ends", ["spark-1->spark-2", "spark-2->spark-1"],
     ["MTU of the CX7 interfaces", "(roceP2p1s0f1): 9000", "spark-2 enP2p1s0f1np1 (roceP2p1s0f1): 1500", "9000"]),
    ("cx7-gid-index-differs", "spark-1", "test_roce_v2_gid_index_the_same_at_both_ends",
     ["spark-1->spark-2", "spark-2->spark-1"],
     ["RoCE v2 GID index", "spark-1 enp1s0f1np1 (rocep1s0f1): 5", "spark-2 enp1s0f1np1 (rocep1s0f1): 3",
      "NCCL_IB_GID_INDEX"]),
]


@pytest.mark.parametrize("kind, node, check, targets, says", FAULTS, ids=[f[0] for f in FAULTS])
def test_each_fault_fails_its_own_check_with_its_cause_and_nothing_else(pytester, spark2, kind, node, check, targets,
                                                                         says):
    with spark2.planted(node, kind):
        run = spark2.suite(pytester, HARDWARE, SPEED)
    assert {function(t) for t in run.failed} == {check}, run.output
    assert all(any(f"[{target}]" in t for t in run.failed) for target in targets), run.failed
    assert len(run.failed) == len(targets), run.failed
    for test_id in run.failed:
        missing = [s for s in says if s not in run.messages[test_id]]
        assert not missing, (missing, run.messages[test_id])
    assert run.with_outcome("error") == set(), run.output


@pytest.mark.parametrize("setting, check, says", [
    ("mtu = 9000", "test_cx7_mtu_the_same_at_both_ends",
     "spark-1 enp1s0f1np1 (rocep1s0f1): 1500, the inventory asks 9000"),
    ("nccl_ib_gid_index = 4", "test_roce_v2_gid_index_the_same_at_both_ends",
     "spark-1 enp1s0f1np1 (rocep1s0f1): 3, NCCL is told 4 (nccl_ib_gid_index)")])
def test_what_the_inventory_asks_of_every_end_fails_on_a_rack_without_it(pytester, spark2, tmp_path, setting, check,
                                                                          says):
    """Both ends alike is not enough where the inventory names the value: jumbo frames, or the GID
    index NCCL is told to use."""
    text = spark2.inventory.read_text()
    assert "\n[expect]\n" in text
    inventory = tmp_path / "cluster.toml"
    inventory.write_text(text.replace("\n[expect]\n", f"\n[expect]\n{setting}\n", 1))
    run = run_suite(pytester, f"--inventory={inventory}", HARDWARE, netns=spark2.rack.topo.bench)
    assert {function(t) for t in run.failed} == {check} and len(run.failed) == 2, run.output
    assert all(says in run.messages[t] for t in run.failed), run.messages


def test_with_every_fault_planted_the_whole_suite_fails_those_checks_only(pytester, spark2):
    """Each fault is in the model or in an interface's MTU: no other check reads it."""
    for kind, node, *_ in FAULTS:
        spark2.fault(node, kind)
    try:
        run = spark2.suite(pytester)
    finally:
        for kind, node, *_ in reversed(FAULTS):
            spark2.heal(node, kind)
    assert {function(t) for t in run.failed} == set(CHECKS), run.output
    assert run.with_outcome("error") == set(), run.output
