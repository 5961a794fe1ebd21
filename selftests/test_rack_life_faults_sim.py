"""The rack's own life is not a verdict (issue 44: measurement-killed, tool-broken,
controller-disk-full), on a healthy simulated thor5 (one rack for the module; each run narrowed
to the checks of the node the event is planted on, a scope that can be ACCEPTED): an
iperf3 SIGKILLed mid-measurement is named and measured again, and the rack is ACCEPTED; a broken
iperf3 (there, executable, refused by the loader) is named by doctor in the loader's words and
makes its checks "not verified", never a hardware failure; and a controller whose disk is full
under the report ends the run in one line with its own exit status, results.json kept
elsewhere, no traceback."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from rackproof.plugin.ownfaults import REPORT_NOT_WRITTEN
from selftests.simrack import SimRack, rack_marks
from selftests.suite import run_suite

pytestmark = rack_marks()


@pytest.fixture(scope="module")
def thor5():
    with SimRack("thor5") as rack:
        yield rack


def of_node(pytester, rack, node: str):
    return run_suite(pytester, f"--inventory={rack.inventory}", "--node", node, netns=rack.rack.topo.bench)


def test_an_iperf3_killed_mid_measurement_is_named_and_measured_again_and_the_rack_accepted(pytester, thor5):
    watcher_log = thor5.state.node_dir("thor-1") / "log" / "measurement-killed.log"
    with thor5.planted("thor-1", "measurement-killed", "client"):
        run = of_node(pytester, thor5, "thor-1")
    assert re.fullmatch(r"killed \d+\n", watcher_log.read_text()), "the fault never killed an iperf3"
    assert run.exit_status == 0 and "verdict: ACCEPTED for thor-1 only (--node)" in run.output, run.output
    results = json.loads((Path(pytester.path) / "results.json").read_text())
    notes = [e["note"] for t in results["tests"] for e in t["evidence"] if "mid-measurement" in e["note"]]
    assert len(notes) == 1, notes
    assert re.match(r"thor-1's iperf3 (was killed by (signal 9 \(SIGKILL\)|a signal)|ended without a word) "
                    r"mid-measurement.*: measured again$", notes[0]), notes


def test_a_broken_iperf3_is_named_by_doctor_in_the_loaders_words_and_its_checks_not_verified(pytester, thor5):
    with thor5.planted("thor-2", "tool-broken", "iperf3"):
        broken = thor5.ssh("thor-2", "iperf3 -v")
        doctor = thor5.rackproof("doctor", f"--inventory={thor5.inventory}")
        run = of_node(pytester, thor5, "thor-2")
    loader = "error while loading shared libraries: /lib/x86_64-linux-gnu/libiperf.so.0: file too short"
    assert broken.returncode == 127 and loader in broken.stderr        # what was planted: the loader's refusal
    assert doctor.returncode == 1, doctor.stdout + doctor.stderr
    said = [line for line in doctor.stdout.splitlines() if line.startswith("thor-2: ")]
    assert said and said[0].startswith("thor-2: /usr/bin/iperf3 does not run: `iperf3 -v` exited 127, saying "
                                       f"\"iperf3: {loader}\" (sudo apt install --reinstall iperf3"), doctor.stdout
    assert not any("does not run" in line for line in doctor.stdout.splitlines() if not line.startswith("thor-2: "))
    assert run.failed == set() and run.with_outcome("error") == set(), run.output
    not_verified = {t for t, m in run.messages.items() if run.outcomes[t] == "skipped"
                    and "not verified: /usr/bin/iperf3 does not run: `iperf3 -v` exited 127" in m}
    iperf3_of_thor2 = {t for t in run.outcomes if "test_iperf3" in t and "thor-2" in t}
    assert iperf3_of_thor2 and iperf3_of_thor2 <= not_verified, run.output
    assert all("thor-2" in t for t in not_verified)
    verdict = re.search(r"^verdict: (.*)$", run.output, re.M)[1]       # what was not verified limits it
    assert verdict.startswith(("ACCEPTED WITH LIMITS", "INCOMPLETE")) and run.exit_status != 0, verdict


def test_a_full_disk_under_the_report_ends_the_run_in_one_line_with_its_own_status(pytester, thor5):
    folder = Path(pytester.path) / "reports-full"
    folder.mkdir()
    with thor5.planted("bench", "controller-disk-full", str(folder)):
        run = run_suite(pytester, f"--inventory={thor5.inventory}", "--step", "1", f"--html={folder}/report.html",
                        f"--junitxml={folder}/junit.xml", netns=thor5.rack.topo.bench)
    assert run.exit_status == REPORT_NOT_WRITTEN, run.output
    assert "Traceback" not in run.output and "INTERNALERROR" not in run.output, run.output
    (line,) = [line for line in run.output.splitlines() if line.startswith("rackproof: the report could not be")]
    assert line.startswith(f"rackproof: the report could not be written in {folder}: No space left on device"), line
    kept = Path(re.search(r"results\.json kept at (\S+)$", line)[1])
    try:
        results = json.loads(kept.read_text())
        assert results["run"]["exit_status"] == REPORT_NOT_WRITTEN and results["verdict"]["decision"] == "ACCEPTED"
        assert results["tests"] and all(t["outcome"] == "passed" for t in results["tests"])
    finally:
        shutil.rmtree(kept.parent)
