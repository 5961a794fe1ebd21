"""rackproof.judging.gpus: a node's GPUs seen by the driver, every Thor in one power mode, clocks locked;
both sides of each, on what the real tools print (samples named in test_probe_nvidia_smi.py and
test_probe_jetson.py)."""

from pathlib import Path

import pytest

from rackproof.judging.failure import Failure
from rackproof.judging.gpus import clocks_locked, gpus_seen, same_power_mode
from rackproof.inventory.model import Expect
from rackproof.probes.jetson import ClockRange, PowerMode, parse_jetson_clocks, parse_nvpmodel
from rackproof.probes.nvidia_smi import Gpu, parse_gpus

SAMPLES = Path(__file__).parent / "samples"
GB10 = parse_gpus((SAMPLES / "nvidia_smi_query_name_memtotal_driver_gb10_noheader.csv").read_text())
NONE = parse_gpus((SAMPLES / "nvidia_smi_no_devices_found_open_gpu_kernel_modules_862.txt").read_text())
MAXN = parse_nvpmodel((SAMPLES / "nvpmodel_q_agx_orin_maxn.txt").read_text())


def test_the_gpu_the_platform_has_passes():
    gpus_seen("spark-1", GB10, Expect(gpu_name="NVIDIA GB10"))


@pytest.mark.parametrize("gpus, found", [(NONE, "none (No devices were found)"),
                                         ((Gpu("NVIDIA Thor", "580.00"),), "NVIDIA Thor"),
                                         (GB10 * 2, "NVIDIA GB10, NVIDIA GB10")])
def test_no_gpu_another_or_one_too_many_fails_naming_the_node(gpus, found):
    with pytest.raises(Failure) as caught:
        gpus_seen("spark-2", gpus, Expect(gpu_name="NVIDIA GB10"))
    assert str(caught.value).startswith(f"spark-2: GPUs seen by the driver (nvidia-smi): expected 1 NVIDIA GB10, "
                                        f"found {found}. Usual cause: the driver did not start or lost the GPU")


def test_one_power_mode_passes_and_the_odd_node_is_named():
    assert same_power_mode({"thor-1": MAXN, "thor-2": MAXN}, None) is None
    problem = same_power_mode({"thor-1": MAXN, "thor-2": PowerMode("120W", 1), "thor-3": MAXN}, None)
    assert str(problem).startswith("power mode (nvpmodel -q) differs on thor-2: expected MAXN (on most nodes), "
                                   "found 120W on thor-2.")


def test_the_inventorys_power_mode_is_required_of_every_thor():
    assert same_power_mode({"thor-1": MAXN}, "MAXN") is None
    problem = same_power_mode({"thor-1": PowerMode("120W", 1), "thor-2": PowerMode("120W", 1)}, "MAXN")
    assert "differs on thor-1, thor-2: expected MAXN (pinned in the inventory)" in str(problem)


def clocks(name: str, edit=lambda text: text):
    return parse_jetson_clocks(edit((SAMPLES / name).read_text()))


def test_locked_clocks_pass_and_unlocked_ones_are_named():
    assert clocks_locked("thor-1", clocks("jetson_clocks_show_nano_locked_ABRIDGED.txt")) is None
    with pytest.raises(Failure) as caught:
        clocks_locked("thor-2", clocks("jetson_clocks_show_orin_nano_super_jp6_unlocked.txt"))
    assert str(caught.value).startswith("thor-2: clocks locked (jetson_clocks --show): expected MinFreq = MaxFreq on "
                                        "every online CPU and GPU clock domain (GPU), found cpu0 729600-1344000, ")
    assert "cpu5 729600-1344000, GPU 306000000-918000000. Usual cause: jetson_clocks was not run" in str(caught.value)


def test_a_real_locked_thor_passes_judged_on_both_gpu_domains():
    """A Thor (JetPack 7) prints its GPU as gpu-gpc-0 and gpu-nvd-0, no "GPU" line: judged on each."""
    assert clocks_locked("thor-1", clocks("jetson_clocks_show_thor_jp7_maxn_locked.txt")) is None
    with pytest.raises(Failure) as caught:   # the same Thor with its video decoder's clock scaling
        clocks_locked("thor-1", clocks("jetson_clocks_show_thor_jp7_maxn_locked.txt", lambda text: text.replace(
            "gpu-nvd-0 MinFreq=1692000000", "gpu-nvd-0 MinFreq=345000000")))
    assert str(caught.value).startswith("thor-1: clocks locked (jetson_clocks --show): expected MinFreq = MaxFreq on "
                                        "every online CPU and GPU clock domain (gpu-gpc-0, gpu-nvd-0), found "
                                        "gpu-nvd-0 345000000-1692000000. Usual cause: jetson_clocks was not run")


def test_offline_cpus_are_left_out_and_named():
    """An AGX Orin in 30 W (cpu8-11 offline) after jetson_clocks: the online CPUs and the GPU are
    locked, the offline ones keep their range; before it, every online one scales."""
    assert clocks_locked("orin-1", clocks("jetson_clocks_show_agx_orin_30w_locked_cpu8-11_offline.txt")) == \
        "cpu8, cpu9, cpu10, cpu11 offline, left out"
    with pytest.raises(Failure) as caught:
        clocks_locked("orin-1", clocks("jetson_clocks_show_agx_orin_30w_unlocked_cpu8-11_offline.txt"))
    assert "found cpu0 729600-1728000, " in str(caught.value)
    assert ", cpu7 729600-1728000, GPU 306000000-612000000 (cpu8, cpu9, cpu10, cpu11 offline, left out). Usual " \
        "cause" in str(caught.value)
