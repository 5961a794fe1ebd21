"""A failing thor5 rack judged with -n 2: the causes are found in the plan's diagnosis phase, by
the controller, and the workers open no connection at all.

Planted together: thor-3's bond member mgbe1_0 without link (lane-down), the switch's LAG towards
thor-4 at MTU 1400 (switch-mtu-lowered) and thor-3's munge key another (munge-key-differs). Each
process of the run has SshTransport's connect wrapped by a plugin written for it: the controller's
connects are counted, a worker's are counted and refused (its check would then fail with the
refusal instead of its cause).
"""

from __future__ import annotations

import pytest

from selftests.simrack import SimRack, rack_marks, unique_name
from selftests.suite import run_suite

pytestmark = rack_marks()

NODES = [f"thor-{i}" for i in range(1, 6)]
FOUR = "test_throughput::test_iperf3_bonded_four_streams"
MUNGE = "Cause: thor-3's munge key differs from the controller's (unmunge: Invalid credential): copy thor-1's " \
        "/etc/munge/munge.key to thor-3"
BLOCKED = "Cause: packets of the MTU (1500 bytes, don't-fragment) sent from {src} over any bond member get no reply " \
          "from {dst}: a path that drops full-size frames"
WITHOUT_LINK = "a bond member without link or slow: thor-3 mgbe1_0 (switch port 10) without link"

# every process of the run: that its connect is wrapped, then each connect, written to a file beside
# the plugin, one line each ("controller" or "worker", and "wrapped" or the node); a worker's
# connect is refused
COUNTING = '''
from pathlib import Path

from rackproof.nodes import remote

opened = remote.SshTransport._opened


def pytest_configure(config):
    who = "worker" if hasattr(config, "workerinput") else "controller"
    with open(Path(__file__).with_name("connects.txt"), "a") as out:
        out.write(f"{who} wrapped\\n")   # the wrapper is in place in this process

    def counted(self, conn, notes):
        with open(Path(__file__).with_name("connects.txt"), "a") as out:
            out.write(f"{who} {self.node}\\n")
        if who == "worker":
            raise remote.NodeUnreachable(self.node, "a worker of -n opened a connection (the selftest refuses it)")
        return opened(self, conn, notes)
    remote.SshTransport._opened = counted
'''


@pytest.fixture(scope="module")
def thor5():
    with SimRack("thor5", unique_name("diagnosis")) as rack:
        yield rack


def test_workers_open_no_connection_and_every_cause_is_found_by_the_plan(pytester, thor5, tmp_path):
    pytester.makepyfile(count_connects=COUNTING)
    with thor5.planted("thor-3", "lane-down", "mgbe1_0"), thor5.planted("thor-4", "switch-mtu-lowered"), \
            thor5.planted("thor-3", "munge-key-differs"):
        run = run_suite(pytester, f"--inventory={thor5.one_second_runs(tmp_path)}", "--step", "9",
                        "-p", "count_connects", "tests_network/test_throughput.py", "tests_serving/test_slurm.py",
                        "-n", "2", netns=thor5.rack.topo.bench)
    lines = (pytester.path / "connects.txt").read_text().splitlines()
    assert lines.count("worker wrapped") == 2 and lines.count("controller wrapped") == 1, lines
    connects = [line for line in lines if not line.endswith(" wrapped")]
    assert [line for line in connects if line.startswith("worker")] == [], run.output
    assert {line.split()[1] for line in connects if line.startswith("controller")} == set(NODES), connects

    # the causes, as each check named them before: munge's key, the member without link, the path
    for check in ("test_munge_credentials_decode_on_the_controller", "test_node_reaches_the_controller",
                  "test_node_takes_jobs"):
        assert MUNGE in run.messages[f"test_slurm::{check}[thor-3]"], (check, run.output)
    for src, dst in (("thor-1", "thor-3"), ("thor-3", "thor-1")):
        assert WITHOUT_LINK in run.messages[f"{FOUR}[{src}->{dst}]"], run.messages.get(f"{FOUR}[{src}->{dst}]")
    for src, dst in (("thor-1", "thor-4"), ("thor-4", "thor-1")):
        test = f"{FOUR}[{src}->{dst}]"
        assert test in run.failed and BLOCKED.format(src=src, dst=dst) in run.messages[test], run.messages.get(test)
    assert all("a worker of -n opened a connection" not in m for m in run.messages.values())
