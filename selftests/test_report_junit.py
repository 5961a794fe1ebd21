"""What CI reads without parsing the report: junit.xml's properties (the run's verdict, ticket,
cluster, inventory sha256, results.json's sha256; each test's figures with unit and floor) and the
one-screen Markdown summary, appended to $GITHUB_STEP_SUMMARY when set, else summary.md in the
report folder. Node output in the summary is escaped."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from _pytest.junitxml import mangle_test_address

from rackproof.report import junit, summary
from selftests.suite import REPLAYS, REPO

BIN = Path(sys.executable).parent


def _run(folder: Path, recording: str, step_summary: Path | None = None, *args: str) -> Path:
    env = {k: v for k, v in os.environ.items() if k != "GITHUB_STEP_SUMMARY"}
    if step_summary:
        env["GITHUB_STEP_SUMMARY"] = str(step_summary)
    run = subprocess.run([str(BIN / "pytest"), "-q", "-p", "no:cacheprovider", "--replay", str(REPLAYS / recording),
                          "--ticket", "CHG-88", "--operator", "dana", f"--html={folder / 'report.html'}", *args],
                         cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert (folder / "results.json").exists(), run.stdout + run.stderr
    return folder


@pytest.fixture(scope="module")
def healthy(tmp_path_factory) -> Path:
    return _run(tmp_path_factory.mktemp("junit") / "run", "thor5-healthy")


def _properties(element: ET.Element) -> dict[str, str]:
    found = element.find("properties")
    return {} if found is None else {p.get("name"): p.get("value") for p in found.iter("property")}


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_junit_carries_the_runs_properties(healthy):
    doc = json.loads((healthy / "results.json").read_text())
    suite = ET.parse(healthy / "junit.xml").getroot().find("testsuite")
    assert _properties(suite) == {
        "rackproof.verdict": doc["verdict"]["decision"], "rackproof.verdict_line": doc["verdict"]["decision"],
        "rackproof.ticket": "CHG-88", "rackproof.operator": "dana", "rackproof.cluster": "thor-shelf",
        "rackproof.step": "9", "rackproof.replay": str(REPLAYS / "thor5-healthy"),
        "rackproof.inventory_sha256": doc["run"]["inventory"]["sha256"],
        "rackproof.report_html_sha256": _sha(healthy / "report.html"),
        "rackproof.results_sha256": _sha(healthy / "results.json")}
    assert junit.results_sha256((healthy / "junit.xml").read_bytes()) == _sha(healthy / "results.json")


def test_each_test_carries_its_figures_with_unit_and_floor(healthy):
    doc = json.loads((healthy / "results.json").read_text())
    cases = {(c.get("classname"), c.get("name")): c for c in ET.parse(healthy / "junit.xml").getroot().iter("testcase")}
    measured = [t for t in doc["tests"] if t["measurements"]]
    assert measured and len(cases) >= len(doc["tests"]) - doc["counts"]["skipped"]
    for test in doc["tests"]:
        case = cases.get(junit.address(test["id"]))
        if case is None:
            continue
        shown = _properties(case)
        assert len(shown) == len(test["measurements"]), test["id"]   # none on a test without figures
        for m in test["measurements"]:
            value = shown[f"rackproof.figure[{m['reference'] or m['kind']} {m['subject']}]"]
            assert value.startswith(f"{m['value']:g} {m['unit']}; ")
            if m["expectation"]:
                assert f"floor {m['expectation']['floor']:g} {m['unit']} (higher is better)" in value or \
                    f"ceiling {m['expectation']['floor']:g} {m['unit']} (lower is better)" in value
                assert value.endswith(f"; {m['verdict']}")
            else:
                assert value.endswith("no floor (recorded, not judged)")
    rate = next(m for t in measured for m in t["measurements"] if m["reference"] == "lane.rate")
    assert rate["expectation"]["floor"] == 0.225   # the recording's lane_rate_gbps 0.25 x 0.9


@pytest.mark.parametrize("test_id", [
    "tests_network/test_throughput.py::test_iperf3_one_stream[thor-1->thor-2]",
    "tests_physical/test_lanes.py::test_lane_fec[thor-2:mgbe0_0]",
    "tests_ssh/test_slices.py::TestClass::test_x[a::b/c.py]",
    "tests_ssh/test_slices.py::test_reservations_do_not_overlap",
])
def test_a_test_id_is_addressed_as_pytests_junitxml_addresses_it(test_id):
    names = mangle_test_address(test_id)
    assert junit.address(test_id) == (".".join(names[:-1]), names[-1])


def test_the_summary_goes_to_the_report_folder_without_github(healthy):
    text = (healthy / "summary.md").read_text()
    doc = json.loads((healthy / "results.json").read_text())
    assert text.startswith(f"## rackproof: {doc['verdict']['decision']}\n")
    assert "| ticket | CHG-88 (operator dana) |" in text and f"replay of {REPLAYS / 'thor5-healthy'}" in text
    assert len(text.splitlines()) <= 40


def test_the_summary_is_appended_to_githubs_step_summary(tmp_path):
    """(under xdist: the controller writes the summary and the junit properties)"""
    step_summary = tmp_path / "step_summary.md"
    step_summary.write_text("an earlier step's summary\n")
    folder = _run(tmp_path / "run", "thor5-ssh-thor2-to-thor4", step_summary, "-n", "2")
    assert junit.results_sha256((folder / "junit.xml").read_bytes()) == _sha(folder / "results.json")
    text = step_summary.read_text()
    assert text.startswith("an earlier step's summary\n## rackproof: REJECTED\n"), text
    assert "- failed: tests\\_ssh/test\\_ssh\\_mesh.py::test\\_passwordless\\_ssh\\[thor-2-&gt;thor-4\\]" in text, text
    assert not (folder / "summary.md").exists()


def test_node_output_in_the_summary_cannot_forge_markdown_or_html():
    hostile = "thor-2: ![x](http://evil/x.png) <img src=x onerror=alert(1)> | forged | cell\n## Heading\x1b[31m"
    doc = {"run": {"cluster": "c", "step": 3, "replay": None, "ticket": "T", "operator": "o"},
           "verdict": {"decision": "REJECTED", "summary": hostile, "coverage": {"nodes": []}, "drift": []},
           "counts": {"failed": 100},
           "tests": [{"id": f"t.py::test_x[{i}]", "outcome": "failed", "message": hostile} for i in range(100)]}
    text = summary.markdown(doc, Path("/r"))
    assert "<img" not in text and "![x](" not in text and "\n## Heading" not in text and "\x1b" not in text
    assert "&lt;img src=x onerror=alert(1)&gt;" in text and "\\!\\[x\\](http://evil/x.png)" in text
    assert all(line.count("|") == line.count("\\|") for line in text.splitlines() if line.startswith("- "))
    assert "**100 not passed** (the first 10)" in text and len(text.splitlines()) <= 30


def test_a_step_summary_that_cannot_be_written_falls_back_to_the_folder(tmp_path):
    doc = {"run": {"cluster": "c", "step": 3, "replay": None, "ticket": "", "operator": ""},
           "verdict": {"decision": "ACCEPTED", "summary": "1 checks passed", "coverage": {"nodes": []}, "drift": []},
           "counts": {"passed": 1}, "tests": []}
    assert summary.write(doc, tmp_path, str(tmp_path / "no-such-folder" / "summary")) == tmp_path / "summary.md"
    assert (tmp_path / "summary.md").read_text().startswith("## rackproof: ACCEPTED\n")
