"""cluster.toml: both documents' clusters load; every mistake is named by its field path."""

import subprocess
import sys

import pytest

from rackproof.inventory.model import InventoryError, load_inventory, parse_inventory
from selftests.suite import EXAMPLES, run_suite

THOR5 = (EXAMPLES / "thor5.toml").read_text()

# three planted mistakes: a typo'd key, an address without its prefix, a switch port used twice
PLANTED = (THOR5.replace('user = "nvidia"', 'usr = "nvidia"', 1)
           .replace('address = "10.10.0.13/24"', 'address = "10.10.0.13"')
           .replace("switch_port = 7,", "switch_port = 3,"))
EXPECTED_LINES = [
    "cluster.usr: unknown field; did you mean 'user'?",
    "nodes[2].address: '10.10.0.13' has no prefix length; write it as 10.10.0.13/24",
    "nodes[1].lanes[2].switch_port: port 3 is already used by thor-1 mgbe2_0",
]


def test_the_documents_clusters_load():
    thor = load_inventory(EXAMPLES / "thor5.toml")
    assert [n.name for n in thor.nodes] == [f"thor-{i}" for i in range(1, 6)]
    assert thor.node("thor-4").ip == "10.10.0.14" and thor.node("thor-4").prefixlen == 24
    assert [lane.switch_port for lane in thor.node("thor-2").lanes] == [5, 6, 7, 8]
    assert thor.expect.lane_speed_mbps == 25000 and thor.switch.fec == "RS"
    assert [e.node for e in thor.engines] == ["thor-1", "thor-2", "thor-3"]
    spark = load_inventory(EXAMPLES / "spark2.toml")
    assert spark.head.name == "spark-1"
    assert [c.address for c in spark.node("spark-2").cx7] == ["192.168.100.11/24", "192.168.101.11/24"]
    assert spark.expect.lane_speed_mbps == 200000 and spark.expect.roce_floor_gbps == 180


def test_steps_follow_the_order_to_build_it():
    thor = load_inventory(EXAMPLES / "thor5.toml")
    assert [n.name for n in thor.at(3).nodes] == ["thor-1", "thor-2"]
    assert len(thor.at(3).lanes) == 2 and len(thor.at(7).lanes) == 5 and len(thor.at(8).lanes) == 20
    assert thor.at(3).cluster_interface(thor.node("thor-1")) == "mgbe0_0"
    assert thor.at(8).cluster_interface(thor.node("thor-1")) == "bond0"
    assert thor.at(3).expect is thor.expect and thor.at(3).node("thor-5") is thor.node("thor-5")


def test_expectations_can_be_overridden_in_the_file():
    inv = parse_inventory(THOR5.replace('[expect]', '[expect]\nlane_floor_fraction = 0.8\nmtu = 9000'))
    assert inv.expect.lane_floor_fraction == 0.8 and inv.expect.mtu == 9000
    assert inv.expect.lane_speed_mbps == 25000  # the platform default stays


def test_three_planted_mistakes_are_all_reported_with_field_paths():
    with pytest.raises(InventoryError) as err:
        parse_inventory(PLANTED, "bad.toml")
    assert sorted(err.value.problems) == sorted(EXPECTED_LINES)


@pytest.mark.parametrize("text, line", [
    ("not = [valid", "not valid TOML"),
    ('[cluster]\nname="x"\nplatform="thor"\nuser="u"\n', "nodes: required field is missing"),
    (THOR5.replace('key_env = "THOR_AGENT_KEY"', 'key_env = "K"\nkey_file = "/k"'), "agent: give exactly one of"),
    (THOR5.replace('node = "thor-3"', 'node = "thor-9"'), "engines[2].node: no node named thor-9"),
    (THOR5.replace('"mgbe3_0"]', '"mgbe7_0"]', 1), "nodes[0].bond.lanes[3]: thor-1 has no lane named mgbe7_0"),
    (THOR5.replace("switch_port = 20,", "switch_port = 30,"), "port 30 does not exist on sw-25g (ports 1-24)"),
])
def test_each_kind_of_mistake_is_one_clear_line(text, line):
    with pytest.raises(InventoryError) as err:
        parse_inventory(text, "c.toml")
    assert any(line in p for p in err.value.problems), err.value.problems
    assert "Traceback" not in str(err.value)


def test_cli_check_prints_every_problem_and_exits_2(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text(PLANTED)
    proc = subprocess.run([sys.executable, "-m", "rackproof.cli", "inventory", "check", str(bad)],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    for line in EXPECTED_LINES:
        assert f"{bad}: {line}" in proc.stderr
    assert "Traceback" not in proc.stderr
    ok = subprocess.run([sys.executable, "-m", "rackproof.cli", "inventory", "check", str(EXAMPLES / "thor5.toml")],
                        capture_output=True, text=True)
    assert ok.returncode == 0 and "5 nodes" in ok.stdout


def test_the_suite_given_a_bad_inventory_runs_no_test_and_prints_the_same_lines(pytester, tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text(PLANTED)
    run = run_suite(pytester, "--inventory", str(bad))
    assert not run.outcomes and run.exit_status == 4   # pytest's usage error
    for line in EXPECTED_LINES:
        assert f"{bad}: {line}" in run.output
    assert "Traceback" not in run.output
