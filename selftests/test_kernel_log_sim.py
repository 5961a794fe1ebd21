"""The kernel's own reports on the simulated racks (issue 43): each node's journal is its own
(rackproof_sim.standins.kernellog: its boot's noise and the lines a fault plants, never the
host's, whose kernel the namespaces share). Healthy, test_kernel_log_clean passes on every node;
an Xid, a fatal PCIe AER error or a link flap planted on one node fails that node's check, quoting
the line, and with all of them planted at once nothing else in the whole suite fails.

thor5 under `flock /work/rack.lock`, spark2 under `flock /work/spark.lock`:
`-k thor5` / `-k spark2` bring up only that rack."""

from __future__ import annotations

import pytest

from selftests.simrack import rack_fixture, rack_marks, SimRack

pytestmark = rack_marks()
KERNEL = "tests_physical/test_kernel_log.py"


thor5 = rack_fixture("thor5")


spark2 = rack_fixture("spark2")


@pytest.fixture(params=["thor5", "spark2"])
def rack(request):
    return request.getfixturevalue(request.param)


def rack_of(request, profile: str) -> SimRack:
    return request.getfixturevalue(profile)


def check(node: str) -> str:
    return f"test_kernel_log::test_kernel_log_clean[{node}]"



def nodes(rack: SimRack) -> list[str]:
    return [spec.name for spec in rack.rack.profile.nodes]


def test_a_healthy_rack_passes_the_kernel_log_check_on_every_node(pytester, rack):
    run = rack.suite(pytester, KERNEL)
    assert run.with_outcome("passed") == {check(node) for node in nodes(rack)}, run.output


@pytest.mark.parametrize("profile, node", [("thor5", "thor-2"), ("spark2", "spark-1")])
def test_an_xid_fails_the_kernel_log_check_of_its_node_with_the_line_quoted(pytester, request, profile, node):
    rack = rack_of(request, profile)
    with rack.planted(node, "kernel-xid"):
        run = rack.suite(pytester, KERNEL)
    assert run.failed == {check(node)}, run.output
    where = "PCI:0000:01:00" if node.startswith("thor") else "PCI:000f:01:00"
    message = run.messages[check(node)]
    assert f"{node}: kernel log over the last 24 h (journalctl): expected no Xid" in message
    assert f"[Xid] Xid 79 (GPU has fallen off the bus) on {where.removeprefix('PCI:')}: " in message
    assert f"kernel: NVRM: Xid ({where}): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus." in message


@pytest.mark.parametrize("profile, node, device", [("thor5", "thor-3", "0001:01:00.0"), ("spark2", "spark-2", "0000:01:00.0")])
def test_a_fatal_aer_error_fails_the_kernel_log_check_of_its_node(pytester, request, profile, node, device):
    rack = rack_of(request, profile)
    with rack.planted(node, "kernel-aer-fatal"):
        run = rack.suite(pytester, KERNEL)
    assert run.failed == {check(node)}, run.output
    message = run.messages[check(node)]
    assert "2 line(s): AER fatal" in message and f"[AER fatal] PCIe AER fatal error on {device}" in message
    assert f"AER: Uncorrectable (Fatal) error message received from {device}" in message


@pytest.mark.parametrize("profile, node, interface, line", [
    ("thor5", "thor-4", "mgbe0_0", "nvethernet a808a10000.ethernet mgbe0_0: Link is Down"),
    ("spark2", "spark-1", "enp1s0f1np1", "mlx5_core 0000:01:00.1 enp1s0f1np1: Link down")])
def test_a_link_flap_fails_the_kernel_log_check_naming_the_interface(pytester, request, profile, node, interface, line):
    rack = rack_of(request, profile)
    with rack.planted(node, "kernel-link-flap", interface):
        run = rack.suite(pytester, KERNEL)
    assert run.failed == {check(node)}, run.output
    message = run.messages[check(node)]
    assert "1 line(s): link flap" in message and f"[link flap] {interface} went down: " in message
    assert f"kernel: {line}" in message and "loose or marginal cable" in message


PLANTED = {"thor5": [("thor-2", "kernel-xid"), ("thor-3", "kernel-aer-fatal"), ("thor-4", "kernel-link-flap")],
           "spark2": [("spark-1", "kernel-xid"), ("spark-2", "kernel-link-flap")]}


def test_with_every_fault_planted_only_those_nodes_kernel_log_checks_fail(pytester, rack):
    """The whole suite with every fault planted: a line in a node's journal changes nothing else
    (the GPU, the links and the PCIe devices stay as they were), so those nodes' kernel log checks
    are the only checks that fail or err. A healthy rack passes the whole suite
    (test_acceptance_sim, test_acceptance_two_nodes_sim), and its kernel log checks pass (the first
    test here)."""
    planted = PLANTED[rack.profile]
    for node, kind in planted:
        rack.fault(node, kind)
    try:
        run = rack.suite(pytester)
    finally:
        for node, kind in planted:
            rack.heal(node, kind)
    assert run.failed == {check(node) for node, _ in planted}, run.output
    assert not run.with_outcome("error"), run.output
