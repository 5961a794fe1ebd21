"""The backbone's checks against recordings: healthy passes, planted faults fail exactly their tests."""

import json
import os
import shutil

import pytest

from selftests.suite import REPLAYS, run_suite


def test_healthy_thor5_passes_every_check_and_writes_a_report_with_evidence(pytester):
    run = run_suite(pytester, "--replay", str(REPLAYS / "thor5-healthy"))
    assert run.exit_status == 0, run.output
    # every check passes but the one its inventory does not ask for (locked clocks)
    assert run.outcomes and {t for t, o in run.outcomes.items() if o != "passed"} == {
        f"test_gpus::test_clocks_locked[thor-{k}]" for k in range(1, 6)}, run.output
    assert {run.outcomes[f"test_gpus::test_clocks_locked[thor-{k}]"] for k in range(1, 6)} == {"skipped"}
    assert "test_lane_speed[thor-3:mgbe0_0]" in "".join(run.outcomes)
    assert "test_passwordless_ssh[thor-1->thor-2]" in "".join(run.outcomes)
    html = (run.run_dir / "report.html").read_text()
    assert "export LC_ALL=C; ethtool mgbe0_0" in html and "Link detected: yes" in html
    assert "<link" not in html.split("<body")[0] or "stylesheet" not in html  # self-contained: css inline


def test_lane_down_and_fec_mismatch_fail_those_two_and_what_rides_the_dead_lane(pytester):
    run = run_suite(pytester, "--replay", str(REPLAYS / "thor5-lane-down-fec-mismatch"))
    # thor-3's bond lost a member: its state fails, and so does -P 4 from thor-3 to each peer and
    # from each peer to it (four streams over the three members left, on either side: thor-3's bond
    # and the switch's LAG towards it), each naming the lane without link as the cause
    bonded = "test_throughput::test_iperf3_bonded_four_streams"
    assert run.failed == {"test_lanes::test_lane_link_detected[thor-3:mgbe1_0]",
                          "test_lanes::test_lane_fec[thor-2:mgbe0_0]", "test_bond::test_bond_state[thor-3]",
                          } | {f"{bonded}[thor-3->thor-{k}]" for k in (1, 2, 4, 5)} | \
        {f"{bonded}[thor-{k}->thor-3]" for k in (1, 2, 4, 5)}, run.output
    for k in (1, 2, 4, 5):
        assert "thor-3 mgbe1_0 (switch port 10) without link" in run.messages[f"{bonded}[thor-{k}->thor-3]"]
    down = run.messages["test_lanes::test_lane_link_detected[thor-3:mgbe1_0]"]
    assert "thor-3 mgbe1_0" in down and "port 10" in down and "Link detected: no" in down
    fec = run.messages["test_lanes::test_lane_fec[thor-2:mgbe0_0]"]
    assert "thor-2 mgbe0_0" in fec and "port 5" in fec and "expected RS" in fec and "found BaseR" in fec


def test_ssh_from_thor2_to_thor4_fails_exactly_that_pair(pytester):
    run = run_suite(pytester, "--replay", str(REPLAYS / "thor5-ssh-thor2-to-thor4"))
    assert run.failed == {"test_ssh_mesh::test_passwordless_ssh[thor-2->thor-4]"}, run.output
    message = run.messages["test_ssh_mesh::test_passwordless_ssh[thor-2->thor-4]"]
    assert "thor-2 -> thor-4" in message and "Permission denied (publickey)" in message
    assert "authorized_keys" in message  # the usual cause, in words


def test_step_3_checks_only_the_first_two_thors_and_no_ssh(pytester):
    # (the recording is of the finished, bonded shelf: its addresses sit on bond0, so only the
    # lane and SSH checks can be replayed at step 3)
    run = run_suite(pytester, "--replay", str(REPLAYS / "thor5-healthy"), "--step", "3", "tests_physical", "tests_ssh")
    ids = "".join(run.outcomes)
    assert "thor-1:mgbe0_0" in ids and "thor-2:mgbe0_0" in ids
    assert "thor-3" not in ids, "thor-3 joins at step 7"
    assert "mgbe1_0" not in ids, "the other three lanes are cabled at step 8"
    assert "passwordless_ssh" not in ids, "SSH between nodes is step 4"
    # two folders of the suite only: every check passed, yet the run is INCOMPLETE, never ACCEPTED
    assert run.exit_status == 6 and "verdict: INCOMPLETE" in run.output, run.output
    assert "narrowed by test paths" in run.output


def test_node_option_limits_the_run_to_that_node(pytester):
    run = run_suite(pytester, "--replay", str(REPLAYS / "thor5-healthy"), "--node", "thor-5")
    per_node = [t for t in run.outcomes if "[all" not in t]  # cluster-wide checks include every node
    assert per_node and all("thor-5" in t for t in per_node), sorted(run.outcomes)
    assert run.exit_status == 0, run.output


def test_without_inventory_no_check_runs_and_it_says_how(pytester):
    run = run_suite(pytester)
    assert not run.outcomes
    assert "no --inventory given" in run.output and "pytest --inventory cluster.toml --step N" in run.output


def test_missing_recorded_answer_is_an_error_not_a_pass(pytester, tmp_path):
    rec = tmp_path / "rec"
    shutil.copytree(REPLAYS / "thor5-healthy", rec)
    answers = json.loads((rec / "thor-1.json").read_text())
    # drop thor-1's answer to `id -un`: that check cannot reach a verdict
    (rec / "thor-1.json").write_text(json.dumps([e for e in answers if e["command"] != "id -un"]))
    run = run_suite(pytester, "--replay", str(rec), "tests_ssh")
    test = "test_ssh_mesh::test_same_login_on_every_node[thor-1]"
    assert run.outcomes[test] == "failed", run.output
    assert "has no answer from thor-1 for `id -un`" in run.messages[test]
    assert run.with_outcome("failed") == {test}


@pytest.mark.parametrize("planted, error", [
    (lambda path: os.mkfifo(path), "thor-2.json: a FIFO, not a regular file"),
    (lambda path: path.write_text('{"answers": []}'), "thor-2.json: not a list of answers"),
    (lambda path: path.write_text("[1, 2"), "thor-2.json: not valid JSON"),
])
def test_a_recording_file_that_is_no_recording_is_refused_at_once(pytester, tmp_path, planted, error):
    rec = tmp_path / "rec"
    shutil.copytree(REPLAYS / "thor5-healthy", rec)
    (rec / "thor-2.json").unlink()
    planted(rec / "thor-2.json")
    run = run_suite(pytester, "--replay", str(rec), "tests_ssh")
    assert not run.outcomes and run.exit_status == 4, run.output
    assert error in run.output and "Traceback" not in run.output, run.output
