"""The report's golden-configuration table (rackproof.report.configuration): node x setting read
from the evidence of the run's checks by the probe that made each command, on real outputs
(selftests/samples); the odd cell marked against the majority, or against the inventory's pin;
with no majority every value odd; an unread cell with why, never equal; a node no check asked
left out of the comparison. And the page shows it so."""

from pathlib import Path

from rackproof.inventory.model import Expect
from rackproof.probes.docker import IMAGE_ID
from rackproof.probes.ethtool import DRIVER_INFO
from rackproof.probes.jetson import DPKG_VERSIONS, NV_TEGRA_RELEASE
from rackproof.probes.nccl import NCCL_TEST
from rackproof.probes.nvidia_smi import NVIDIA_SMI
from rackproof.probes.rdmasysfs import RDMA_SYSFS
from rackproof.probes.release import BIOS, KERNEL
from rackproof.report import configuration
from rackproof.report.html import _configuration
from selftests.test_probe_rdmasysfs import _grep
from selftests.test_report_facts import ev, made

SAMPLES = Path(__file__).with_name("samples")
THOR_KERNEL = (SAMPLES / "uname_r_jetson_agx_thor_jp7_DERIVED_FROM_JTOP.txt").read_text()
NO_DMI = (SAMPLES / "bios_version_local_debian12_no_dmi.txt").read_text()
SMI = (SAMPLES / "nvidia_smi_thor_jp7_580.00_PARTIAL.txt").read_text()
RELEASE = (SAMPLES / "nv_tegra_release_R38.2.0_jp7.txt").read_text()
NODES = ["thor-1", "thor-2", "thor-3", "thor-4"]


def rows(tests, expect=Expect()) -> dict:
    return {row["setting"]: row for row in configuration.build(NODES, tests, expect)}


def states(row) -> dict:
    return {node: cell["state"] for node, cell in row["cells"].items()}


def shelf(kernel_of_thor3=THOR_KERNEL):
    return [{"evidence": [made("thor-1", KERNEL, THOR_KERNEL), made("thor-2", KERNEL, THOR_KERNEL),
                          made("thor-3", KERNEL, kernel_of_thor3),
                          ev("thor-4", "uname -r", exit_status=None, note="unreachable: connect timed out (3 tries)",
                             probe=KERNEL.name),
                          *(made(n, BIOS, NO_DMI, exit_status=1) for n in NODES[:3]),
                          *(made(n, NVIDIA_SMI, SMI) for n in NODES[:3]),
                          *(made(n, NV_TEGRA_RELEASE, RELEASE) for n in NODES[:3]),
                          made("thor-1", DPKG_VERSIONS, "nvidia-jetpack\tii \t7.0+b128\n", packages=["nvidia-jetpack"]),
                          made("thor-2", DPKG_VERSIONS, "nvidia-jetpack\tii \t7.1+b72\n", packages=["nvidia-jetpack"]),
                          made("thor-3", DPKG_VERSIONS, "", exit_status=1, packages=["nvidia-jetpack"]),
                          made("thor-1", IMAGE_ID, "sha256:" + "a" * 64 + "\n", image="vllm:latest")],
             "facts": {}}]


def test_a_healthy_row_is_the_same_everywhere_and_the_odd_kernel_is_marked():
    found = rows(shelf())
    assert list(found)[:2] == ["kernel", "system firmware (BIOS/UEFI)"]   # in the readers' order
    assert states(found["GPU driver"]) == {"thor-1": "same", "thor-2": "same", "thor-3": "same", "thor-4": "not asked"}
    assert found["GPU driver"]["cells"]["thor-1"]["value"] == "580.00" and found["L4T"]["expected"] == "R38.2.0"
    assert found["kernel"]["source"] == "uname -r"
    assert states(found["kernel"]) == {"thor-1": "same", "thor-2": "same", "thor-3": "same", "thor-4": "unread"}
    odd = rows(shelf("6.8.1-tegra\n"))["kernel"]
    assert states(odd)["thor-3"] == "odd" and odd["expected"] == "6.8.12-tegra" and odd["basis"] == "most nodes"
    assert odd["cells"]["thor-4"]["unread"] == "unreachable: connect timed out (3 tries)"


def test_unread_is_said_with_why_and_never_taken_for_equal():
    found = rows(shelf())
    firmware = found["system firmware (BIOS/UEFI)"]
    assert {states(firmware)[n] for n in NODES[:3]} == {"unread"} and firmware["expected"] is None
    assert firmware["cells"]["thor-1"]["unread"] == ("/sys/class/dmi/id/bios_version: no such file or directory "
                                                     "(no DMI tables the login can read)")
    jetpack = found["nvidia-jetpack (dpkg)"]
    # two nodes, two versions, the third not installed: no majority, so both values are odd
    assert states(jetpack) == {"thor-1": "odd", "thor-2": "odd", "thor-3": "unread", "thor-4": "not asked"}
    assert jetpack["basis"] == "no majority: the values differ" and jetpack["cells"]["thor-3"]["unread"] == "not installed"
    garbled = rows([{"evidence": [made("thor-1", KERNEL, "Linux thor-1 6.8.12-tegra\n")], "facts": {}}])["kernel"]
    assert garbled["cells"]["thor-1"]["state"] == "unread" and "not read: uname:" in garbled["cells"]["thor-1"]["unread"]


def test_a_pinned_value_is_what_every_node_must_have():
    pinned = rows(shelf(), Expect(jetpack_version="7.1", driver_version="575.00"))
    assert states(pinned["nvidia-jetpack (dpkg)"])["thor-1"] == "odd" and states(pinned["nvidia-jetpack (dpkg)"])["thor-2"] == "same"
    assert pinned["GPU driver"]["basis"] == "pinned in the inventory"
    assert {states(pinned["GPU driver"])[n] for n in NODES[:3]} == {"odd"}


def test_a_later_answer_cut_short_does_not_hide_what_the_node_said():
    tests = [{"evidence": [made("thor-1", KERNEL, THOR_KERNEL),
                           ev("thor-1", "uname -r", exit_status=None, note="the answer stopped", started=5.0,
                              probe=KERNEL.name)], "facts": {}}]
    assert rows(tests)["kernel"]["cells"]["thor-1"]["value"] == "6.8.12-tegra"


def test_the_page_marks_the_odd_cell_and_says_why_a_cell_is_unread():
    doc = {"configuration": configuration.build(NODES, shelf("6.8.1-tegra\n"), Expect()),
           "nodes": [{"name": n} for n in NODES]}
    page = _configuration(doc)
    assert '<td class="odd" data-state="odd">6.8.1-tegra</td>' in page
    assert '<td class="same" data-state="same">6.8.12-tegra</td>' in page
    assert "unread: unreachable: connect timed out (3 tries)" in page
    assert 'data-state="not asked"' in page and "<th>thor-4</th>" in page
    empty = _configuration({"configuration": [], "nodes": []})
    assert "No check of this run read a node" in empty


def test_each_nics_driver_and_firmware_is_a_row_and_other_firmware_is_odd():
    spark = (SAMPLES / "ethtool_i_dgx_spark_enP2p1s0f0np0_PARTIAL.txt").read_text()
    older = (SAMPLES / "ethtool_i_mlx5_cx7_fw28.39_ubuntu_gpu_server.txt").read_text()
    tests = [{"evidence": [made(n, DRIVER_INFO, spark, interface="enP2p1s0f0np0") for n in NODES[:3]]
              + [made("thor-4", DRIVER_INFO, older, interface="enP2p1s0f0np0")], "facts": {}}]
    found = configuration.build(NODES, tests, Expect())
    assert [r["setting"] for r in found] == ["enP2p1s0f0np0 driver", "enP2p1s0f0np0 firmware"]
    firmware = found[1]
    assert states(firmware) == {"thor-1": "same", "thor-2": "same", "thor-3": "same", "thor-4": "odd"}
    assert firmware["cells"]["thor-4"]["value"].startswith("28.39") and firmware["source"] == "ethtool -i {interface}"


def test_an_rdma_device_trained_below_its_peers_is_odd():
    gids = (SAMPLES / "show_gids_dgx_spark_excerpt.txt").read_text()
    tests = [{"evidence": [made(n, RDMA_SYSFS, _grep("roceP2p1s0f1", table=gids), device="roceP2p1s0f1")
                           for n in NODES[:3]]
              + [made("thor-4", RDMA_SYSFS, _grep("roceP2p1s0f1", width=2, table=gids), device="roceP2p1s0f1")],
              "facts": {}}]
    row = configuration.build(NODES, tests, Expect())[0]
    assert row["setting"] == "roceP2p1s0f1 PCIe link" and row["expected"] == "32.0 GT/s PCIe x4 (max 32.0 GT/s PCIe x4)"
    assert row["cells"]["thor-4"] == {"value": "32.0 GT/s PCIe x2 (max 32.0 GT/s PCIe x4)", "unread": "", "state": "odd"}


def test_the_nccl_each_host_loaded_is_its_cell_and_a_development_build_differs():
    # a DGX Spark pair's collective with NCCL_DEBUG=INFO (rank 0 on spark-fb97, rank 1 on spark-4440)
    run = ((SAMPLES / "nccl_debug_dgx_spark_2node_init_both_functions_PARTIAL.txt").read_text()
           + (SAMPLES / "nccl_all_gather_dgx_spark_2node_good.txt").read_text())
    values = {"ranks": 2, "hosts": "192.168.100.15:1,192.168.100.16:1", "interface": "enp1s0f1np1",
              "test": "all_gather_perf", "settings": ["-x", "NCCL_DEBUG=INFO"]}
    found = configuration.build(["spark-fb97", "spark-4440", "spark-3"],
                                [{"evidence": [made("spark-fb97", NCCL_TEST, run, **values)], "facts": {}}], Expect())
    assert found[0]["setting"] == "NCCL" and states(found[0]) == {
        "spark-fb97": "same", "spark-4440": "same", "spark-3": "not asked"}
    assert found[0]["cells"]["spark-4440"]["value"] == "2.28.9+cuda13.0"
    dev = run.replace("spark-4440:24302:24302 [0] NCCL INFO NCCL version 2.28.9+cuda13.0",
                      "spark-4440:24302:24302 [0] NCCL INFO NCCL version 2.29.7+cuda13.2\n"
                      "spark-4440:24302:24302 [0] NCCL INFO NCCL git version dgxspark-3node-ring fab1850")
    odd = configuration.build(["spark-fb97", "spark-4440"],
                              [{"evidence": [made("spark-fb97", NCCL_TEST, dev, **values)], "facts": {}}], Expect())[0]
    assert odd["cells"]["spark-4440"] == {"value": "2.29.7+cuda13.2 (git dgxspark-3node-ring fab1850)", "unread": "",
                                          "state": "odd"}
