"""rackproof.probes.sparkrun against the real sparkrun 0.4.2 CLI (PyPI, Python 3.12) run on the
simulated spark2's head node over SSH, captured as printed (stderr with 2>&1, as the probes read it):

- sparkrun_version_sim_0.4.2.txt: `sparkrun --version`;
- sparkrun_cluster_show_json_sim_0.4.2_*.json: `sparkrun cluster show spark-pair --json` for the
  definition `sparkrun cluster create` made on the CX7 addresses (pair_cx7), and after
  `sparkrun cluster update --hosts` put the worker first, the management addresses, the head alone;
- sparkrun_cluster_show_sim_0.4.2_not_found.txt: the same for a cluster never defined;
- sparkrun_bash_command_not_found.txt: what bash said on the head with sparkrun off its PATH.
"""

import json
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from rackproof.probes import ParseError
from rackproof.probes.sparkrun import CLUSTER_SHOW, SPARKRUN_VERSION, parse_cluster_show, parse_version

SAMPLES = Path(__file__).parent / "samples"


def read(name: str) -> str:
    return (SAMPLES / name).read_text()


def test_the_version():
    assert parse_version(read("sparkrun_version_sim_0.4.2.txt")) == "0.4.2"


def test_no_sparkrun_on_the_path():
    assert parse_version(read("sparkrun_bash_command_not_found.txt")) is None
    assert parse_version("sh: 1: sparkrun: not found\n") is None


@pytest.mark.parametrize("name, hosts", [
    ("pair_cx7", ("192.168.100.10", "192.168.100.11")), ("workers_first", ("192.168.100.11", "192.168.100.10")),
    ("mgmt_addresses", ("192.168.77.11", "192.168.77.12")), ("head_alone", ("192.168.100.10",))])
def test_the_definitions_hosts_in_node_order(name, hosts):
    definition = parse_cluster_show(read(f"sparkrun_cluster_show_json_sim_0.4.2_{name}.json"))
    assert (definition.name, definition.hosts, definition.user, definition.transfer_interface) == (
        "spark-pair", hosts, "nvidia", "cx7")


def test_a_cluster_never_defined():
    assert parse_cluster_show(read("sparkrun_cluster_show_sim_0.4.2_not_found.txt")) is None


def test_the_commands_turn_telemetry_off():
    assert SPARKRUN_VERSION.command() == "SPARKRUN_NO_TELEMETRY=1 sparkrun --version 2>&1"
    assert CLUSTER_SHOW.command(cluster="spark-pair") == \
        "SPARKRUN_NO_TELEMETRY=1 sparkrun cluster show spark-pair --json 2>&1"


hosts = st.lists(st.from_regex(r"[a-z0-9][a-z0-9.-]{0,30}", fullmatch=True), min_size=1, max_size=8)


@given(hosts, st.none() | st.text(max_size=10))
def test_any_definition_reads_back(listed, user):
    doc = json.loads(read("sparkrun_cluster_show_json_sim_0.4.2_pair_cx7.json")) | {"hosts": listed, "user": user}
    assert parse_cluster_show(json.dumps(doc)).hosts == tuple(listed)


@pytest.mark.parametrize("text", ["", "{}", '{"name": "x", "hosts": "a,b"}', '{"name": "x", "hosts": [1]}',
                                  '{"name": "x", "hosts": ["a"], "user": 5}', "Error: something else\n"])
def test_unreadable(text):
    with pytest.raises(ParseError):
        parse_cluster_show(text)


@pytest.mark.parametrize("text", ["", "sparkrun 0.4.2\n", "Usage: sparkrun [OPTIONS]\n"])
def test_unreadable_version(text):
    with pytest.raises(ParseError):
        parse_version(text)
