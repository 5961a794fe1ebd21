"""Generated racks. One of 32 nodes (`rackproof sim up thor --nodes 32`): the SSH mesh, 992
ordered pairs tried all at once (each node fans out to its peers in one command) on the nodes'
stock sshd limits, names the failing pair alone and sheds no login (every other pair passes), and
a node the controller cannot reach costs the run one connect timeout, not one per check (both
faults planted for one run of the mesh: it is most of the module's time); one of 2 nodes is
built with 1, 2, 3 or 4 lanes each, and the whole suite accepts it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rackproof.inventory.model import load_inventory

from selftests.simrack import SimRack, rack_marks, with_connect_budget
from selftests.suite import run_suite

pytestmark = rack_marks()

MESH = "tests_ssh/test_ssh_mesh.py"
NODES = [f"thor-{i}" for i in range(1, 33)]


@pytest.fixture(scope="module")
def thor32():
    with SimRack("thor-n32") as rack:
        yield rack


def mesh(pytester, rack: SimRack, inventory: Path | None = None):
    return run_suite(pytester, f"--inventory={inventory or rack.inventory}", MESH, netns=rack.rack.topo.bench)


def test_a_rack_of_32_is_generated_from_the_rules_of_thor5(thor32):
    inventory = load_inventory(thor32.inventory)
    assert [n.name for n in inventory.nodes] == NODES
    last = inventory.nodes[-1]
    assert (last.address, last.lanes[0].switch_port, last.lanes[0].cable) == ("10.10.0.42/24", 125, "thor-32/1")
    assert inventory.switch.ports >= 125 and inventory.ssh.fanout == 2


def test_one_key_removed_fails_exactly_its_pair_and_a_node_out_of_reach_costs_one_connect_timeout(pytester, thor32,
                                                                                                    tmp_path):
    # both in one run of the mesh (992 pairs): the key's pair is neither thor-17's nor the controller's
    inventory = with_connect_budget(thor32.inventory, 2, tmp_path)
    with thor32.planted("thor-7", "ssh-key-missing", "thor-29"), thor32.planted("thor-17", "node-unreachable"):
        run = mesh(pytester, thor32, inventory)
    pair = "test_ssh_mesh::test_passwordless_ssh[thor-7->thor-29]"
    own = {f"test_ssh_mesh::test_passwordless_ssh[thor-17->{n}]" for n in NODES if n != "thor-17"}
    own.add("test_ssh_mesh::test_same_login_on_every_node[thor-17]")
    assert len([t for t in run.outcomes if "test_passwordless_ssh[" in t]) == 32 * 31
    # no login shed on OpenSSH's MaxStartups 10:30:100 and MaxSessions 10 (rackproof_sim.node): the
    # fan-out stays under them, so every other pair passes and none errs
    assert run.failed == own | {pair}, sorted(run.failed ^ (own | {pair}))[:10]
    assert run.with_outcome("error") == set(), run.output
    assert "key not authorised" in run.messages[pair], run.messages[pair]
    assert all("thor-17 is unreachable" in run.messages[t] for t in own)
    # every peer still reaches thor-17 over the cluster network (only its management link is down)
    assert run.outcomes["test_ssh_mesh::test_passwordless_ssh[thor-1->thor-17]"] == "passed"
    doc = json.loads((run.run_dir / "results.json").read_text())
    # the pair's own row is its evidence: the command as if run alone, its exit status and stderr
    (test,) = [t for t in doc["tests"] if t["id"].endswith("[thor-7->thor-29]") and "passwordless_ssh" in t["id"]]
    row = [e for e in test["evidence"] if e["command"].endswith(" thor-29 hostname")]
    assert len(row) == 1 and row[0]["exit_status"] == 255 and "Permission denied" in row[0]["stderr"], row
    timeout = load_inventory(thor32.inventory).ssh.connect_timeout
    # one attempt waited out the timeout; every check of thor-17 shows it (the mesh's is shared)
    waited = {(e["command"], e["started"]) for t in doc["tests"] for e in t["evidence"]
              if e["node"] == "thor-17" and e["duration"] >= timeout}
    assert len(waited) == 1, waited


@pytest.mark.parametrize("lanes", [1, 2, 3, 4])
def test_a_rack_of_any_lane_count_is_built_and_the_suite_accepts_it(pytester, lanes):
    # (with 2 and 3 lanes the bond once listed all four lanes, the uncabled ones in switch port None)
    with SimRack(f"thor-n2-l{lanes}" if lanes > 1 else "thor-n2") as rack:
        run = run_suite(pytester, f"--inventory={rack.inventory}", netns=rack.rack.topo.bench)
        bonds = load_inventory(rack.inventory).nodes[0].bond
    assert "verdict: ACCEPTED" in run.output, run.output
    skipped = {t for t, outcome in run.outcomes.items() if outcome == "skipped"}
    assert run.outcomes and set(run.outcomes.values()) - {"skipped"} == {"passed"}, run.output
    # one lane is no bond: the bonded -P 4 pairs say so, and nothing else is left out
    assert skipped == (set() if lanes > 1 else {t for t in run.outcomes if "bonded" in t}), run.output
    assert lanes > 1 or run.output.count("not both bonded in the inventory") == 2
    links = [t for t in run.outcomes if "test_lane_link_detected[thor-1:" in t]
    assert len(links) == lanes and (bonds is None) == (lanes == 1)
    if lanes > 1:
        assert list(bonds.lanes) == [f"mgbe{k}_0" for k in range(lanes)]
        assert {"test_bond::test_bond_state[thor-1]", "test_bond::test_bond_state[thor-2]"} <= set(run.outcomes)
