"""The simulated spark2 rack (two DGX Sparks on one QSFP cable), and thor2 at build step 6:
the stand-ins print the real formats (read back with rackproof.probes), RoCE and NCCL really
exchange data over the CX7 links, and a link that goes down is seen everywhere it should be.

Needs root; one rack per module fixture, always taken down.
"""

from __future__ import annotations

import pytest

from rackproof.inventory.model import load_inventory
from rackproof.probes.ibdev2netdev import parse_ibdev2netdev
from rackproof.probes.nccl import parse_nccl
from rackproof.probes.nvidia_smi import parse_nvidia_smi_query
from rackproof.probes.perftest import parse_ib_write_bw
from rackproof_sim.profiles import get_profile
from selftests.simrack import SimRack, rack_marks

pytestmark = rack_marks()


@pytest.fixture(scope="module")
def spark():
    with SimRack("spark2") as r:
        yield r


def _ib_pair(r, device: str, server_ip: str) -> tuple[str, int]:
    server = f"timeout 20 ib_write_bw -d {device} -F --report_gbits > /tmp/ibsrv.txt 2>&1 </dev/null &"
    r.out("spark-2", server)
    import time
    time.sleep(0.3)
    result = r.ssh("spark-1", f"ib_write_bw -d {device} -F --report_gbits {server_ip}", timeout=40)
    return result.stdout + result.stderr, result.returncode


def test_inventory_and_the_cx7_interfaces(spark):
    inv = load_inventory(spark.inventory)
    assert [(c.name, c.rdma_device) for c in inv.node("spark-1").cx7] == [
        ("enp1s0f1np1", "rocep1s0f1"), ("enP2p1s0f1np1", "roceP2p1s0f1")]
    maps = {m.netdev: m.up for m in parse_ibdev2netdev(spark.out("spark-1", "ibdev2netdev"))}
    assert maps == {"enp1s0f1np1": True, "enP2p1s0f1np1": True, "enp1s0f0np0": False, "enP2p1s0f0np0": False}
    assert "Speed: 200000Mb/s" in spark.out("spark-2", "ethtool enP2p1s0f1np1")
    assert spark.out("spark-1", "stat -c '%a %U' /etc/netplan/40-cx7.yaml").strip() == "600 root"
    gpu = parse_nvidia_smi_query(spark.out("spark-1", "nvidia-smi --query-gpu=name,memory.total --format=csv,noheader"),
                                 ["name", "memory.total"])
    assert gpu == ({"name": "NVIDIA GB10", "memory.total": None},)


def test_ssh_both_ways_on_cx7_addresses(spark):
    assert spark.out("spark-1", "ssh -o BatchMode=yes 192.168.101.11 hostname").strip() == "spark-2"
    assert spark.out("spark-2", "ssh -o BatchMode=yes spark-1 hostname").strip() == "spark-1"
    assert spark.out("spark-1", "ping -c 1 -W 2 192.168.100.11").count("1 received") == 1


def test_roce_runs_over_each_logical_link(spark):
    for device, ip in (("rocep1s0f1", "192.168.100.11"), ("roceP2p1s0f1", "192.168.101.11")):
        text, code = _ib_pair(spark, device, ip)
        assert code == 0, text
        result = parse_ib_write_bw(text)
        assert result.device == device and 92 <= result.gbits_average <= 98


def test_nccl_all_gather_runs_one_job_across_both_nodes(spark):
    text = spark.out("spark-1", "mpirun -np 2 -H spark-1,spark-2 $HOME/nccl-tests/build/all_gather_perf "
                                "-b 1G -e 4G -f 2", timeout=60)
    result = parse_nccl(text)
    assert result.one_job and result.distinct_hosts == ("spark-1", "spark-2")
    assert result.avg_busbw_gbs >= 21.875 and result.ok


def test_roce_link_down_is_seen_on_both_nodes_and_fails_roce_and_nccl(spark):
    spark.fault("spark-2", "roce-link-down", "enp1s0f1np1")
    try:
        for node in ("spark-1", "spark-2"):
            maps = {m.netdev: m.up for m in parse_ibdev2netdev(spark.out(node, "ibdev2netdev"))}
            assert maps["enp1s0f1np1"] is False and maps["enP2p1s0f1np1"] is True
        text, code = _ib_pair(spark, "rocep1s0f1", "192.168.100.11")
        assert code != 0 and "Couldn't connect to 192.168.100.11:18515" in text
        nccl = spark.ssh("spark-1", "mpirun -np 2 -H 192.168.101.10,192.168.101.11 all_gather_perf -b 1G -e 1G",
                         timeout=60)
        assert nccl.returncode != 0 and "NCCL WARN" in nccl.stdout
    finally:
        spark.heal("spark-2", "roce-link-down")
    maps = {m.netdev: m.up for m in parse_ibdev2netdev(spark.out("spark-1", "ibdev2netdev"))}
    assert maps["enp1s0f1np1"] is True
    spark.out("spark-2", "pkill -u nvidia -f 'standins [i]b_write_bw' || true")


def test_jetpack_mismatch_on_a_spark_changes_its_dgx_os_release(spark):
    healthy = spark.out("spark-2", "cat /etc/dgx-release; nvidia-smi --query-gpu=driver_version --format=csv,noheader")
    spark.fault("spark-2", "jetpack-mismatch")
    try:
        faulty = spark.out("spark-2", "cat /etc/dgx-release; nvidia-smi --query-gpu=driver_version --format=csv,noheader")
    finally:
        spark.heal("spark-2", "jetpack-mismatch")
    assert 'DGX_SWBUILD_VERSION="7.2.3"' in healthy and 'DGX_SWBUILD_VERSION="7.1.0"' in faulty
    assert spark.out("spark-2", "cat /etc/dgx-release; nvidia-smi --query-gpu=driver_version --format=csv,noheader") \
        == healthy


def test_thor2_is_two_thors_at_step_6_one_lane_each():
    with SimRack("thor2") as r:
        inv = load_inventory(r.inventory)
        assert [(n.name, n.interface, [lane.switch_port for lane in n.lanes if lane.connected]) for n in inv.nodes] \
            == [("thor-1", "mgbe0_0", [1]), ("thor-2", "mgbe0_0", [5])]
        assert [(e.model, e.node, e.agent) for e in inv.engines] == [
            ("llama-3.1-8b", "thor-2", True), ("llama-3.1-8b", "thor-1", False)]
        assert "10.10.0.11/24" in r.out("thor-1", "ip -br addr show dev mgbe0_0")
        assert "Link detected: no" in r.out("thor-1", "ethtool mgbe3_0")
        assert "thor-tigress-agent --listen 127.0.0.1:8080 --engine llama-3.1-8b=thor-2:8081" in r.out("thor-1", "ps -eo args")
        assert r.chat("llama-3.1-8b")[0] == "200"
        mbit = r.iperf("thor-2", "thor-1", "10.10.0.11")
        shaped = get_profile("thor2").shaped_mbit      # the lane's 25 GbE at the rack's scale
        assert 0.9 * shaped <= mbit <= 1.1 * shaped, (mbit, shaped)
