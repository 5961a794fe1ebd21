"""Each CX7 link and direction of a Spark pair (issue 43): ib_write_bw per RoCE device against the
per-link floor, both sides (a healthy pair passes, a slow link or direction fails naming its
devices with every link's figure), and the stale-initialisation rule: NVIDIA's state and
recovery are named only when the link reports 200000 Mb/s, its PCIe and firmware are in order
and the figure is in NVIDIA's 8-25 Gb/s band, and never otherwise."""

from __future__ import annotations

import pytest

from rackproof.judging import staleinit
from rackproof.measurements import cx7
from rackproof.probes.ethtool import LinkInfo
from rackproof.nodes.remote import LocalTransport, Result
from rackproof.judging.staleinit import End
from rackproof.measuring.targets import Pair
from rackproof_sim.formats.ethtool import render_ethtool
from selftests.robustness import sample
from selftests.test_causes import SPARK_PAIR, failure, hosts_of, measure_in, planned
from selftests.test_checks_fail import SPARK2, answers, spark_cx7
from tests_network import test_cx7 as cx7_checks

GOOD_RUN = sample("ib_write_bw_dgx_spark_client_run_infinitely.txt")   # 97.28 Gb/s on roceP2p1s0f0
DEVICES = ("rocep1s0f1", "roceP2p1s0f1")


def with_figure(gbps: str) -> str:
    return GOOD_RUN.replace("97.28", gbps).replace("97.29", gbps)


def sysfs(device: str, width: int) -> str:
    """grep -H's lines of a CX7 function's PCIe link (its GID table left out)."""
    return "".join(f"/sys/class/infiniband/{device}/device/{name}:{value}\n" for name, value in (
        ("current_link_speed", "32.0 GT/s PCIe"), ("current_link_width", width), ("max_link_speed", "32.0 GT/s PCIe"),
        ("max_link_width", 4)))


def spark_hosts(runs: dict[str, str], tmp_path, speed_mbps: int = 200000, facts: dict | None = None):
    """spark-1 runs the ib_write_bw clients (each printing what its device's link gives); both ends
    answer ethtool with `speed_mbps`, and, with `facts` ({"width": .., "firmware": {node: ..}}),
    their functions' PCIe link and ethtool -i (else those fail: not read); spark-2 starts the servers."""
    def ethtool(node: str, command: str) -> Result | None:
        if command.startswith("ethtool -i ") and facts:
            return Result(command, 0, f"driver: mlx5_core\nversion: 6.17.0-1029-nvidia\nfirmware-version: "
                                      f"{facts['firmware'][node]}\n", "", 0.01)
        if command.startswith("grep -s -H") and facts:
            device = command.split("/sys/class/infiniband/")[1].split("/")[0]
            return Result(command, 2, sysfs(device, facts["width"]), "", 0.01)
        if command.startswith(("ethtool -i ", "grep -s -H")):
            return Result(command, 1, "", "not read here", 0.01)
        if command.startswith("ethtool "):
            iface = command.split()[-1]
            return Result(command, 0, render_ethtool(LinkInfo(iface, speed_mbps, "Full", True)), "", 0.01)
        return None

    def sender(command: str) -> Result:
        if answered := ethtool("spark-1", command):
            return answered
        for device, text in runs.items():
            (tmp_path / device).write_text(text)
        return LocalTransport("spark-1").execute(f'ib_write_bw() {{ cat {tmp_path}/"$2"; }}; {command}', 10)

    def receiver(command: str) -> Result:
        return ethtool("spark-2", command) or Result(command, 0, "4242 4243\n" if "setsid timeout" in command else "", "", 0.1)

    return hosts_of(SPARK_PAIR, {"spark-1": sender, "spark-2": receiver})


def link_check(hosts):
    """The per-link check of spark-1 -> spark-2, its entry and the cause it asks for run here."""
    return (cx7_checks.test_roce_bandwidth_of_each_link, Pair(hosts["spark-1"], hosts["spark-2"]),
            measure_in(SPARK_PAIR), planned(cx7.CX7_ROCE, ("spark-1", "spark-2"), hosts, SPARK_PAIR, cx7.CX7_ROCE_CAUSE))


def test_a_healthy_pair_passes_each_link_in_this_direction(tmp_path):
    check, *args = link_check(spark_hosts(dict.fromkeys(DEVICES, GOOD_RUN), tmp_path))
    check(*args)


def test_one_slow_link_in_one_direction_fails_naming_its_devices_with_every_link_s_figure(tmp_path):
    message = failure(*link_check(spark_hosts({DEVICES[0]: GOOD_RUN, DEVICES[1]: with_figure("52.10")}, tmp_path)))
    assert ("spark-1 enP2p1s0f1np1 (roceP2p1s0f1) -> spark-2 enP2p1s0f1np1 (roceP2p1s0f1) (ib_write_bw)" in message)
    assert "expected at least 80 Gb/s" in message and "found 52.1 Gb/s" in message, message
    assert "spark-1 enp1s0f1np1 (rocep1s0f1) -> spark-2 enp1s0f1np1 (rocep1s0f1): 97.28 Gb/s" in message
    assert "moves less while the others keep up" in message and "stale" not in message


def test_a_link_in_nvidia_s_band_with_pcie_and_firmware_unread_is_not_called_stale(tmp_path):
    message = failure(*link_check(spark_hosts({DEVICES[0]: with_figure("15.02"), DEVICES[1]: GOOD_RUN}, tmp_path)))
    assert "15.02 Gb/s is in the band of a stale CX7 initialisation (NVIDIA: 8-25 Gb/s)" in message, message
    assert "could not be read, so the state is not named" in message and "AC power cycle" not in message


FIRMWARE = "28.45.4028 (NVD0000000087)"
IN_ORDER = {"width": 4, "firmware": {"spark-1": FIRMWARE, "spark-2": FIRMWARE}}


def test_a_link_in_nvidia_s_band_with_every_fact_in_order_is_the_stale_initialisation(tmp_path):
    message = failure(*link_check(spark_hosts({DEVICES[0]: with_figure("15.02"), DEVICES[1]: GOOD_RUN}, tmp_path,
                                              facts=IN_ORDER)))
    assert "spark-1 enp1s0f1np1 (rocep1s0f1) -> spark-2 enp1s0f1np1 (rocep1s0f1) (ib_write_bw)" in message, message
    assert "a stale initialisation of the ConnectX-7: 15.02 Gb/s on a link that reports 200000Mb/s" in message
    assert f"same firmware at both ends ({FIRMWARE})" in message and "full AC power cycle of both units" in message


@pytest.mark.parametrize("facts, named", [
    ({**IN_ORDER, "width": 2}, "PCIe 32.0 GT/s PCIe x2 (max 32.0 GT/s PCIe x4)"),
    ({**IN_ORDER, "firmware": {"spark-1": FIRMWARE, "spark-2": "28.44.1036 (NVD0000000087)"}},
     "the two ends run different NIC firmware"),
])
def test_the_same_figure_beside_a_fact_out_of_order_names_that_fact_not_the_stale_state(tmp_path, facts, named):
    message = failure(*link_check(spark_hosts({DEVICES[0]: with_figure("15.02"), DEVICES[1]: GOOD_RUN}, tmp_path,
                                              facts=facts)))
    assert named in message and "stale" not in message, message


def test_a_slow_link_at_a_lower_negotiated_speed_is_named_by_its_speed(tmp_path):
    message = failure(*link_check(spark_hosts({DEVICES[0]: with_figure("15.02"), DEVICES[1]: GOOD_RUN}, tmp_path,
                                              speed_mbps=100000)))
    assert "did not negotiate 200000Mb/s: spark-1 enp1s0f1np1 (rocep1s0f1) at 100000Mb/s" in message, message
    assert "stale" not in message


# --- the rule itself: every fact must hold ---------------------------------------------------------

def ends(**changed) -> tuple[End, End]:
    healthy = {"speed_mbps": 200000, "pcie": "32.0 GT/s PCIe x4 (max 32.0 GT/s PCIe x4)", "pcie_full": True,
               "firmware": "28.45.4028 (NVD0000000087)"}
    return (End("spark-1 enp1s0f1np1 (rocep1s0f1)", **healthy),
            End("spark-2 enp1s0f1np1 (rocep1s0f1)", **{**healthy, **changed}))


def test_the_stale_state_and_its_recovery_are_named_when_every_fact_holds():
    cause = staleinit.cause(15.0, ends())
    assert cause.startswith("a stale initialisation of the ConnectX-7: 15 Gb/s on a link that reports 200000Mb/s")
    assert "full AC power cycle of both units" in cause and "60 seconds" in cause


@pytest.mark.parametrize("gbps, changed, named", [
    (15.0, {"speed_mbps": 100000}, "at 100000Mb/s"),
    (15.0, {"pcie": "32.0 GT/s PCIe x2 (max 32.0 GT/s PCIe x4)", "pcie_full": False}, "PCIe 32.0 GT/s PCIe x2"),
    (15.0, {"firmware": "28.44.1036 (NVD0000000087)"}, "different NIC firmware"),
    (15.0, {"pcie": None, "pcie_full": None}, "PCIe link could not be read"),
    (15.0, {"firmware": None}, "firmware could not be read"),
    (40.0, {}, None),     # under the floor, above NVIDIA's band: not that state, and the facts say nothing
    (7.9, {}, None),
])
def test_the_stale_state_is_never_named_when_one_fact_does_not_hold(gbps, changed, named):
    cause = staleinit.cause(gbps, ends(**changed))
    assert cause is None if named is None else named in cause, cause
    assert "stale initialisation of the ConnectX-7" not in (cause or "")


# --- the speed a link negotiated (test_cx7_speed): a lower one names the cable or switch port ------

@pytest.mark.parametrize("found, cause", [
    (LinkInfo("enp1s0f1np1", 100000, "Full", True), "the port negotiated 100000Mb/s: a cable or switch port rated lower"),
    (LinkInfo("enp1s0f1np1", None, None, False), "the link is down"),
])
def test_a_cx7_link_below_its_speed_names_why(found, cause):
    message = failure(cx7_checks.test_cx7_speed, spark_cx7(), SPARK2, answers(found))
    assert cause in message, message
    assert ("200G QSFP56" in message) == bool(found.link_detected)
