"""`rackproof sim up thor|spark --nodes N`: racks of any size from the rules of the documents'
racks, named so that the simulator can make the same rack again, and refused with one line
where the simulator cannot build them."""

from __future__ import annotations

import argparse

import pytest

from rackproof.inventory import kinds

from rackproof.judging import addressing
from rackproof.inventory.model import FINISHED, load_inventory
from rackproof_sim import cli
from rackproof_sim.netns import neighbour_entries
from rackproof_sim.profiles import CARRIES_MBIT, SCALE, generate, generated_name, get_profile, thor5
from rackproof_sim.rack import inventory_toml
from rackproof_sim.state import RackState
from rackproof_sim.util import SimError


def test_a_generated_thor_rack_follows_thor5s_rules():
    made, five = get_profile("thor-n5-l4"), thor5()
    for new, old in zip(made.nodes, five.nodes):
        assert (new.name, new.address, new.mgmt_ip, new.bond_lanes) == (old.name, old.address, old.mgmt_ip, old.bond_lanes)
        assert [(lane.name, lane.switch_port, lane.cable) for lane in new.lanes] == \
               [(lane.name, lane.switch_port, lane.cable) for lane in old.lanes]


@pytest.mark.parametrize("platform, nodes, lanes, engines", [("thor", 32, 1, 0), ("thor", 8, 4, 3), ("spark", 4, 1, 0)])
def test_a_generated_rack_is_made_again_from_its_name(platform, nodes, lanes, engines):
    name = generated_name(platform, nodes, lanes, engines)
    again = get_profile(name)
    assert again.name == name and len(again.nodes) == nodes
    assert sum(1 for n in again.nodes for lane in n.lanes if lane.connected) == (nodes * lanes if platform == "thor" else 0)
    assert len(again.engines) == engines


def test_a_rack_of_many_engines_routes_each_by_a_model_of_its_own(tmp_path):
    # (with more than three engines, models repeated and the inventory refused the rack)
    profile = generate("thor", 8, 1, 8)
    (tmp_path / "cluster.toml").write_text(inventory_toml(profile, RackState("many-engines")))
    engines = load_inventory(tmp_path / "cluster.toml").engines
    assert len(engines) == 8 and len({e.model for e in engines}) == 8


def test_a_generated_spark_rack_measures_each_cx7_link_of_every_ordered_pair_in_rounds(tmp_path):
    """`sim up spark --nodes 4`: every node shares both CX7 subnets with every other, so each of
    the 12 ordered pairs has two links, measured in 3 rounds in which each node sends once and
    receives once (as the Thor lanes' rounds)."""
    (tmp_path / "cluster.toml").write_text(inventory_toml(generate("spark", 4), RackState("spark-4")))
    cluster = load_inventory(tmp_path / "cluster.toml").at(FINISHED)
    rounds = kinds.rounds("cx7_pair", cluster)
    assert len(rounds) == 3 and sorted(p for r in rounds for p in r) == sorted(
        (a.name, b.name) for a in cluster.nodes for b in cluster.nodes if a != b)
    for round_ in rounds:
        assert sorted(s for s, _ in round_) == sorted(d for _, d in round_) == [n.name for n in cluster.nodes]
    assert {len(addressing.cx7_links(a, b)) for a in cluster.nodes for b in cluster.nodes if a != b} == {2}


def test_a_large_rack_is_shaped_to_what_this_machine_carries_at_once():
    big = get_profile("thor-n32")
    lanes = len(big.nodes)
    assert big.scale < SCALE and lanes * big.shaped_mbit == pytest.approx(CARRIES_MBIT)
    assert thor5().scale == SCALE and big.switch["ports"] >= 125


def test_the_arp_room_grows_with_the_rack():
    assert neighbour_entries(thor5()) < 1024 < neighbour_entries(get_profile("thor-n32"))


@pytest.mark.parametrize("platform, nodes, lanes, engines, said", [
    ("thor", 1, 1, 0, "--nodes 1: a generated rack has 2 to 64 nodes"),
    ("thor", 65, 1, 0, "--nodes 65"),
    ("thor", 4, 5, 0, "--lanes 5: a Thor has 1 to 4"),
    ("thor", 4, 1, 5, "--engines 5: 0 to 4"),
    ("spark", 4, 2, 0, "--lanes and --engines are Thor options"),
])
def test_what_cannot_be_built_is_refused_in_one_line(platform, nodes, lanes, engines, said):
    with pytest.raises(SimError, match=said):
        generate(platform, nodes, lanes, engines)


def test_sizes_are_for_generated_racks_only_and_run_reads_them_before_the_dashes():
    with pytest.raises(SimError, match="--nodes is for the generated racks"):
        cli._profile_name(argparse.Namespace(profile="thor5", nodes=4, lanes=None, engines=None))
    run = argparse.Namespace(profile="thor", name=None, nodes=None, lanes=None, engines=None,
                             pytest_args=["--nodes", "32", "--lanes=2", "--", "-n", "2"])
    assert cli._run_args(run) == ["-n", "2"] and cli._profile_name(run) == "thor-n32-l2"
    with pytest.raises(SimError, match="--nodes wants a number"):
        cli._run_args(argparse.Namespace(**{**vars(run), "pytest_args": ["--nodes", "many", "--"]}))
