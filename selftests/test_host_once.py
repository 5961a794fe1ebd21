"""A fact no check changes is read once per node per run (Probe.once): the node is asked the
first time, and each later check that uses it shows that first answer as its evidence."""

import threading

from rackproof.nodes.host import Host, Surveys, begin_surveys
from rackproof.inventory.model import FINISHED, ClusterAtStep, load_inventory
from rackproof.nodes.prerequisites import NodePrerequisites
from rackproof.probes.accounts import PASSWD
from rackproof.probes.ethtool import ETHTOOL
from rackproof.probes.jetson import DPKG_VERSIONS
from rackproof.probes.system import HOSTNAME
from rackproof.nodes.remote import EvidenceLog, Remote, Result
from selftests.suite import EXAMPLES
from selftests.test_causes import Scripted
from selftests.test_prerequisites import healthy

ETHTOOL_UP = "Settings for mgbe0_0:\n\tSpeed: 25000Mb/s\n\tDuplex: Full\n\tLink detected: yes\n"


def host_asked(answers: dict):
    asked = []

    def answer(command):
        asked.append(command)
        return Result(command, 0, answers[command.split()[0] if command != "hostname" else command], "", 0.01)
    node = load_inventory(EXAMPLES / "thor5.toml").node("thor-1")
    log = EvidenceLog()
    return Host(node, Remote("thor-1", Scripted(answer), log)), asked, log


def test_a_once_fact_is_asked_once_and_shown_in_every_check_that_uses_it():
    host, asked, log = host_asked({"hostname": "thor-1\n"})
    first, second = [], []
    log.sink = first
    assert host.read(HOSTNAME) == "thor-1"
    log.sink = second
    assert host.read(HOSTNAME) == "thor-1"
    assert asked == ["hostname"]
    assert [e.stdout for e in first + second] == ["thor-1\n", "thor-1\n"]
    assert second[0].note == "read earlier in this run; its answer is recalled" and second[0].duration == 0.0
    assert abs(second[0].started - first[0].started) < 1 and not first[0].note   # when it was asked


def test_other_values_are_another_fact():
    host, asked, _ = host_asked({"dpkg-query": "nvidia-jetpack\t7.0\tinstall ok installed\n"})
    host.read(DPKG_VERSIONS, packages=["nvidia-jetpack"])
    host.read(DPKG_VERSIONS, packages=["tensorrt"])
    host.read(DPKG_VERSIONS, packages=["nvidia-jetpack"])
    assert len(asked) == 2


def test_a_once_fact_of_many_labels_is_one_batch_asked_once():
    host, asked, log = host_asked({"echo": "mira:x:1001:1001::/home/mira:/bin/bash\n"})
    seen = []
    log.sink = seen
    for _ in range(3):   # the slice holders' accounts: every step 9 check that needs them asks
        host.read_each(PASSWD, ["mira"])
    assert len(asked) == 1 and "getent passwd mira" in asked[0]
    assert [e.note for e in seen] == [""] + ["read earlier in this run; its answer is recalled"] * 2


def test_parts_wanting_one_fact_wait_for_its_asking_and_other_facts_are_asked_meanwhile():
    asking_hostname, other_asked = threading.Event(), threading.Event()
    asked = []

    def answer(command):
        asked.append(command)
        if command == "hostname":
            asking_hostname.set()
            assert other_asked.wait(5), "another fact of the node waited for this one"
            return Result(command, 0, "thor-1\n", "", 0.01)
        other_asked.set()
        return Result(command, 0, "nvidia-jetpack\tii \t7.0\n", "", 0.01)
    host = Host(load_inventory(EXAMPLES / "thor5.toml").node("thor-1"), Remote("thor-1", Scripted(answer), EvidenceLog()))
    found = []
    parts = [threading.Thread(target=lambda: found.append(host.read(HOSTNAME))) for _ in range(3)]
    for part in parts:
        part.start()
    assert asking_hostname.wait(5)
    assert host.read(DPKG_VERSIONS, packages=["nvidia-jetpack"]) == {"nvidia-jetpack": "7.0"}
    for part in parts:
        part.join(5)
    assert found == ["thor-1"] * 3 and asked.count("hostname") == 1


def test_a_state_that_checks_change_is_asked_every_time():
    host, asked, _ = host_asked({"ethtool": ETHTOOL_UP})
    for _ in range(2):
        assert host.read(ETHTOOL, interface="mgbe0_0").link_detected
    assert len(asked) == 2


def test_surveys_begun_while_the_run_starts_are_taken_once_and_shown_by_each_nodes_first_check():
    """The plugin begins every node's survey while pytest collects (host.begin_surveys): a check
    that needs a survey meanwhile waits for them, and each node's survey is asked once, its
    evidence shown by that node's first check only."""
    inventory = load_inventory(EXAMPLES / "thor5.toml")
    log, asked, surveying = EvidenceLog(), [], threading.Event()
    release = threading.Event()

    def node_answers(name):
        def answer(command):
            asked.append((name, command))
            if "groups $(id -nG)" in command:   # the survey
                surveying.set()
                assert release.wait(5), "the check did not wait for the surveys"
                return Result(command, 0, healthy(), "", 0.01)
            return Result(command, 0, f"{name}\n", "", 0.01)
        return answer
    hosts = {}
    surveys = Surveys(hosts, ["thor-1", "thor-2"], 8, log)
    for name in ("thor-1", "thor-2"):
        node = inventory.node(name)
        hosts[name] = Host(node, Remote(name, Scripted(node_answers(name)), log),
                           prerequisites=NodePrerequisites(ClusterAtStep(inventory, FINISHED), node), surveys=surveys)
    begin_surveys(hosts)
    assert surveying.wait(5)
    seen = {}
    check = threading.Thread(target=lambda: seen.update({"thor-2": _read_hostname(hosts["thor-2"], log)}))
    check.start()    # thor-2's first check, while the surveys are under way
    release.set()
    check.join(5)
    seen["thor-1"] = _read_hostname(hosts["thor-1"], log)
    seen["again"] = _read_hostname(hosts["thor-2"], log)
    assert [(e.node, e.probe) for e in seen["thor-2"]] == [("thor-2", "survey"), ("thor-2", "hostname")]
    assert [(e.node, e.probe) for e in seen["thor-1"]] == [("thor-1", "survey"), ("thor-1", "hostname")]
    assert [e.probe for e in seen["again"]] == ["hostname"]
    assert sorted(name for name, command in asked if "groups $(id -nG)" in command) == ["thor-1", "thor-2"]


def _read_hostname(host: Host, log: EvidenceLog) -> list:
    """A check's evidence of reading the node's hostname (once facts recalled show again)."""
    with log.captured() as evidence:
        assert host.read(HOSTNAME) == host.name
    return evidence
