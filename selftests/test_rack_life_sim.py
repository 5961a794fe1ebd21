"""The rack's own life on a healthy simulated thor5 (faults sshd-restart and node-reboot, timed
against the run by what the node itself sees): an sshd that refuses connections for 3 s at the
run's first connect, during the SSH mesh or during the throughput rounds rejects nothing; an sshd
down for the whole run makes its node unreachable with every attempt named; a node that reboots
during the run is never accepted on what was measured of it before, and the reboot is named.

Runs are narrowed to a declared scope that can reach ACCEPTED (--step, --node thor-2): few
checks, one rack for the module."""

from __future__ import annotations

import json
import re

import pytest

from selftests.simrack import SimRack, rack_marks
from selftests.suite import run_suite

pytestmark = rack_marks()


@pytest.fixture(scope="module")
def thor5():
    with SimRack("thor5") as rack:
        yield rack


def run(pytester, rack: SimRack, *args: str, inventory=None):
    done = run_suite(pytester, f"--inventory={inventory or rack.inventory}", "--node", "thor-2", *args,
                     netns=rack.rack.topo.bench)
    return done, json.loads((done.run_dir / "results.json").read_text())


def notes(results: dict, node: str = "thor-2") -> list[str]:
    return [ev["note"] for test in results["tests"] for ev in test.get("evidence", []) if ev["node"] == node]


def log_now(rack: SimRack) -> str:
    path = rack.state.node_dir("thor-2") / "log" / "lifeevents.log"
    return path.read_text() if path.exists() else ""


# the rack is built to the finished step: a scope that can reach ACCEPTED is --step 1 (its lanes'
# links) or the finished step
def test_an_sshd_refusing_connections_for_3_s_at_the_first_connect_rejects_nothing(thor5, pytester):
    """With -n 2, as bench/rack_life.py runs: the controller that measured the plan has closed its
    connections before the first check, and its retried connects still reach the node's row."""
    before = log_now(thor5)
    with thor5.planted("thor-2", "sshd-restart", "3", "first-connect"):
        done, results = run(pytester, thor5, "--step", "1", "-n", "2")
    said = log_now(thor5)[len(before):]
    assert "thor-2: sshd-restart (first-connect)" in said and "sshd listens again" in said, said   # it happened
    assert results["verdict"]["decision"] == "ACCEPTED" and "unreachable" not in done.output, done.output
    # the run's first connects were refused, and tried again
    assert any(re.search(r"connected at attempt \d+ after \S+ refused", n) for n in notes(results)), notes(results)
    # and the node's row in the report says so, whichever command connected
    (thor2,) = [n for n in results["nodes"] if n["name"] == "thor-2"]
    assert any(re.match(r"connected at attempt \d+ after \S+ refused", c) for c in thor2["reach"]["connects"]), thor2


def test_an_sshd_refusing_connections_for_3_s_during_the_mesh_and_again_during_load_rejects_nothing(thor5, pytester):
    """Two restarts in one run: when the mesh's fan-out starts (xargs) and when the first
    throughput client starts (iperf3 -c)."""
    before = log_now(thor5)
    with thor5.planted("thor-2", "sshd-restart", "3", "xargs"), thor5.planted("thor-2", "sshd-restart", "3", "iperf3 -c"):
        done, results = run(pytester, thor5)
    said = log_now(thor5)[len(before):]
    assert "thor-2: sshd-restart (xargs)" in said and "thor-2: sshd-restart (iperf3 -c)" in said, said
    assert said.count("sshd listens again") == 2, said
    assert results["verdict"]["decision"] == "ACCEPTED" and "unreachable" not in done.output, done.output
    # a peer's ssh to thor-2 was refused while its sshd restarted, and asked again
    mesh = [t for t in results["tests"] if "test_passwordless_ssh[" in t["id"] and t["id"].endswith("->thor-2]")]
    assert any(ev["probe"] == "ssh to a peer" for t in mesh for ev in t["evidence"]), \
        f"no mesh row into thor-2 was asked again: {mesh}"


def test_an_sshd_down_for_the_whole_run_makes_its_node_unreachable_with_every_attempt_named(thor5, pytester,
                                                                                           tmp_path):
    inventory = tmp_path / "cluster.toml"
    inventory.write_text(thor5.inventory.read_text().replace("[ssh]\n", "[ssh]\nconnect_budget = 3\n", 1))
    with thor5.planted("thor-2", "sshd-restart", "600", "now"):
        done, results = run(pytester, thor5, "--step", "1", inventory=inventory)
    failed = [t for t in results["tests"] if t["outcome"] == "failed"]
    assert failed and results["verdict"]["decision"] != "ACCEPTED", done.output
    message = failed[0]["message"]
    found = re.search(r"thor-2 is unreachable: ssh to thor-2: (\d+) connect attempts in the connect budget of 3 s "
                      r"failed: (.*?)(?: \(declared at|\n|$)", message)
    assert found, message
    attempts = found[2].split("; ")
    assert int(found[1]) == len(attempts) >= 3 and all(
        re.match(r"\d\d:\d\d:\d\d\.\d refused \(Connection refused\)", a) for a in attempts), attempts


def test_a_node_unreachable_through_its_budget_that_answers_before_the_verdict_is_measured_then(thor5, pytester,
                                                                                               tmp_path):
    """A connect budget shorter than sshd's restart: thor-2 is declared unreachable at the run's
    first connect, answers when tried once more before the verdict, and what concerns it is
    measured then (a late node), never failed."""
    inventory = tmp_path / "cluster.toml"
    inventory.write_text(thor5.inventory.read_text().replace("[ssh]\n", "[ssh]\nconnect_budget = 0.4\n", 1))
    # the plan without thor-2 ends about 2.4 s after its first connect: sshd is back before
    with thor5.planted("thor-2", "sshd-restart", "1", "first-connect"):
        done, results = run(pytester, thor5, inventory=inventory)
    assert "rackproof: thor-2 answers now (a late node)" in done.output, done.output
    assert any("a late node" in n for n in notes(results)), notes(results)
    # its lanes' counters, unread at the run's first load when it was away, are read before its own
    # (rackproof.measuring.linkhealth): its counters under load are judged, nothing is left unverified
    assert not [t for t in results["tests"] if t["outcome"] != "passed"], done.output
    assert any("test_lane_error_counters_under_load[thor-2:" in t["id"] for t in results["tests"]), done.output
    assert results["verdict"]["decision"] == "ACCEPTED", done.output


def test_a_node_rebooting_mid_run_is_never_accepted_on_what_was_measured_before(thor5, pytester):
    with thor5.planted("thor-2", "node-reboot", "3", "xargs"):   # at the start of the SSH mesh
        done, results = run(pytester, thor5)
    assert "thor-2: node-reboot (xargs)" in log_now(thor5)
    assert results["verdict"]["decision"] not in ("ACCEPTED", "ACCEPTED WITH LIMITS"), done.output
    assert re.search(r"rackproof: thor-2 rebooted between \d\d:\d\d:\d\d and \d\d:\d\d:\d\d \(boot id \w{8}… then "
                     r"\w{8}…\)", done.output), done.output
    marked = [t for t in results["tests"] if "measured before thor-2 rebooted at" in (t.get("message") or "")]
    assert marked and set(t["id"] for t in marked) <= set(results["verdict"]["coverage"]["cut_short"]), done.output
    assert not [t for t in results["tests"] if t["outcome"] == "failed"], done.output   # a reboot fails nothing
