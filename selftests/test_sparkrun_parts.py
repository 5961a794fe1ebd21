"""rackproof.judging.sparkrun on the real sparkrun 0.4.2 answers of selftests/samples (see
test_probe_sparkrun.py): every field of the cluster definition is compared with the inventory and
the one that differs is named; a host `sparkrun setup check` could not probe is put on the part
of the preflight its error shows (the CX7 network, or SSH itself), and what that takes away
follows the Cordatus cards, unless the definition names a user the nodes were never set up for."""

from pathlib import Path

import pytest

from rackproof.judging import sparkrun
from rackproof.judging.capabilities import MULTI_NODE, SSH_MESH
from rackproof.inventory.model import load_inventory
from rackproof.probes.sparkrun import parse_cluster_show, parse_setup_check

SAMPLES = Path(__file__).parent / "samples"
SPARK2 = load_inventory(Path(__file__).parents[1] / "examples" / "spark2.toml")
WHERE = "spark-1 sparkrun cluster spark-pair"


def definition(name: str):
    return parse_cluster_show((SAMPLES / f"sparkrun_cluster_show_json_sim_0.4.2_{name}.json").read_text())


def on_cx7(written: tuple[str, ...]) -> list[sparkrun.DefinedHost]:
    """The hosts as placed on spark2's CX7 addresses."""
    nodes = {c.ip: n.name for n in SPARK2.nodes for c in n.cx7}
    return [sparkrun.DefinedHost(h, nodes.get(h), None, h in nodes) for h in written]


def differences(name: str) -> list[str]:
    found = definition(name)
    return [str(f) for f in sparkrun.definition_differences(WHERE, found, on_cx7(found.hosts), SPARK2)]


def test_the_definition_cordatus_makes_has_no_difference():
    assert differences("pair_cx7") == []


def test_a_definition_with_another_user_names_the_user_field_only():
    assert differences("other_user") == [
        f"{WHERE}: user: expected nvidia (the inventory's login), found ubuntu. Usual cause: sparkrun logs in to "
        "every host over SSH as the definition's user, and the nodes are set up for nvidia: sparkrun cluster update "
        "spark-pair --user nvidia"]


def test_a_definition_with_the_workers_first_names_the_hosts_field_only():
    (found,) = differences("workers_first")
    assert found.startswith(f"{WHERE}: hosts: node order (head first): expected spark-1, spark-2, found spark-2, "
                            "spark-1. Usual cause: the head (node_0) serves the API")


def unreached(sample: str, host: str):
    return parse_setup_check((SAMPLES / sample).read_text()).hosts[host].error


@pytest.mark.parametrize("sample, host, cx7, part", [
    ("sparkrun_setup_check_json_sim_0.4.2_cx7_down.json", "192.168.100.11", True, sparkrun.CX7_NETWORK),
    ("sparkrun_setup_check_json_sim_0.4.2_cx7_down.json", "192.168.100.11", False, sparkrun.SSH),
    ("sparkrun_setup_check_json_sim_0.4.2_other_user.json", "192.168.100.11", True, sparkrun.SSH),
    ("sparkrun_setup_check_json_0.4.2_host_refused.json", "127.0.0.1", True, sparkrun.SSH),
])
def test_an_unreached_host_is_put_on_the_part_its_error_shows(sample, host, cx7, part):
    assert sparkrun.unreached_part(unreached(sample, host), cx7) == part


def test_the_cause_of_a_refused_login_is_the_definitions_user_when_it_differs():
    error = unreached("sparkrun_setup_check_json_sim_0.4.2_other_user.json", "192.168.100.11")
    assert sparkrun.unreached_cause(sparkrun.SSH, "192.168.100.11", error, definition("other_user"), SPARK2) == (
        "sparkrun logs in as ubuntu, the definition's user, and the inventory's login is nvidia: sparkrun cluster "
        "update spark-pair --user nvidia")
    assert sparkrun.unreached_cause(sparkrun.SSH, "192.168.100.11", error, definition("pair_cx7"), SPARK2) \
        .startswith("key not authorised (public key missing from authorized_keys, or wrong user): sparkrun drives")


@pytest.mark.parametrize("parts, name, taken", [
    ({sparkrun.SSH}, "pair_cx7", (SSH_MESH, True)),
    ({sparkrun.SSH}, "other_user", None),
    ({sparkrun.CX7_NETWORK}, "pair_cx7", (MULTI_NODE, False)),
    ({sparkrun.RUNTIME}, "pair_cx7", None),
    ({sparkrun.CX7_NETWORK, sparkrun.RUNTIME}, "pair_cx7", None),
])
def test_what_a_failed_part_takes_away(parts, name, taken):
    assert sparkrun.takes_away(parts, definition(name), SPARK2) == taken


@pytest.mark.parametrize("key, part", [("ssh_mesh", sparkrun.SSH), ("cx7", sparkrun.CX7_NETWORK),
                                       ("rdma", sparkrun.CX7_NETWORK), ("docker_usable", sparkrun.RUNTIME)])
def test_each_setup_item_belongs_to_a_part(key, part):
    assert sparkrun.part_of(key) == part
