"""The GitHub Actions and GitLab CI examples' shell steps, as their runners run them (no runner:
`act` needs a container image from the network), under the environment each example sets: from a
fresh checkout, in the runner account's home, against the recording of the healthy thor5 rack
(whose inventory stands for /etc/rackproof/cluster.toml). The job leaves the bundle and junit.xml
where the upload step (artifacts:) looks for them, signed with the key the example names, and
the run history outside the checkout. The jobs on a simulated rack, with drift, are in
test_ci_examples_sim.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from selftests.ci_examples import (fresh_checkout, github_env, github_job, github_run_steps, gitlab_env, gitlab_job,
                                   gitlab_script, run_step)
from selftests.suite import REPLAYS

RECORDING = REPLAYS / "thor5-healthy"
RACKPROOF = Path(sys.executable).parent / "rackproof"


def _runner_home(tmp_path: Path) -> Path:
    """The runner account's home, with the signing key at ~/.ssh/rackproof-ci (docs/ci.md)."""
    home = tmp_path / "runner"
    (home / ".ssh").mkdir(parents=True)
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "ci@bench-rack", "-f",
                    str(home / ".ssh" / "rackproof-ci")], check=True, timeout=30)
    (tmp_path / "allowed_signers").write_text(
        "ci@bench-rack " + " ".join((home / ".ssh" / "rackproof-ci.pub").read_text().split()[:2]) + "\n")
    return home


def _examples():
    # a scheduled run: no inputs, the finished cluster's step
    github = github_env({"github": {"run_id": "4242", "run_attempt": "2", "actor": "alice"}, "inputs": {}})
    gitlab = gitlab_env({"CI_PIPELINE_ID": "4242", "GITLAB_USER_LOGIN": "alice"})
    return [("github", github, github_run_steps()), ("gitlab", gitlab, gitlab_script())]


@pytest.mark.parametrize("which", ["github", "gitlab"])
def test_the_job_s_steps_run_from_a_fresh_checkout_and_leave_what_the_upload_keeps(which, tmp_path):
    _, env, steps = next(e for e in _examples() if e[0] == which)
    home = _runner_home(tmp_path)
    checkout = fresh_checkout(tmp_path / "checkout")
    assert env["RACKPROOF_INVENTORY"] == "/etc/rackproof/cluster.toml"
    env = {**env, "RACKPROOF_INVENTORY": str(RECORDING / "cluster.toml")}
    for step in steps:
        run = run_step(f"{step} --replay {RECORDING}", checkout, env, home, timeout=300)
        assert run.returncode == 0, f"{step}: exit {run.returncode}\n{run.stdout[-3000:]}{run.stderr[-2000:]}"

    out = checkout / env["RACKPROOF_OUT"]
    assert out.parent == checkout / "reports" and out.name == ("ci-4242-2" if which == "github" else "ci-4242")
    kept = github_job()["steps"][-1]["with"]["path"].splitlines() if which == "github" else \
        gitlab_job()[0]["artifacts"]["paths"]
    assert len(kept) == 2
    for pattern in kept:   # the upload's paths, as the runner expands them
        name = pattern.strip().replace("${{ env.RACKPROOF_OUT }}", env["RACKPROOF_OUT"]).replace(
            "$RACKPROOF_OUT", env["RACKPROOF_OUT"])
        assert (checkout / name).is_file(), name
    verified = subprocess.run([str(RACKPROOF), "verify", str(out / "bundle.tar"), "--allowed-signers",
                               str(tmp_path / "allowed_signers")], capture_output=True, text=True, timeout=60)
    assert verified.returncode == 0 and "signed by ci@bench-rack" in verified.stdout, verified.stdout + verified.stderr
    # a scheduled job: no inputs, so the workflow's default step (`inputs.step || '9'`)
    assert "verdict REPLAY ACCEPTED (thor-shelf" in verified.stdout and "step 9," in verified.stdout, verified.stdout


@pytest.mark.parametrize("which", ["github", "gitlab"])
def test_the_history_the_example_sets_lies_in_the_runner_s_home_outside_the_checkout(which, tmp_path):
    """A job starts from a clean checkout (ignored files deleted), so a history inside it would
    hold one run forever; test_ci_examples_sim.py shows the fourth job warning with it."""
    _, env, _ = next(e for e in _examples() if e[0] == which)
    assert env["RACKPROOF_HISTORY"] == "~/.local/state/rackproof/history.sqlite"
