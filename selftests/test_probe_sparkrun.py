"""rackproof.probes.sparkrun against the real sparkrun 0.4.2 CLI (PyPI, Python 3.12) run on the
simulated spark2's head node over SSH, captured as printed (stderr with 2>&1, as the probes read it):

- sparkrun_version_sim_0.4.2.txt: `sparkrun --version`;
- sparkrun_cluster_show_json_sim_0.4.2_*.json: `sparkrun cluster show spark-pair --json` for the
  definition `sparkrun cluster create` made on the CX7 addresses (pair_cx7), and after
  `sparkrun cluster update --hosts` put the worker first, the management addresses, the head alone,
  after `--transfer-interface mgmt`, and after `--user ubuntu` (other_user: a login the nodes do not
  have);
- sparkrun_cluster_show_sim_0.4.2_not_found.txt: the same for a cluster never defined;
- sparkrun_bash_command_not_found.txt: what bash said on the head with sparkrun off its PATH;
- sparkrun_setup_check_json_sim_0.4.2_*.json: `sparkrun setup check --cluster spark-pair --json`
  (2>&1) on the healthy pair (every item ok, CX7 and RDMA skipped: a namespace has no
  /sys/class/infiniband), with the worker's login out of the docker group and the head without
  sparkrun's sudoers rules (warn, warn, fail), with both CX7 links down (the worker
  unreachable), and with the definition's user `ubuntu` (other_user: both hosts refuse its login);
- sparkrun_setup_check_sim_0.4.2_not_found.txt: the same for a cluster never defined;
- sparkrun_setup_check_json_0.4.2_host_refused.json: `sparkrun setup check --hosts 127.0.0.1
  --json` run on this machine in a network namespace of its own, nothing listening on port 22.
"""

import json
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from rackproof.probes import ParseError
from rackproof.probes.sparkrun import (CLUSTER_SHOW, SETUP_CHECK, SPARKRUN_VERSION, SetupItem, parse_cluster_show,
                                       parse_setup_check, parse_version)

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


def test_a_definition_with_another_user():
    definition = parse_cluster_show(read("sparkrun_cluster_show_json_sim_0.4.2_other_user.json"))
    assert (definition.hosts, definition.user) == (("192.168.100.10", "192.168.100.11"), "ubuntu")


def test_a_definition_that_transfers_over_the_management_network():
    definition = parse_cluster_show(read("sparkrun_cluster_show_json_sim_0.4.2_transfer_mgmt.json"))
    assert (definition.hosts, definition.transfer_interface) == (("192.168.100.10", "192.168.100.11"), "mgmt")


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


WORKER, HEAD = "192.168.100.11", "192.168.100.10"


def statuses(report) -> dict[str, dict[str, str]]:
    return {host: {i.key: i.status for i in r.items} for host, r in report.hosts.items()}


def test_the_setup_check_of_a_healthy_pair():
    report = parse_setup_check(read("sparkrun_setup_check_json_sim_0.4.2_healthy.json"))
    assert report.cluster == "spark-pair" and list(report.hosts) == [HEAD, WORKER]
    for host, items in statuses(report).items():
        assert items == {"hardware": "ok", "executor": "ok", "setup_plan": "ok", "docker_installed": "ok",
                         "docker_group": "ok", "docker_usable": "ok", "nvidia_ctk": "ok", "sudoers": "ok",
                         "ssh_identity": "ok", "ssh_mesh": "ok", "cx7": "skip", "rdma": "skip"}, host
        assert report.hosts[host].reachable and report.hosts[host].error == ""


def test_the_setup_check_items_with_sparkruns_detail_and_fix():
    report = parse_setup_check(read("sparkrun_setup_check_json_sim_0.4.2_docker_group_sudoers.json"))
    gaps = {host: [i for i in r.items if i.status in ("warn", "fail")] for host, r in report.hosts.items()}
    assert gaps[HEAD] == [SetupItem("sudoers", "Sudoers entries (fix-permissions, clear-cache)", "warn",
                                    "missing: fix-permissions, clear-cache", "sparkrun setup wizard --cluster "
                                    "spark-pair \u2014 or setup fix-permissions/clear-cache with --save-sudo")]
    assert [(i.key, i.status, i.detail, i.guidance) for i in gaps[WORKER]] == [
        ("docker_group", "warn", "user 'nvidia' is not in the docker group", "sparkrun setup docker-group --cluster spark-pair"),
        ("docker_usable", "fail", "cannot run docker without sudo",
         "sparkrun setup docker-group --cluster spark-pair, then re-login")]


@pytest.mark.parametrize("name, host, error", [
    ("sparkrun_setup_check_json_sim_0.4.2_cx7_down.json", WORKER,
     "ssh: connect to host 192.168.100.11 port 22: No route to host"),
    ("sparkrun_setup_check_json_sim_0.4.2_other_user.json", WORKER,
     "ubuntu@192.168.100.11: Permission denied (publickey)."),
    ("sparkrun_setup_check_json_0.4.2_host_refused.json", "127.0.0.1",
     "ssh: connect to host 127.0.0.1 port 22: Connection refused")])
def test_an_unreachable_host(name, host, error):
    readiness = parse_setup_check(read(name)).hosts[host]
    assert (readiness.reachable, readiness.error, readiness.items) == (False, error, ())


def test_the_setup_check_of_a_cluster_never_defined():
    assert parse_setup_check(read("sparkrun_setup_check_sim_0.4.2_not_found.txt")) is None
    assert SETUP_CHECK.command(cluster="spark-pair") == \
        "SPARKRUN_NO_TELEMETRY=1 sparkrun setup check --cluster spark-pair --json 2>&1"


items = st.lists(st.fixed_dictionaries({
    "key": st.from_regex(r"[a-z_]{1,20}", fullmatch=True), "label": st.text(max_size=30),
    "status": st.sampled_from(["ok", "warn", "fail", "skip"]), "detail": st.text(max_size=30),
    "guidance": st.text(max_size=30)}), max_size=12)


@given(st.dictionaries(st.from_regex(r"[a-z0-9.]{1,20}", fullmatch=True), items, min_size=1, max_size=6))
def test_any_setup_check_reads_back(rows):
    doc = {"cluster": "c", "hosts": list(rows), "unreachable": [], "critical_gaps": 0, "advisories": 0,
           "results": {h: {"reachable": True, "steps": [], "checks": checks} for h, checks in rows.items()}}
    report = parse_setup_check(json.dumps(doc))
    assert {h: [(i.key, i.label, i.status, i.detail, i.guidance) for i in r.items] for h, r in report.hosts.items()} == \
        {h: [tuple(c[k] for k in ("key", "label", "status", "detail", "guidance")) for c in checks]
         for h, checks in rows.items()}


@pytest.mark.parametrize("text", [
    '{"hosts": ["a"], "results": {}}',
    '{"hosts": ["a"], "results": {"a": {"reachable": "yes", "checks": []}}}',
    '{"hosts": ["a"], "results": {"a": {"reachable": true, "checks": [{"key": "x", "label": "X", "status": "maybe"}]}}}',
    '{"hosts": ["a"], "results": {"a": {"reachable": true, "checks": [{"key": 1, "label": "X", "status": "ok"}]}}}',
    '{"hosts": "a", "results": {}}', "Error: Cluster 'x' not found. Nope\n"])
def test_an_unreadable_setup_check(text):
    with pytest.raises(ParseError):
        parse_setup_check(text)
