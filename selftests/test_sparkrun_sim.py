"""sparkrun on the simulated spark2: the real sparkrun CLI on the head (spark-1) with the cluster
spark-pair made by `sparkrun cluster create` on the CX7 addresses. Each planted fault fails
exactly its check, naming the node(s) and what to do; without the CLI the definition's checks
are left to the runtime check's failure, not passed. sparkrun's own `setup check` is read item
by item: a FAIL fails that node's check with sparkrun's detail and fix, a WARN leaves it warned.
A definition whose user is not the nodes' login names the user field, and sparkrun's refused
logins are put on SSH with that cause, never on the CX7 link: the SSH mesh and multi-node work
stay available.
The guide's interface-name trap: netplan written for the Down twins fails the netplan check,
naming both. And the verdict as the Cordatus preflight words it, on whole runs: the CX7 link
down takes multi-node work away and leaves single-node launches; a broken SSH mesh blocks
everything and names the pair; a one-node cluster has only the runtime checks. (Healthy, they
pass with the real CLI's answers in the evidence: test_acceptance_two_nodes_sim's healthy spark2
run.)
"""

from __future__ import annotations

import json
import re
from contextlib import ExitStack

import pytest

from rackproof.judging.capabilities import SPARKRUN
from selftests.simrack import SimRack, rack_marks
from selftests.suite import run_suite

pytestmark = rack_marks()

CHECKS = ("tests_serving/test_sparkrun.py", "tests_ssh/test_ssh_mesh.py")


@pytest.fixture(scope="module")
def spark2():
    with SimRack("spark2") as rack:
        yield rack


def sparkrun_checks(pytester, rack):
    return run_suite(pytester, f"--inventory={rack.inventory}", *CHECKS, netns=rack.rack.topo.bench)


def short(test_id: str) -> str:
    return test_id.split("::")[-1]


def results(run) -> dict:
    return json.loads((run.run_dir / "results.json").read_text())


def capabilities(doc: dict) -> dict[str, str]:
    return {c["name"]: c["status"] for c in doc["verdict"]["capabilities"]}


# fault on the head -> the one check it fails, and what the message must name
FAULTS = {
    "sparkrun-order": ("test_the_definition_lists_the_nodes_head_first[spark-1]",
                       ("spark-1 sparkrun cluster spark-pair", "expected spark-1, spark-2, found spark-2, spark-1",
                        "--hosts")),
    "sparkrun-one-node": ("test_the_definition_lists_the_nodes_head_first[spark-1]",
                          ("expected spark-1, spark-2, found spark-1.",)),
    "sparkrun-on-mgmt": ("test_the_multi_node_path_uses_cx7_addresses[spark-1]",
                         ("192.168.77.11 (spark-1, on enP7s7)", "192.168.77.12 (spark-2, on enP7s7)", "CX7 address")),
    "sparkrun-missing": ("test_sparkrun_runs_on_the_head[spark-1]", ("spark-1", "not installed on the head")),
    "sparkrun-transfer-mgmt": ("test_the_multi_node_path_uses_cx7_addresses[spark-1]",
                               ("transfer interface mgmt", "--transfer-interface cx7")),
}


# faults that fail different checks share a run (the hosts' order and the transfer interface
# are two fields of the definition); the others edit the same field or hide the CLI
@pytest.mark.parametrize("planted", [("sparkrun-order", "sparkrun-transfer-mgmt"), ("sparkrun-one-node",),
                                     ("sparkrun-on-mgmt",), ("sparkrun-missing",)], ids="+".join)
def test_each_fault_fails_exactly_its_check(pytester, spark2, planted):
    with ExitStack() as stack:
        for fault in planted:
            stack.enter_context(spark2.planted("spark-1", fault))
        run = sparkrun_checks(pytester, spark2)
    assert {short(t) for t in run.failed} == {FAULTS[fault][0] for fault in planted}, run.output
    for fault in planted:
        check, named = FAULTS[fault]
        message = next(m for t, m in run.messages.items() if short(t) == check)
        for words in named:
            assert words in message, (words, message)
    if planted == ("sparkrun-missing",):    # the definition cannot be read: said, never passed
        skipped = {short(t) for t in run.with_outcome("skipped")}
        assert skipped == {"test_the_definition_lists_the_nodes_head_first[spark-1]",
                           "test_the_multi_node_path_uses_cx7_addresses[spark-1]",
                           f"{SETUP_CHECK}[spark-1]", f"{SETUP_CHECK}[spark-2]"}, run.output


def test_netplan_on_the_down_twins_fails_the_netplan_check_naming_both_interfaces(pytester, spark2):
    spark2.fault("spark-1", "netplan-down-twin")
    try:   # the addresses stay up: traffic cannot tell, only the file that a reboot applies
        run = run_suite(pytester, f"--inventory={spark2.inventory}", "tests_network/test_cx7.py", "-k",
                        "not roce and not nccl", netns=spark2.rack.topo.bench)
    finally:
        spark2.heal("spark-1", "netplan-down-twin")
    check = "test_netplan_file_persists_the_cx7_addresses[spark-1]"
    assert {short(t) for t in run.failed} == {check}, run.output
    message = next(m for t, m in run.messages.items() if short(t) == check)
    for words in ("netplan configures enp1s0f0np0 (Down in ibdev2netdev) while its twin enp1s0f1np1 (Up",
                  "enP2p1s0f0np0", "enP2p1s0f1np1", "interface-name trap"):
        assert words in message, (words, message)


SETUP_CHECK = "test_sparkrun_setup_check_finds_no_gap"
MISSING_IMAGE = "nvcr.io/nvidia/vllm:25.09-py3"


def test_the_runtime_faults_fail_their_checks_and_a_sparkrun_warning_warns(pytester, spark2):
    """Planted together, each fails exactly its own check: the image on the head, and the
    worker's Docker access (sparkrun: FAIL) with sparkrun's detail and fix; the head without
    sparkrun's sudoers rules (sparkrun: WARN) is warned, neither passed nor failed."""
    planted = [("spark-1", "image-missing"), ("spark-2", "docker-no-access"), ("spark-1", "sparkrun-sudoers-missing")]
    for node, fault in planted:
        spark2.fault(node, fault)
    try:
        run = run_suite(pytester, f"--inventory={spark2.inventory}", "tests_serving/test_sparkrun.py",
                        netns=spark2.rack.topo.bench)
    finally:
        for node, fault in planted:
            spark2.heal(node, fault)
    image_check = f"test_the_image_is_on_the_head[{MISSING_IMAGE}@spark-1]"
    assert {short(t) for t in run.failed} == {image_check, f"{SETUP_CHECK}[spark-2]"}, run.output
    messages = {short(t): m for t, m in run.messages.items()}
    assert f"container image {MISSING_IMAGE} is not in the head's Docker" in messages[image_check]
    assert f"docker pull {MISSING_IMAGE}" in messages[image_check]
    worker = messages[f"{SETUP_CHECK}[spark-2]"]
    for words in ("spark-2 (192.168.100.11, sparkrun setup check on spark-1): 1 critical gap (sparkrun runtime): "
                  "Docker usable without sudo (cannot run docker without sudo)",
                  "fix Docker usable without sudo: sparkrun setup docker-group --cluster spark-pair, then re-login",
                  "also warned: Docker group membership (user 'nvidia' is not in the docker group)"):
        assert words in worker, (words, worker)
    head = next(t for t in results(run)["tests"] if t["id"].endswith(f"{SETUP_CHECK}[spark-1]"))
    assert head["outcome"] == "warned", head
    assert head["message"].startswith("spark-1 (192.168.100.10, sparkrun setup check on spark-1): Sudoers entries "
                                      "(fix-permissions, clear-cache) (missing: fix-permissions, clear-cache)")
    assert "sparkrun setup wizard --cluster spark-pair" in head["message"]
    assert any('"status": "warn"' in e["stdout"] for e in head["evidence"]), "sparkrun's own JSON is the evidence"


def test_a_definition_with_another_user_names_the_user_and_blames_neither_cx7_nor_the_mesh(pytester, spark2):
    spark2.fault("spark-1", "sparkrun-other-user")
    try:
        run = sparkrun_checks(pytester, spark2)
    finally:
        spark2.heal("spark-1", "sparkrun-other-user")
    definition = "test_the_definition_lists_the_nodes_head_first[spark-1]"
    assert {short(t) for t in run.failed} == {definition, f"{SETUP_CHECK}[spark-1]", f"{SETUP_CHECK}[spark-2]"}, \
        run.output
    messages = {short(t): m for t, m in run.messages.items()}
    assert messages[definition].startswith("spark-1 sparkrun cluster spark-pair: user: expected nvidia (the "
                                           "inventory's login), found ubuntu."), messages[definition]
    for node, address in (("spark-1", "192.168.100.10"), ("spark-2", "192.168.100.11")):
        message = messages[f"{SETUP_CHECK}[{node}]"]
        assert message.startswith(f"{node} ({address}, sparkrun setup check on spark-1): SSH failed: ubuntu@{address}: "
                                  "Permission denied (publickey). Cause: sparkrun logs in as ubuntu, the definition's "
                                  "user, and the inventory's login is nvidia: sparkrun cluster update spark-pair --user "
                                  "nvidia"), message
        assert "CX7" not in message, message
    status = capabilities(results(run))
    assert (status["SSH mesh between the nodes"], status["multi-node work over the CX7 link"], status[SPARKRUN]) == \
        ("available", "available", "limited"), status


def test_with_the_cx7_link_down_multi_node_work_is_lost_and_single_node_launches_stay(pytester, spark2):
    links = ("enp1s0f1np1", "enP2p1s0f1np1")
    for link in links:
        spark2.fault("spark-2", "roce-link-down", link)
    try:
        run = run_suite(pytester, f"--inventory={spark2.inventory}", "-n", "2", netns=spark2.rack.topo.bench)
    finally:
        for link in links:
            spark2.heal("spark-2", "roce-link-down", link)
    doc = results(run)
    assert doc["verdict"]["decision"] == "ACCEPTED WITH LIMITS", doc["verdict"]
    status = capabilities(doc)
    assert status["multi-node work over the CX7 link"] == "limited"
    assert {status["SSH mesh between the nodes"], status[SPARKRUN]} == {"available"}, status
    by_name = next(t for t in doc["tests"] if t["id"].endswith("test_passwordless_ssh[spark-1->spark-2]"))
    assert "goes to 192.168.100.11, a CX7 address of spark-2, and the CX7 link did not carry it" in by_name["message"]
    assert [i["state"] for i in doc["spark_acceptance"]][:4] == ["failed", "failed", "failed", "passed"]


def test_a_broken_ssh_mesh_blocks_everything_and_names_the_pair(pytester, spark2):
    spark2.fault("spark-2", "ssh-key-missing", "spark-1")
    try:
        run = run_suite(pytester, f"--inventory={spark2.inventory}", "-n", "2", netns=spark2.rack.topo.bench)
    finally:
        spark2.heal("spark-2", "ssh-key-missing", "spark-1")
    doc = results(run)
    assert doc["verdict"]["decision"] == "REJECTED", doc["verdict"]
    assert doc["verdict"]["summary"].startswith("SSH mesh between the nodes: failed (1 check)"), doc["verdict"]
    mesh = next(c for c in doc["verdict"]["capabilities"] if c["name"] == "SSH mesh between the nodes")
    assert (mesh["status"], [short(w["test"]) for w in mesh["why"]]) == (
        "blocked", ["test_passwordless_ssh[spark-2->spark-1]"]), mesh
    assert mesh["why"][0]["message"].startswith("spark-2 -> spark-1: ") and "key not authorised" in mesh["why"][0]["message"]


def test_a_one_node_cluster_has_only_the_runtime_checks(pytester, spark2, tmp_path):
    """The head alone (Cordatus: "a head on its own is a valid one-node cluster"): no SSH mesh and
    no CX7 link to check; sparkrun's runtime, definition and setup check apply, and pass."""
    text = spark2.inventory.read_text()
    second = text.index("[[nodes]]", text.index("[[nodes]]") + 1)
    head = re.sub(r"cx7 = \[\n(?:    .*\n)*\]\n", "", text[:second])
    inventory = tmp_path / "one-node.toml"
    inventory.write_text(head + text[text.index("[sparkrun]"):])
    spark2.fault("spark-1", "sparkrun-one-node")
    try:
        run = run_suite(pytester, f"--inventory={inventory}", netns=spark2.rack.topo.bench)
    finally:
        spark2.heal("spark-1", "sparkrun-one-node")
    doc = results(run)
    assert doc["verdict"]["decision"] == "ACCEPTED", (doc["verdict"], run.output)
    checks = {t["check"] for t in doc["tests"]}
    assert {"test_sparkrun_runs_on_the_head", "test_the_definition_lists_the_nodes_head_first",
            "test_the_image_is_on_the_head", SETUP_CHECK} <= checks, checks
    assert not checks & {"test_passwordless_ssh", "test_passwordless_ssh_over_cx7", "test_cx7_interface_up",
                         "test_roce_bandwidth_over_the_port", "test_the_multi_node_path_uses_cx7_addresses"}, checks
