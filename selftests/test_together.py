"""rackproof.nodes.together: a group measured at once, each part with its own evidence and its own
exception; what crosses the run's processes (the plan's results, to xdist workers) as JSON
(rackproof.nodes.portable: nothing unpickled, no name outside rackproof built)."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from rackproof.nodes import portable
from rackproof.judging.failure import Failure
from rackproof.nodes.host import ProbeFailed
from rackproof.probes import ParseError
from rackproof.measuring.serving import AccessKeyError
from rackproof.probes.iperf import IperfResult, IperfStream
from rackproof.measuring.plan import NotMeasured
from rackproof.nodes.remote import ChannelRefused, CommandTimeout, ConnectionLost, Evidence, EvidenceLog, NodeUnreachable, Result
from rackproof.nodes.together import Part, at_once

REPO = Path(__file__).resolve().parents[1]


def test_parts_run_at_the_same_time_each_with_its_own_evidence_and_exception():
    log = EvidenceLog()
    log.sink = test_sink = []
    started = threading.Barrier(3, timeout=5)   # only passes if all three parts run at once

    def measure(node: str) -> str:
        started.wait()
        log.add(Evidence(node, f"iperf3 -c {node}", 0, "", "", 0.1, time.time()))
        if node == "thor-3":
            raise NodeUnreachable(node, "no route")
        return node.upper()

    parts = at_once(["thor-1", "thor-2", "thor-3"], measure, log, workers=3)
    assert test_sink == []                       # nothing reached the test that asked meanwhile
    assert parts["thor-2"].get(log) == "THOR-2"
    assert [e.command for e in test_sink] == ["iperf3 -c thor-2"]
    with pytest.raises(NodeUnreachable, match="thor-3 is unreachable: no route"):
        parts["thor-3"].get(log)
    assert [e.command for e in test_sink] == ["iperf3 -c thor-2", "iperf3 -c thor-3"]


@pytest.mark.parametrize("error", [
    NodeUnreachable("thor-2", "no answer within the connect timeout of 5 s"),
    CommandTimeout("thor-2", "iperf3 -c 10.10.0.12", 34.0),
    ChannelRefused("thor-2", "kill 4242", "ChannelException(1, 'Administratively prohibited')", 6.6),
    ConnectionLost("thor-2", "iperf3 -c 10.10.0.12", "Socket is closed"),
    ProbeFailed("thor-2", Result("ethtool mgbe0_0", 1, "", "no such device", 0.1), "exited with status 1"),
    ParseError("iperf3", "no end section", "{}"),
    Failure("thor-1 -> thor-2", "one stream at 3.1 Gbit/s", expected="at least 22.5 Gbit/s"),
    AssertionError("a plain assert in a measurement"),
    AccessKeyError("agent.key_file: cannot read /root/.config/agent.key: No such file or directory"),
    NotMeasured("lane.link of thor-2:mgbe0_0: not measured by the run's plan"),
])
def test_what_one_worker_caught_another_raises_as_it_was(error):
    again = portable.loads(portable.dumps(error))
    assert type(again) is type(error) and str(again) == str(error) and vars(again) == vars(error)


def test_a_round_crosses_the_workers_as_it_was_measured():
    stream = IperfStream(33001, 5201, 24.1e9, 24.2e9, 3)
    result = IperfResult(24.1e9, 24.2e9, 3, 1, 5.0, "10.10.0.11", "10.10.0.12", 5201, False, (stream,))
    evidence = [Evidence("thor-1", "iperf3 -c 10.10.0.12", 0, "{}", "", 5.1, 1.5e9)]
    parts = {("thor-1", "thor-2"): Part((result,), None, evidence),
             ("thor-2", "thor-1"): Part(None, NodeUnreachable("thor-2", "no route"), [])}
    again = portable.loads(portable.dumps(parts))
    assert again[("thor-1", "thor-2")] == parts[("thor-1", "thor-2")]
    assert str(again[("thor-2", "thor-1")].error) == "thor-2 is unreachable: no route"


@pytest.mark.parametrize("planted", [
    {"error": "os:system", "arguments": {"command": "touch /tmp/owned"}},
    {"error": "builtins:exec", "arguments": ["import os"]},
    {"dataclass": "subprocess:Popen", "fields": {"args": ["touch", "/tmp/owned"]}},
    {"dataclass": "rackproof.nodes.remote:os.system", "fields": {}},
    {"dataclass": "rackproof.nodes.remote:quote", "fields": {}},
    {"error": "rackproof.nodes.remote:Evidence", "arguments": {}},
])
def test_a_planted_file_names_nothing_outside_rackproof_and_runs_nothing(planted, tmp_path):
    with pytest.raises(portable.Unportable):
        portable.loads(json.dumps(planted))


@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["one process", "xdist"])
def test_a_checks_lanes_measured_at_once_are_each_judged_from_their_own_answer(pytester, workers):
    """The plan reads every lane of test_lane_link_detected at once; each lane's test has its own
    lane's command only, and only the lane that is down fails."""
    from selftests.report_suite import run_report
    from selftests.suite import REPLAYS
    run = run_report(pytester, "--replay", str(REPLAYS / "thor5-lane-down-fec-mismatch"), *workers,
                     "-k", "test_lane_link_detected", folders=("tests_physical",))
    tests = [t for t in run.results["tests"] if t["check"] == "test_lane_link_detected"]
    assert len(tests) == 20
    assert [t["id"].split("[")[1] for t in tests if t["outcome"] == "failed"] == ["thor-3:mgbe1_0]"]
    for test in tests:
        node, lane = test["id"].split("[")[1].rstrip("]").split(":")
        reads = [e for e in test["evidence"] if e["probe"] == "ethtool"]
        assert [(e["node"], e["values"]) for e in reads] == [(node, {"interface": lane})], test["id"]
