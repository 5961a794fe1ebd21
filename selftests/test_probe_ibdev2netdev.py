"""rackproof.probes.ibdev2netdev against a DGX Spark pair's real `ibdev2netdev` output."""

from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from rackproof.probes import ParseError
from rackproof.probes.ibdev2netdev import RdmaMap, parse_ibdev2netdev, twins
from rackproof_sim.formats.ibdev2netdev import render_ibdev2netdev

SAMPLES = Path(__file__).parent / "samples"
SPARK = "ibdev2netdev_dgx_spark.txt"
SPARK_MAPS = {
    RdmaMap("roceP2p1s0f0", 1, "enP2p1s0f0np0", False),
    RdmaMap("roceP2p1s0f1", 1, "enP2p1s0f1np1", True),
    RdmaMap("rocep1s0f0", 1, "enp1s0f0np0", False),
    RdmaMap("rocep1s0f1", 1, "enp1s0f1np1", True),
}


def sample(name: str) -> str:
    return (SAMPLES / name).read_text()


def test_dgx_spark_both_logical_interfaces_of_the_cabled_port_are_up():
    maps = parse_ibdev2netdev(sample(SPARK))
    assert set(maps) == SPARK_MAPS
    assert {m.netdev for m in maps if m.up} == {"enp1s0f1np1", "enP2p1s0f1np1"}


def test_line_order_does_not_matter():
    lines = sample(SPARK).splitlines()
    assert set(parse_ibdev2netdev("\n".join(reversed(lines)))) == SPARK_MAPS


def test_shell_noise_around_the_output_is_skipped():
    # the playbook shows the output under a prompt line, inside a markdown document
    assert set(parse_ibdev2netdev(sample("playbook_connect_two_sparks_steps2-5.md"))) == SPARK_MAPS


def test_no_rdma_device_prints_nothing():
    # a DGX Spark removes its ConnectX-7 from PCI while no cable is in
    assert parse_ibdev2netdev("") == parse_ibdev2netdev("\n") == ()


def test_other_rdma_tools_output_is_not_ibdev2netdev():
    with pytest.raises(ParseError):
        parse_ibdev2netdev(sample("rdma_link_dgx_spark_gx10_all_up.txt"))


def test_render_is_the_real_format():
    assert render_ibdev2netdev(parse_ibdev2netdev(sample(SPARK))) == sample(SPARK)


rdma_maps = st.builds(
    RdmaMap,
    device=st.builds(str.__add__, st.sampled_from(["rocep", "roceP2p", "mlx5_"]),
                     st.text("0123456789fs", max_size=8)),
    port=st.integers(1, 2),
    netdev=st.builds(str.__add__, st.sampled_from(["enp", "enP2p"]), st.text("0123456789fnps", max_size=10)),
    up=st.booleans(),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(rdma_maps, max_size=6).map(tuple))
def test_render_round_trip(maps):
    assert parse_ibdev2netdev(render_ibdev2netdev(maps)) == maps



def test_the_twins_on_each_pcie_path():
    found = twins(parse_ibdev2netdev((SAMPLES / "ibdev2netdev_dgx_spark.txt").read_text()))
    assert found == {"enp1s0f0np0": "enp1s0f1np1", "enp1s0f1np1": "enp1s0f0np0",
                     "enP2p1s0f0np0": "enP2p1s0f1np1", "enP2p1s0f1np1": "enP2p1s0f0np0"}


# --- real outputs of other machines (samples/SOURCES.md) ---

def test_a_rhel_node_with_roce_and_infiniband_ports_one_down():
    maps = parse_ibdev2netdev((SAMPLES / "ibdev2netdev_rhel7.3_cx4lx_roce_and_ib_one_down.txt").read_text())
    assert maps == (RdmaMap("mlx5_0", 1, "eth4", True), RdmaMap("mlx5_1", 1, "eth5", False),
                    RdmaMap("mlx5_2", 1, "ib2", True))


def test_ten_connectx_ports_of_an_ubuntu_22_04_doca_host_all_up():
    maps = parse_ibdev2netdev((SAMPLES / "ibdev2netdev_ubuntu22.04_doca_ofed_ten_up.txt").read_text())
    assert [m.device for m in maps] == [f"mlx5_{k}" for k in range(10)]
    assert all(m.up and m.port == 1 for m in maps) and maps[2].netdev == "ens9f1np1"
    assert twins(maps) == {"ens9f0np0": "ens9f1np1", "ens9f1np1": "ens9f0np0"}


def test_a_release_that_prints_no_port_is_read_not_refused():
    """NVIDIA's bobber docs show a DGX A100's twelve IB ports as "mlx5_0 ==> ib0 (Up)" (no
    "port N"); the old parser refused it as not ibdev2netdev output."""
    maps = parse_ibdev2netdev((SAMPLES / "ibdev2netdev_dgx_a100_bobber_doc_no_port.txt").read_text())
    assert len(maps) == 12 and all(m.up and m.port is None for m in maps)
    assert (maps[2].device, maps[2].netdev) == ("mlx5_10", "ib10")   # in the order printed (sorted as text)
