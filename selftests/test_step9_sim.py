"""Step 9 on the simulated thor5 (issue 13): a real Slurm (munged, slurmctld on thor-1, slurmd
on every node), slice holders with real logins, homes and sudoers, and the closed cluster
network. Healthy, every step-9 check passes and each node answers a real srun; each planted
fault fails exactly its check, naming the node and the person, unit or port, and takes its
capability away in the verdict; a munge key that differs on one node is named by each check it
fails, never slurmctld or slurmd; `--step 8` runs none of them; a Ctrl-C while Slurm starts
leaves nothing behind.

The faults are planted together, each on its own node or on a part no other touches, so one
run of the step-9 checks shows that each fails its own check and nothing else. (Healthy, they
pass with a real srun answer from every node: test_acceptance_sim's healthy thor5 run.)
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rackproof.judging.capabilities import CLOSED_NETWORK, PRIVATE_SLICES, SCHEDULED_JOBS
from rackproof.ticket.exitstatus import INCOMPLETE as INCOMPLETE_EXIT
from rackproof_sim import faults
from rackproof_sim.state import RackState
from selftests.simrack import SimRack, compare, rack_marks, rack_processes, snapshot, unique_name
from selftests.suite import ctrl_c_reaches_it, run_suite

pytestmark = rack_marks()

REPO = Path(__file__).resolve().parents[1]
STEP_9 = ("tests_serving/test_slurm.py", "tests_ssh/test_slices.py", "tests_network/test_closed_network.py")

# node, fault, its arguments -> the one check it fails, and what the message must name
FAULTS = [
    ("thor-2", "slurmd-down", (), "test_node_takes_jobs[thor-2]", ("thor-2", "srun -w thor-2", "Communication")),
    ("thor-4", "node-drained", ("fan", "replaced"), "test_node_takes_jobs[thor-4]", ("thor-4", "drained",
                                                                                     "fan replaced")),
    ("thor-5", "clock-off", (), "test_clock_within_munges_limit[thor-5]", ("thor-5", "+600.000 s")),
    ("thor-1", "partition-unlimited", (), "test_partition_has_a_time_limit[thor-1]", ("partition thor",
                                                                                     "at most 8 h", "UNLIMITED")),
    ("thor-3", "holder-sudo", ("mira",), "test_slice_holders_have_no_sudo[thor-3]", ("thor-3", "mira",
                                                                                    "(ALL : ALL) ALL")),
    ("thor-5", "home-open", ("yuki",), "test_homes_are_private[thor-5]", ("thor-5", "/home/yuki", "755")),
    ("thor-4", "job-no-time-limit", ("rao",), "test_every_job_has_a_time_limit[thor-4]", ("thor-4", "rao",
                                                                                         "run-u42.service")),
    ("thor-3", "overlapping-reservation", (), "test_reservations_do_not_overlap[all]", ("mira", "kofi",
                                                                                       "both hold thor-3")),
    ("thor-1", "forwarding-on", (), "test_node_does_not_forward[thor-1]", ("thor-1", "bond0",
                                                                          "net.ipv4.ip_forward = 1")),
    ("thor-2", "open-listener", ("9999",), "test_nothing_unexpected_listens[thor-2]", ("thor-2", "python3",
                                                                                      "0.0.0.0:9999")),
    # the same program as the suite's own servers, under the same login, on a port of their range:
    # only this run's servers (by port and pid) may listen
    ("thor-5", "stray-iperf3", ("5201",), "test_nothing_unexpected_listens[thor-5]", ("thor-5", "iperf3 (pid",
                                                                                     ":5201/tcp")),
    ("thor-4", "stray-job", ("kofi",), "test_only_the_holder_runs_during_a_window[thor-4]", ("thor-4", "rao",
                                                                                            "kofi (pid")),
    ("thor-1", "login-missing", ("yuki",), "test_holders_have_logins[thor-1]", ("thor-1", "no login for yuki")),
]
TAKEN_AWAY = {SCHEDULED_JOBS: 4, PRIVATE_SLICES: 6, CLOSED_NETWORK: 3}


@pytest.fixture(scope="module")
def thor5():
    with SimRack("thor5") as rack:
        yield rack


def results(run) -> dict:
    return json.loads((run.run_dir / "results.json").read_text())


def short(test_id: str) -> str:
    return test_id.split("::")[-1]


def test_each_fault_fails_exactly_its_check_and_takes_its_capability_away(pytester, thor5):
    try:
        for node, kind, args, _, _ in FAULTS:
            thor5.fault(node, kind, *args)
        run = run_suite(pytester, f"--inventory={thor5.inventory}", "--step", "9", *STEP_9,
                        netns=thor5.rack.topo.bench)
    finally:
        faults.heal_all(thor5.rack)
    failed = {short(t) for t in run.failed}
    assert failed == {check for _, _, _, check, _ in FAULTS}, run.output
    messages = {short(t): m for t, m in run.messages.items()}
    for _, kind, _, check, named in FAULTS:
        for words in named:
            assert words in messages[check], (kind, words, messages[check])
    verdict = results(run)["verdict"]
    limited = {c["name"]: len(c["why"]) for c in verdict["capabilities"] if c["status"] == "limited"}
    assert limited == TAKEN_AWAY
    assert verdict["decision"] == "INCOMPLETE" and "narrowed by test paths" in verdict["summary"]


MUNGE_CHECKS = {"test_munge_credentials_decode_on_the_controller[thor-3]", "test_node_reaches_the_controller[thor-3]",
                "test_node_takes_jobs[thor-3]"}


def test_a_munge_key_that_differs_is_named_by_each_check_it_fails_not_slurmctld_or_slurmd(pytester, thor5):
    """thor-3's credentials do not decode on the controller, nor the controller's on thor-3: its
    munge check, `scontrol ping` and a job on it fail, each naming the key read from unmunge's
    error; the same checks pass on every other node."""
    thor5.fault("thor-3", "munge-key-differs")
    try:
        run = run_suite(pytester, f"--inventory={thor5.inventory}", "--step", "9", "tests_serving/test_slurm.py",
                        netns=thor5.rack.topo.bench)
    finally:
        thor5.heal("thor-3", "munge-key-differs")
    assert {short(t) for t in run.failed} == MUNGE_CHECKS, run.output
    assert len(run.with_outcome("passed")) == len(run.outcomes) - len(MUNGE_CHECKS) > 10, run.output
    messages = {short(t): m for t, m in run.messages.items()}
    assert "decoded on thor-1: expected Success (0), found Invalid credential." in \
        messages["test_munge_credentials_decode_on_the_controller[thor-3]"]
    assert "expected the controller UP, found primary thor-1 DOWN" in messages["test_node_reaches_the_controller[thor-3]"]
    for check, message in messages.items():
        assert "Cause: thor-3's munge key differs from the controller's (unmunge: Invalid credential): copy thor-1's " \
               "/etc/munge/munge.key to thor-3" in message, (check, message)
        assert "slurmctld not running" not in message and "port 6818" not in message, (check, message)


def test_step_8_runs_none_of_them_and_says_so(pytester, thor5):
    run = run_suite(pytester, f"--inventory={thor5.inventory}", "--step", "8", "tests_ssh/test_ssh_mesh.py",
                    *STEP_9, "-k", "same_login or not ssh_mesh", netns=thor5.rack.topo.bench)
    assert run.exit_status == INCOMPLETE_EXIT and run.outcomes and set(run.outcomes.values()) == {"passed"}, run.output
    assert {short(t) for t in run.outcomes} == {f"test_same_login_on_every_node[thor-{i}]" for i in range(1, 6)}
    scope = {s["check"]: s["reasons"] for s in results(run)["scope"]}
    for check in ("test_node_takes_jobs", "test_clock_within_munges_limit", "test_homes_are_private",
                  "test_slice_holders_have_no_sudo", "test_every_job_has_a_time_limit", "test_node_does_not_forward",
                  "test_nothing_unexpected_listens", "test_password_login_is_off"):
        assert scope[check] == ["not yet at step 8 (build step 9)"]


def test_a_ctrl_c_while_slurm_starts_leaves_nothing_behind():
    name = unique_name("sl")
    before = snapshot(name)
    proc = subprocess.Popen([sys.executable, "-m", "rackproof_sim.cli", "up", "thor5", "--name", name], cwd=REPO,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=ctrl_c_reaches_it,
                            env=dict(os.environ, PYTHONPATH=str(REPO)))
    try:
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and proc.poll() is None:     # Ctrl-C once munged runs
            if any(command.startswith("munged") for _, command in rack_processes(name)):
                break
            time.sleep(0.01)
        assert proc.poll() is None, "the rack came up before munged was seen"
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) != 0
        assert compare(before, snapshot(name)) == []
        assert not RackState(name).root.exists()
    finally:   # a failed selftest leaves no rack behind either
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
        if RackState(name).root.exists():
            subprocess.run([sys.executable, "-m", "rackproof_sim.cli", "down", "--name", name], cwd=REPO,
                           capture_output=True, timeout=120, env=dict(os.environ, PYTHONPATH=str(REPO)))


def test_down_leaves_no_slurm_or_munge_daemon_behind():
    name = unique_name("sd")
    before = snapshot(name)
    with SimRack("thor5", name) as rack:
        running = {command.split()[0] for _, command in rack_processes(name)}
        assert {"munged", "slurmctld", "slurmd"} <= running, running
    assert compare(before, snapshot(name)) == []
