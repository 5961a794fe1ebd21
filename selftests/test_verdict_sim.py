"""A run stopped in the middle of the throughput measurements on the simulated rack, as a person would
stop it (Ctrl-C: SIGINT to the whole foreground process group, xdist workers included) or as a
CI job is cancelled (SIGTERM to pytest): the verdict is INCOMPLETE wherever it is shown, the
checks that did not run are listed, pytest exits non-zero, and nothing is left running."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from selftests.simrack import SimRack, rack_marks
from selftests.suite import REPO, ctrl_c_reaches_it
from selftests.test_acceptance_sim import leftovers

pytestmark = rack_marks()


@pytest.fixture(scope="module")
def thor5():
    with SimRack("thor5") as rack:
        yield rack


def interrupted_run(rack: SimRack, folder, sig: int, *args: str) -> tuple[int, str, dict[str, str]]:
    """The suite against `rack`, sent `sig` while the plan's load runs; (exit status, output, the
    measurement servers and clients that ran on the nodes when it was sent)."""
    command = ["ip", "netns", "exec", rack.rack.topo.bench, sys.executable, "-m", "pytest", "-c", str(REPO / "pytest.ini"),
               "--rootdir", str(REPO), "-v", "-p", "no:cacheprovider", f"--inventory={rack.inventory}",
               f"--html={folder / 'report.html'}", f"--history={folder / 'history.sqlite'}", *args]
    proc = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True, preexec_fn=ctrl_c_reaches_it)
    lines, running = [], {}
    for line in proc.stdout:
        lines.append(line)
        if line.startswith("rackproof: measuring load "):
            # the rack is a cluster of its own (no other run's load to wait for); the bound is
            # for a machine busy with CI's other workers
            deadline = time.monotonic() + 60
            while not (running := leftovers(rack)) and time.monotonic() < deadline:
                time.sleep(0.1)
            # Ctrl-C reaches every process of the terminal's group; a cancelled CI job gets SIGTERM
            os.killpg(proc.pid, sig) if sig == signal.SIGINT else proc.send_signal(sig)
            break
    lines.extend(proc.stdout)
    return proc.wait(timeout=120), "".join(lines), running


# a declared scope (--node thor-1): fewer facts to measure before the load, the same stop
@pytest.mark.parametrize("sig, args", [(signal.SIGINT, ("-n", "2", "--node", "thor-1")), (signal.SIGTERM, ("--node", "thor-1"))],
                         ids=["ctrl-c-xdist", "sigterm"])
def test_a_run_stopped_during_the_throughput_measurements_is_incomplete(thor5, tmp_path, sig, args):
    status, output, running = interrupted_run(thor5, tmp_path, sig, *args)
    assert running and status != 0, output
    assert "verdict: INCOMPLETE" in output and "did not run: " in output, output
    doc = json.loads((tmp_path / "results.json").read_text())
    coverage = doc["verdict"]["coverage"]
    assert doc["verdict"]["decision"] == "INCOMPLETE" and coverage["interrupted"].startswith("interrupted"), doc["verdict"]
    not_run = coverage["not_run"]
    assert any("test_throughput.py::test_iperf3" in t for t in not_run), not_run
    assert not set(not_run) & {t["id"] for t in doc["tests"]}, "a test is either judged or listed as not run"
    assert 'data-verdict="INCOMPLETE"' in (tmp_path / "report.html").read_text()
    deadline = time.monotonic() + 30   # a server's own `timeout` is the last resort; the suite kills it at once
    while leftovers(thor5) and time.monotonic() < deadline:
        time.sleep(1)
    assert not leftovers(thor5), leftovers(thor5)
