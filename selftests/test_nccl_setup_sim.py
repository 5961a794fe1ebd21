"""NCCL's set-up on the simulated spark2, read from its own NCCL_DEBUG=INFO lines (issue 43):
each planted fault fails the NCCL check, and only it, naming its cause and the node; the
healthy pair passes it with both PCIe functions of the port in NCCL's NET/IB list."""

from __future__ import annotations

import json
import re

import pytest

from selftests.simrack import rack_fixture, rack_marks
from selftests.suite import run_suite

pytestmark = rack_marks()

NCCL = "test_nccl_across_the_nodes[all]"

# fault on spark-2 -> what the NCCL check's failure must name
FAULTS = {
    "nccl-one-function": ("spark-2: NCCL uses rocep1s0f1 and not roceP2p1s0f1 (NCCL_IB_HCA=rocep1s0f1)",
                          "~/.nccl.conf sets NCCL_IB_HCA=rocep1s0f1"),
    "nccl-dev-build": ("spark-2: NCCL 2.31.0a7+cuda13.0 is a development build", "version suffix 'a7'"),
    "nccl-conf-leftover": ("spark-2: /etc/nccl.conf sets NCCL_IB_DISABLE=1",
                           "spark-2: NCCL used no RoCE device"),
}


spark2 = rack_fixture("spark2")


def nccl_check(pytester, rack):
    return run_suite(pytester, f"--inventory={rack.inventory}", "tests_network/test_nccl.py",
                     netns=rack.rack.topo.bench)


def test_healthy_pair_passes_the_nccl_check(pytester, spark2):
    run = nccl_check(pytester, spark2)
    assert run.failed == set() and any(NCCL in t for t in run.with_outcome("passed")), run.output
    # each rank's set-up lines in the run's evidence, as NCCL 2.28 prints them on a Spark pair
    evidence = "".join(e["stdout"] for t in json.loads((run.run_dir / "results.json").read_text())["tests"]
                       for e in t["evidence"])
    for node in ("spark-1", "spark-2"):
        assert re.search(rf"^{node}:[0-9]+:[0-9]+ \[0\] NCCL INFO NET/IB : Using \[0\]rocep1s0f1:1/RoCE "
                         r"\[1\]roceP2p1s0f1:1/RoCE \[RO\]; OOB enp1s0f1np1:", evidence, re.M), node
    assert "NCCL INFO NCCL version 2.28.3+cuda13.0" in evidence


@pytest.mark.parametrize("fault", FAULTS)
def test_each_fault_fails_the_nccl_check_naming_its_cause(pytester, spark2, fault):
    with spark2.planted("spark-2", fault):
        run = nccl_check(pytester, spark2)
    assert {t.split("::")[-1] for t in run.failed} == {NCCL}, run.output
    for words in FAULTS[fault]:
        assert words in run.output, (words, run.output)
    # each fault holds the bus bandwidth down, beside which the simulated CX7's stock MTU is named
    assert "CX7 interfaces under MTU 9000: spark-1 enp1s0f1np1 1500" in run.output, run.output
    # spark-1's set-up is healthy: no cause names it (the MTU line lists interfaces)
    assert "spark-1: " not in run.output, run.output
