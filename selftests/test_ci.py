"""examples/ci: the GitHub Actions and GitLab CI templates pass check-jsonschema's vendored schemas
(offline: in a network namespace of their own when run as root), the systemd units pass systemd's
own parser, and acceptance.sh, which every template runs, exits as the one exit-status table says
for ACCEPTED, REJECTED, INCOMPLETE and a bad inventory, leaving a bundle that verifies."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rackproof.ticket import exitstatus
from selftests.suite import REPLAYS, REPO

CI = REPO / "examples" / "ci"
BIN = Path(sys.executable).parent
SCHEMAS = [("github-actions.yml", "vendor.github-workflows", ("runs-on:", "run-on:"), "is not valid under any of"),
           ("gitlab-ci.yml", "vendor.gitlab-ci", ("when: always", "when: sometimes"), "'sometimes' is not one of")]


def offline(command: list[str]) -> list[str]:
    """The command in a network namespace without any interface but lo (root only): whatever it
    tried to fetch would fail, and nothing leaves this machine."""
    return ["unshare", "--net", *command] if os.geteuid() == 0 else command


@pytest.mark.parametrize("template, schema, fault, message", SCHEMAS)
def test_a_template_passes_its_vendored_schema_and_a_broken_one_does_not(template, schema, fault, message, tmp_path):
    checker = [str(BIN / "check-jsonschema"), "--builtin-schema", schema]
    good = subprocess.run(offline([*checker, str(CI / template)]), capture_output=True, text=True, timeout=120)
    assert good.returncode == 0 and "ok -- validation done" in good.stdout, good.stdout + good.stderr
    broken = tmp_path / template
    text = (CI / template).read_text()
    assert fault[0] in text
    broken.write_text(text.replace(fault[0], fault[1], 1))
    bad = subprocess.run(offline([*checker, str(broken)]), capture_output=True, text=True, timeout=120)
    assert bad.returncode == 1 and message in bad.stdout, bad.stdout + bad.stderr


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed")
def test_the_systemd_units_pass_systemds_parser_and_a_broken_one_does_not(tmp_path):
    units = ["rackproof-acceptance.service", "rackproof-acceptance.timer"]
    for unit in units:
        shutil.copy(CI / unit, tmp_path / unit)
    good = subprocess.run(["systemd-analyze", "verify", *units], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert good.returncode == 0 and not good.stderr.strip(), good.stderr
    service = tmp_path / units[0]
    service.write_text(service.read_text().replace("Type=oneshot", "Type=oneshoot"))
    bad = subprocess.run(["systemd-analyze", "verify", *units], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert "Failed to parse service type" in bad.stderr and "oneshoot" in bad.stderr, bad.stderr


def test_every_template_runs_the_step_bundles_and_keeps_bundle_and_junit():
    github, gitlab = (CI / "github-actions.yml").read_text(), (CI / "gitlab-ci.yml").read_text()
    service, timer = (CI / "rackproof-acceptance.service").read_text(), (CI / "rackproof-acceptance.timer").read_text()
    assert re.search(r"runs-on: \[self-hosted, linux, bench-rack\]", github)
    assert re.search(r"tags: \[bench-rack\]", gitlab)
    for text in (github, gitlab, service):
        assert "examples/ci/acceptance.sh" in text
        assert "RACKPROOF_INVENTORY" in text
    for text in (github, gitlab):
        assert "RACKPROOF_STEP" in text and "/bundle.tar" in text and "/junit.xml" in text
    assert "if: always()" in github and "when: always" in gitlab and "junit: $RACKPROOF_OUT/junit.xml" in gitlab
    assert "RACKPROOF_ARCHIVE=" in service and "Unit=rackproof-acceptance.service" in timer


def _table(text: str) -> list[tuple[str, str]]:
    """The rows of the exit-status table in docs/ci.md: | `status` | meaning |."""
    return [(m.group(1), m.group(2).strip()) for m in re.finditer(r"^\| `(\d)` \| (.+?) \|$", text, re.M)]


def test_the_exit_status_table_is_the_same_in_help_and_docs():
    shown = subprocess.run([str(BIN / "rackproof"), "--help"], capture_output=True, text=True, timeout=60).stdout
    assert exitstatus.text() in shown
    assert _table((REPO / "docs" / "ci.md").read_text()) == list(exitstatus.TABLE)


@pytest.fixture(scope="module")
def signing(tmp_path_factory):
    """An operator's key and the allowed_signers file that names it."""
    folder = tmp_path_factory.mktemp("signing")
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "ci", "-f", str(folder / "key")],
                   check=True, timeout=30)
    (folder / "allowed_signers").write_text("ci@bench-rack " + " ".join((folder / "key.pub").read_text().split()[:2]) + "\n")
    return folder


def _meaning(status: int) -> str:
    return dict(exitstatus.TABLE)[str(status)]


# (case, pytest arguments, the verdict results.json says, its exit status, the word the table's row for it holds)
CASES = [
    ("accepted", ["--replay", str(REPLAYS / "thor5-healthy")], "ACCEPTED", 0, "ACCEPTED ("),
    ("rejected", ["--replay", str(REPLAYS / "thor5-ssh-thor2-to-thor4")], "REJECTED", 1, "REJECTED"),
    # once bonded, a lane down and a FEC mismatch only limit bandwidth
    ("limited", ["--replay", str(REPLAYS / "thor5-lane-down-fec-mismatch")], "ACCEPTED WITH LIMITS", 1,
     "ACCEPTED WITH LIMITS"),
    ("incomplete", ["--replay", str(REPLAYS / "thor5-healthy"), "-k", "test_hostname"], "INCOMPLETE",
     exitstatus.INCOMPLETE, "INCOMPLETE:"),
]


@pytest.mark.parametrize("case, args, decision, status, word", CASES, ids=[c[0] for c in CASES])
def test_acceptance_sh_exits_as_the_table_says_and_leaves_a_bundle_that_verifies(case, args, decision, status, word,
                                                                                  signing, tmp_path):
    out = tmp_path / "out"
    env = {**os.environ, "RACKPROOF_OUT": str(out), "RACKPROOF_KEY": str(signing / "key"), "RACKPROOF_TICKET": "CHG-30",
           "RACKPROOF_OPERATOR": "ci", "RACKPROOF_BIN": str(BIN), "RACKPROOF_ARCHIVE": str(tmp_path / "archive")}
    run = subprocess.run(["bash", str(CI / "acceptance.sh"), "-p", "no:cacheprovider", *args], env=env,
                         capture_output=True, text=True, timeout=300)
    # the exact status: a row of the table can name a verdict under another status too (2: an interrupted REJECTED)
    assert run.returncode == status and word in _meaning(status), \
        f"{case}: exit {run.returncode}\n{run.stdout[-3000:]}{run.stderr[-2000:]}"
    verified = subprocess.run([str(BIN / "rackproof"), "verify", str(out / "bundle.tar"), "--allowed-signers",
                               str(signing / "allowed_signers")], capture_output=True, text=True, timeout=60)
    assert verified.returncode == 0, verified.stderr
    # a replay's bundle says so in its verdict words
    assert verified.stdout.startswith(f"verified: ticket CHG-30, signed by ci@bench-rack, verdict REPLAY {decision} (")
    assert sorted(p.name for p in (tmp_path / "archive" / "out").iterdir()) == ["bundle.tar", "junit.xml"]


def test_a_bad_inventory_exits_as_the_table_says_and_bundles_nothing(signing, tmp_path):
    inventory = tmp_path / "cluster.toml"
    inventory.write_text('[cluster]\nname = "thor-shelf"\nplatform = "thor"\n')
    env = {**os.environ, "RACKPROOF_OUT": str(tmp_path / "out"), "RACKPROOF_KEY": str(signing / "key"),
           "RACKPROOF_INVENTORY": str(inventory), "RACKPROOF_BIN": str(BIN)}
    run = subprocess.run(["bash", str(CI / "acceptance.sh"), "-p", "no:cacheprovider"], env=env, capture_output=True,
                         text=True, timeout=300)
    assert "bad inventory" in _meaning(run.returncode), f"exit {run.returncode}\n{run.stdout}{run.stderr}"
    assert "cluster.user" in run.stderr and "nothing to bundle" in run.stderr
    assert not (tmp_path / "out" / "bundle.tar").exists()
