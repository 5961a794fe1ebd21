"""Each CX7 link and direction on the simulated Spark pair (issue 43): a device whose writes one
way are slow, and a device in NVIDIA's stale initialisation (its link at 200000Mb/s, PCIe and
firmware in order, RDMA ~15 Gb/s both ways), each failing the per-link check with its cause, and
the port's sum the same directions; nothing else of the CX7 checks, NCCL or the hardware facts."""

from __future__ import annotations

import re

from selftests.simrack import rack_fixture, rack_marks
from selftests.test_acceptance_sim import leftovers

pytestmark = rack_marks()
spark2 = rack_fixture("spark2")

# what a fault of the RDMA rate can touch: the CX7 checks, the hardware behind them, NCCL
TOUCHED = ("tests_network/test_cx7.py", "tests_physical/test_cx7_hardware.py", "tests_network/test_nccl.py")


def in_each_direction(check: str, *pairs: str) -> set[str]:
    return {f"test_cx7::test_{check}[{pair}]" for pair in pairs}


def test_one_slow_direction_of_one_device_fails_that_link_and_direction_only(pytester, spark2):
    with spark2.planted("spark-1", "rdma-direction-slow", "roceP2p1s0f1", "40"):
        run = spark2.suite(pytester, *TOUCHED)
    # the port's sum is short by the same link: that direction alone
    assert run.failed == in_each_direction("roce_bandwidth_of_each_link", "spark-1->spark-2") | \
        in_each_direction("roce_bandwidth_over_the_port", "spark-1->spark-2"), run.output
    message = run.messages["test_cx7::test_roce_bandwidth_of_each_link[spark-1->spark-2]"]
    assert "spark-1 enP2p1s0f1np1 (roceP2p1s0f1) -> spark-2 enP2p1s0f1np1 (roceP2p1s0f1) (ib_write_bw)" in message
    assert 39 < float(re.search(r"expected at least 80 Gb/s, found ([0-9.]+) Gb/s", message)[1]) < 41, message
    assert "moves less while the others keep up" in message
    assert "spark-1 enp1s0f1np1 (rocep1s0f1) -> spark-2 enp1s0f1np1 (rocep1s0f1): 9" in message, message
    assert run.outcomes["test_cx7::test_roce_bandwidth_of_each_link[spark-2->spark-1]"] == "passed"
    assert not leftovers(spark2)



def test_a_stale_initialisation_is_named_with_nvidia_s_recovery_both_ways(pytester, spark2):
    with spark2.planted("spark-2", "cx7-stale-init", "rocep1s0f1"):
        run = spark2.suite(pytester, *TOUCHED)
    both = ("spark-1->spark-2", "spark-2->spark-1")
    assert run.failed == in_each_direction("roce_bandwidth_of_each_link", *both) | \
        in_each_direction("roce_bandwidth_over_the_port", *both), run.output
    for pair in both:
        message = run.messages[f"test_cx7::test_roce_bandwidth_of_each_link[{pair}]"]
        assert 14 < float(re.search(r"stale initialisation of the ConnectX-7: ([0-9.]+) Gb/s", message)[1]) < 16, message
        assert "reports 200000Mb/s" in message and "full AC power cycle of both units" in message
    # the link's speed, PCIe and firmware checks pass: the state hides behind a healthy link
    assert run.outcomes["test_cx7::test_cx7_speed[spark-2:enp1s0f1np1]"] == "passed"
    assert not leftovers(spark2)
