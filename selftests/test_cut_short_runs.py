"""A check cut short by a transient fault is what docs/report.md says: the run INCOMPLETE (exit
6), the check listed as cut short ("run again"), never a limit of an ACCEPTED WITH LIMITS run.
Through the plugin, on the healthy recording with one node's answer changed."""

import json
import shutil

from selftests.suite import REPLAYS, run_suite

HEALTHY = REPLAYS / "thor5-healthy"
REFUSED = "nvidia@10.10.0.13: Permission denied (publickey).\r\n"
UNREACHED = "ssh: connect to host 10.10.0.13 port 22: Connection timed out\r\n"


def test_the_password_login_check_whose_sshd_is_never_reached_is_cut_short_and_the_run_incomplete(pytester, tmp_path):
    rec = tmp_path / "rec"
    shutil.copytree(HEALTHY, rec)
    answers = json.loads((rec / "thor-3.json").read_text())
    changed = [{**e, "stdout": e["stdout"].replace(REFUSED, UNREACHED)} if "PreferredAuthentications=password" in
               e["command"] else e for e in answers]
    assert sum(e["stdout"].endswith(UNREACHED) for e in changed) == 1
    (rec / "thor-3.json").write_text(json.dumps(changed))
    run = run_suite(pytester, "--replay", str(rec))
    check = "test_closed_network::test_password_login_is_off[thor-3]"
    assert run.outcomes[check] == "failed" and run.failed == {check}, run.output
    assert "did not reach sshd (ssh: ssh: connect to host 10.10.0.13 port 22: Connection timed out), asked 3 times" \
        in run.messages[check]
    verdict = json.loads((run.run_dir / "results.json").read_text())["verdict"]
    assert verdict["decision"] == "INCOMPLETE", verdict
    assert verdict["coverage"]["cut_short"] == ["tests_network/test_closed_network.py::test_password_login_is_off[thor-3]"]
    assert run.exit_status == 6, run.output
    assert "verdict: INCOMPLETE" in run.output and "1 check cut short by a transient" in run.output
