"""Power and GPUs on the simulated thor2 rack (its inventory asks for locked clocks): healthy, every
check passes; a Thor in another power mode fails the power mode check naming it and both modes; a
Thor whose driver sees no GPU, or whose clocks scale, fails its own check and no other."""

from __future__ import annotations

import pytest

from selftests.simrack import SimRack, rack_marks
from selftests.suite import run_suite

pytestmark = rack_marks()
GPUS = "tests_physical/test_gpus.py"
DRIVER = "tests_serving/test_versions.py::test_same_gpu_driver_and_cuda"


@pytest.fixture(scope="module")
def thor2():
    with SimRack("thor2") as rack:
        yield rack


def suite(pytester, rack: SimRack, *checks: str, fault: tuple[str, str] | None = None):
    """The checks at step 5, with a fault planted on a node for the run (healed whatever happens)."""
    if fault:
        rack.fault(*fault)
    try:
        return run_suite(pytester, f"--inventory={rack.inventory}", "--step", "5", *checks, netns=rack.rack.topo.bench)
    finally:
        if fault:
            rack.heal(*fault)


def test_a_healthy_rack_passes(pytester, thor2):
    run = suite(pytester, thor2, GPUS, DRIVER)
    assert run.failed == set() and run.with_outcome("error") == set(), run.output
    assert run.with_outcome("passed") == {"test_gpus::test_gpus_seen_by_the_driver[thor-1]",
                                          "test_gpus::test_gpus_seen_by_the_driver[thor-2]",
                                          "test_gpus::test_same_power_mode[all]",
                                          "test_gpus::test_clocks_locked[thor-1]",
                                          "test_gpus::test_clocks_locked[thor-2]",
                                          "test_versions::test_same_gpu_driver_and_cuda[all]"}, run.output


def test_another_power_mode_names_the_node_and_both_modes(pytester, thor2):
    run = suite(pytester, thor2, GPUS, DRIVER, fault=("thor-2", "power-mode"))
    assert run.failed == {"test_gpus::test_same_power_mode[all]"}, run.output
    assert "power mode (nvpmodel -q) differs on thor-2: expected MAXN (on most nodes), found 120W on thor-2." in \
        run.messages["test_gpus::test_same_power_mode[all]"]


def test_a_gpu_the_driver_does_not_see_fails_its_node_only(pytester, thor2):
    run = suite(pytester, thor2, GPUS, fault=("thor-1", "gpu-not-visible"))
    assert run.failed == {"test_gpus::test_gpus_seen_by_the_driver[thor-1]"}, run.output
    assert "thor-1: GPUs seen by the driver (nvidia-smi): expected 1 NVIDIA Thor, found none (No devices were found)." \
        in run.messages["test_gpus::test_gpus_seen_by_the_driver[thor-1]"]


def test_clocks_that_scale_fail_their_node_only(pytester, thor2):
    """The simulated Thor prints a real Thor's layout: the check judges its GPU's two domains."""
    run = suite(pytester, thor2, GPUS, fault=("thor-2", "clocks-unlocked"))
    assert run.failed == {"test_gpus::test_clocks_locked[thor-2]"}, run.output
    message = run.messages["test_gpus::test_clocks_locked[thor-2]"]
    assert "thor-2: clocks locked (jetson_clocks --show): expected MinFreq = MaxFreq on every online CPU and GPU " \
        "clock domain (gpu-gpc-0, gpu-nvd-0), found cpu0 972000-2601000, " in message
    assert ", cpu13 972000-2601000, gpu-gpc-0 306000000-1575000000, gpu-nvd-0 345000000-1692000000. Usual cause" in \
        message
