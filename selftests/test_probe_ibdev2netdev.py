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
