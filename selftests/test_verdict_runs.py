"""The verdict of a whole run, on recordings: a narrowed, stopped or scoped run is never a plain
ACCEPTED, and a figure that could not be measured is never a pass."""

import json
import shutil

import pytest

from selftests.suite import REPLAYS, run_suite

HEALTHY = REPLAYS / "thor5-healthy"


def results(run) -> dict:
    return json.loads((run.run_dir / "results.json").read_text())


def test_a_run_narrowed_with_k_is_incomplete_in_terminal_json_and_html(pytester):
    run = run_suite(pytester, "--replay", str(HEALTHY), "-k", "lane")
    assert run.outcomes and set(run.outcomes.values()) == {"passed"}, run.output
    assert run.exit_status == 6, run.output
    assert "verdict: INCOMPLETE" in run.output and "narrowed by -k lane" in run.output
    assert "did not run: tests_network/" in run.output   # the first of them; results.json has all
    verdict = results(run)["verdict"]
    assert verdict["decision"] == "INCOMPLETE" and verdict["coverage"]["narrowed_by"] == ["-k lane"]
    assert "tests_ssh/test_ssh_mesh.py::test_passwordless_ssh[thor-1->thor-2]" in verdict["coverage"]["not_run"]
    assert not any("lane" in t for t in verdict["coverage"]["not_run"])
    html = (run.run_dir / "report.html").read_text()
    assert 'data-verdict="INCOMPLETE"' in html and 'id="not-run"' in html and "test_passwordless_ssh[thor-1-&gt;thor-2]" in html


def test_a_node_scope_is_named_wherever_the_verdict_is(pytester):
    run = run_suite(pytester, "--replay", str(HEALTHY), "--node", "thor-5")
    assert run.exit_status == 0, run.output
    assert "verdict: ACCEPTED for thor-5 only (--node)" in run.output
    verdict = results(run)["verdict"]
    assert verdict["decision"] == "ACCEPTED" and verdict["coverage"]["nodes"] == ["thor-5"]
    assert verdict["summary"].startswith("only checks involving thor-5 (--node)")
    assert "ACCEPTED for thor-5 only (--node)" in (run.run_dir / "report.html").read_text()


def test_a_run_stopped_at_its_first_failure_lists_what_it_did_not_run(pytester):
    run = run_suite(pytester, "--replay", str(REPLAYS / "thor5-lane-down-fec-mismatch"), "-x")
    assert run.exit_status == 1 and len(run.failed) == 1, run.output
    verdict = results(run)["verdict"]
    # a lane without link only limits the cluster; what the run did not reach might block it
    assert verdict["decision"] == "INCOMPLETE" and "stopped early" in verdict["coverage"]["interrupted"]
    assert len(verdict["coverage"]["not_run"]) > 50


def derived(tmp_path, change) -> str:
    """A copy of the healthy recording with every iperf3 client's answer on every node changed."""
    rec = tmp_path / "rec"
    shutil.copytree(HEALTHY, rec)
    for path in rec.glob("thor-*.json"):
        answers = json.loads(path.read_text())
        path.write_text(json.dumps([change(e) if "iperf3 -c" in e["command"] else e for e in answers]))
    return str(rec)


@pytest.mark.parametrize("answer", [
    {"stdout": "", "exit_status": 0},
    {"stdout": "iperf3: error - unable to connect to server: Connection refused\n", "exit_status": 1},
    {"stdout": '{"start": {}, "end": {"sum_received": {"bits_per_second": NaN}}}', "exit_status": 0},
    {"stdout": "", "exit_status": None, "timed_out": True},
], ids=["empty", "not-json", "nan", "timed-out"])
def test_a_rate_that_could_not_be_measured_is_never_a_pass(pytester, tmp_path, answer):
    run = run_suite(pytester, "--replay", derived(tmp_path, lambda e: {**e, **answer}), "tests_network/test_throughput.py")
    rates = {t: o for t, o in run.outcomes.items() if "test_iperf3" in t}
    assert rates and set(rates.values()) <= {"failed", "error"}, run.output
