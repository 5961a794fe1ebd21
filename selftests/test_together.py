"""rackproof.together: a group measured at once, each part with its own evidence and its own
exception; kept once per run, and shared by processes (xdist workers) through files."""

from __future__ import annotations

import pickle
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from rackproof.host import ProbeFailed
from rackproof.probes import ParseError
from rackproof.remote import CommandTimeout, Evidence, EvidenceLog, NodeUnreachable, Result
from rackproof.together import Kept, at_once

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


def test_a_group_is_measured_once_per_process():
    kept, calls = Kept(None), []
    assert kept.get("round 1", lambda: calls.append(1) or {"a": 1}) == {"a": 1}
    assert kept.get("round 1", lambda: calls.append(1) or {"a": 2}) == {"a": 1}
    assert calls == [1]


WORKER = """
import sys, time
from pathlib import Path
from rackproof.together import Kept
def measure():
    Path(sys.argv[2]).open("a").write("measured\\n")
    time.sleep(0.5)        # the other worker asks meanwhile, and waits
    return {"thor-1->thor-2": 24.1e9}
print(Kept(Path(sys.argv[1])).get("test_iperf3_one_stream:link_pair:0", measure))
"""


def test_workers_share_a_group_one_measures_the_others_wait_and_read(tmp_path):
    calls = tmp_path / "calls"
    workers = [subprocess.Popen([sys.executable, "-c", WORKER, str(tmp_path / "kept"), str(calls)], cwd=REPO,
                                stdout=subprocess.PIPE, text=True) for _ in range(3)]
    outputs = [w.communicate(timeout=30)[0] for w in workers]
    assert outputs == ["{'thor-1->thor-2': 24100000000.0}\n"] * 3
    assert calls.read_text() == "measured\n"


@pytest.mark.parametrize("error", [
    NodeUnreachable("thor-2", "no answer within the connect timeout of 5 s"),
    CommandTimeout("thor-2", "iperf3 -c 10.10.0.12", 34.0),
    ProbeFailed("thor-2", Result("ethtool mgbe0_0", 1, "", "no such device", 0.1), "exited with status 1"),
    ParseError("iperf3", "no end section", "{}"),
])
def test_what_one_worker_caught_another_raises_as_it_was(error):
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is type(error) and str(again) == str(error) and vars(again) == vars(error)
