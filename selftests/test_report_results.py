"""The report a run leaves, end to end: one folder per run with report.html, results.json
(valid against its schema) and junit.xml; the header; the verdict by capability on real
recordings; waivers; a node that cannot be reached keeps its rows."""

import hashlib
import json
import os
import re

import jsonschema
import pytest

from rackproof.report import document
from rackproof.report.measurements import groups
from selftests.report_suite import STABLE, run_report
from selftests.suite import REPLAYS

LANE_DOWN = REPLAYS / "thor5-lane-down-fec-mismatch"


def test_results_json_validates_and_junit_lists_the_failures(pytester):
    run = run_report(pytester, "--replay", str(LANE_DOWN), "--ticket", "CHG-1234", "--operator", "ops@example")
    jsonschema.Draft202012Validator.check_schema(document.schema())
    assert document.problems(run.results) == []
    assert run.results["schema_version"] == document.SCHEMA_VERSION

    failed = {t["id"] for t in run.results["tests"] if t["outcome"] == "failed"}
    assert {i.rpartition("::")[2] for i in failed} == {
        "test_lane_link_detected[thor-3:mgbe1_0]", "test_lane_fec[thor-2:mgbe0_0]",
        "test_synthetic_pair_rate[thor-5->thor-2]", "test_synthetic_tokens[thor-3]"}
    in_junit = {f'{c.get("classname").replace(".", "/")}.py::{c.get("name")}'
                for c in run.junit.iter("testcase") if c.find("failure") is not None}
    assert in_junit == failed
    assert len(list(run.junit.iter("testcase"))) == len(run.results["tests"])

    header = run.results["run"]
    inventory = LANE_DOWN.parent / "thor5-healthy" / "cluster.toml"
    assert (header["cluster"], header["platform"], header["step"], header["ticket"], header["operator"]) == (
        "thor-shelf", "thor", 9, "CHG-1234", "ops@example")
    assert header["inventory"]["sha256"] == hashlib.sha256(inventory.read_bytes()).hexdigest()
    assert header["command_line"].startswith("pytest ") and "--replay" in header["command_line"]
    assert header["started"] <= header["finished"] and header["exit_status"] == 1
    for text in ("CHG-1234", "ops@example", header["inventory"]["sha256"], "rackproof acceptance report"):
        assert text in run.html
    # the recording's cluster.toml pins releases and sets the simulated lanes' rate: both said with the verdict
    assert {c["setting"]: (c["value"], c["default"]) for c in header["expectations_changed"]} == {
        "lane_rate_gbps": (0.25, None), "l4t_release": ("R38.2.0", None), "jetpack_version": ("7.0", None),
        "iperf_seconds": (3, 5)}
    assert "<code>lane_rate_gbps = 0.25</code>" in run.html and "(default none)" in run.html
    digest = hashlib.sha256((run.folder / "report.html").read_bytes()).hexdigest()
    assert run.results["report_html_sha256"] == digest and f"report.html sha256: {digest}" in run.output


def test_every_run_gets_its_own_folder_under_reports(pytester):
    run = run_report(pytester, "--replay", str(REPLAYS / "thor5-healthy"), folders=STABLE, default_folder=True)
    assert re.fullmatch(r"\d{8}-\d{6}-thor-shelf", run.folder.name), run.folder
    assert {p.name for p in run.folder.iterdir()} == {"report.html", "results.json", "junit.xml", "pytest-html.html",
                                                     "inventory.toml", "summary.md"}
    assert f"report folder: {run.folder}" in run.output and "verdict: ACCEPTED" in run.output
    html = run.html
    # self-contained, offline: nothing to fetch (links only to anchors and the run's own files)
    assert not re.search(r"<script|<link|<img|\ssrc=|url\(|@import", html)
    assert "export LC_ALL=C; ethtool mgbe0_0" in html and "Link detected: yes" in html   # evidence inline


def test_the_same_faults_reject_or_limit_as_the_capabilities_say(pytester):
    # finished cluster: thor-2's and thor-3's lanes are bonded, so a bad lane only limits bandwidth
    finished = run_report(pytester, "--replay", str(LANE_DOWN), folders=STABLE, name="finished")
    assert finished.results["verdict"]["decision"] == "ACCEPTED WITH LIMITS"
    limited = {c["name"]: c for c in finished.results["verdict"]["capabilities"] if c["status"] == "limited"}
    assert set(limited) == {"full bonded bandwidth of thor-2", "full bonded bandwidth of thor-3"}
    assert "found BaseR" in limited["full bonded bandwidth of thor-2"]["why"][0]["message"]
    assert 'data-verdict="ACCEPTED WITH LIMITS"' in finished.html
    # step 3: thor-2's one lane is its whole cluster network
    step3 = run_report(pytester, "--replay", str(LANE_DOWN), "--step", "3", folders=STABLE, name="step3")
    assert step3.results["verdict"]["decision"] == "REJECTED"
    assert step3.results["verdict"]["summary"].startswith("cluster network of thor-2: failed")
    assert {s["check"] for s in step3.results["scope"]} == {
        "test_passwordless_ssh", "test_same_login_on_every_node", "test_passwordless_ssh_over_cx7",   # step 4
        "test_gpus_seen_by_the_driver", "test_same_power_mode", "test_clocks_locked",   # step 5
        "test_cx7_cable_joins_the_planned_ports",   # a Spark's
        "test_cx7_pcie_link_at_full_speed_and_width", "test_cx7_firmware_the_same_at_both_ends",   # a Spark's CX7
        "test_cx7_mtu_the_same_at_both_ends", "test_roce_v2_gid_index_the_same_at_both_ends",
        "test_reservations_do_not_overlap", "test_holders_have_logins", "test_only_the_holder_runs_during_a_window",
        "test_every_job_has_a_time_limit", "test_slice_holders_have_no_sudo", "test_homes_are_private"}   # step 9
    # a blocking SSH failure
    ssh = run_report(pytester, "--replay", str(REPLAYS / "thor5-ssh-thor2-to-thor4"), folders=STABLE, name="ssh")
    assert ssh.results["verdict"]["decision"] == "REJECTED"
    assert "SSH mesh between the nodes: failed (1 check)" in ssh.results["verdict"]["summary"]
    cell = '<td class="cell" data-src="thor-2" data-dst="thor-4" data-state="failed"'
    assert cell in ssh.html


def waiver_file(path, expires="2099-01-31", link_expires="2099-01-31"):
    path.write_text(f"""
[[waiver]]
check = "test_lane_fec"
node = "thor-2"
justification = "switch port 5 moves to RS in CHG-1240"
approved_by = "J. Doe, network lead"
expires = {expires}

[[waiver]]
check = "tests_physical/test_lanes.py::test_lane_link_detected[thor-3:mgbe1_0]"
justification = "cable thor-3/2 on order"
approved_by = "J. Doe, network lead"
expires = {link_expires}

[[waiver]]
check = "test_lane_speed"
node = "thor-1"
justification = "left over"
approved_by = "nobody"
expires = 2099-01-31
""")
    return str(path)


def test_waived_failures_still_run_are_reported_and_do_not_fail_the_run(pytester):
    waivers = waiver_file(pytester.path / "waivers.toml")
    run = run_report(pytester, "--replay", str(LANE_DOWN), "--waivers", waivers, folders=STABLE)
    # ACCEPTED WITH LIMITS (exit 1): the bond's failures do not block, and the unplugged lane's cabling is not verified
    assert run.exit_status == 1 and "verdict: ACCEPTED WITH LIMITS" in run.output, run.output
    fec = run.test("test_lane_fec[thor-2:mgbe0_0]")
    assert fec["outcome"] == "waived" and "found BaseR" in fec["message"]
    assert fec["waiver"]["approved_by"] == "J. Doe, network lead" and fec["waiver"]["status"] == "applied"
    assert run.test("test_lane_link_detected[thor-3:mgbe1_0]")["outcome"] == "waived"
    # a lane without its cable hears no LLDP: its port is not verified, and the verdict says so
    unheard = run.test("test_lane_is_in_its_planned_port[thor-3:mgbe1_0]")
    assert unheard["outcome"] == "not verified"
    # as a record, the message rendered from it
    record = unheard["not_verified"]
    assert record["where"].startswith("thor-3 mgbe1_0") and record["how"] and record["why"] in unheard["message"]
    assert fec["not_verified"] is None and fec["warnings"] == []
    assert run.results["verdict"]["decision"] == "ACCEPTED WITH LIMITS"
    assert run.results["verdict"]["summary"] == ("not verified: cabling as planned (every plug in the port its label "
                                                 "names, by LLDP) for thor-3 mgbe1_0 (cable thor-3/2)")
    assert [w["status"] for w in run.results["waivers"]] == ["applied", "applied", "not needed"]
    skipped = [c.find("skipped") for c in run.junit.iter("testcase") if c.get("name") == "test_lane_fec[thor-2:mgbe0_0]"]
    assert "waived until 2099-01-31 by J. Doe, network lead" in skipped[0].get("message")
    assert "switch port 5 moves to RS in CHG-1240" in run.html


def test_an_expired_waiver_counts_as_none_and_is_listed_as_expired(pytester):
    waivers = waiver_file(pytester.path / "waivers.toml", link_expires="2020-06-30")
    run = run_report(pytester, "--replay", str(LANE_DOWN), "--waivers", waivers, folders=STABLE)
    assert run.exit_status == 1, run.output
    link = run.test("test_lane_link_detected[thor-3:mgbe1_0]")
    assert link["outcome"] == "failed" and link["waiver"]["status"] == "expired"
    assert [w["status"] for w in run.results["waivers"]] == ["applied", "expired", "not needed"]
    assert run.results["verdict"]["decision"] == "ACCEPTED WITH LIMITS"
    assert "waiver expired on 2020-06-30" in run.html


def test_a_waiver_file_with_mistakes_stops_the_run(pytester):
    bad = pytester.path / "waivers.toml"
    bad.write_text('[[waiver]]\ncheck = "test_lane_fec"\nexpires = 2027-01-31\n')
    run = run_report(pytester, "--replay", str(LANE_DOWN), "--waivers", str(bad), folders=STABLE)
    assert run.exit_status == 4
    assert f"{bad}: waiver[0].justification: Field required" in run.output


def test_a_node_that_cannot_be_reached_keeps_its_row_in_every_table(pytester):
    recording = pytester.path / "thor5-unreachable"
    recording.mkdir()
    (recording / "replay.json").write_text(json.dumps({"base": str(REPLAYS / "thor5-healthy")}))
    (recording / "thor-5.json").write_text(json.dumps({"unreachable": "no route to host"}))
    run = run_report(pytester, "--replay", str(recording))
    thor5 = next(n for n in run.results["nodes"] if n["name"] == "thor-5")
    assert (thor5["reach"]["status"], thor5["reach"]["reason"]) == ("unreachable", "no route to host")
    assert f"thor-5 unreachable since {thor5['reach']['since']}: no route to host" in run.results["verdict"]["summary"]
    assert thor5["counts"]["failed"] > 0 and thor5["facts"] == {"jetpack": "7.0"}
    assert '<b data-node="thor-5">thor-5</b>' in run.html and "unreachable: no route to host" in run.html
    topo = next(n for n in run.results["topology"]["nodes"] if n["name"] == "thor-5")
    assert topo["house"] == "failed" and {i["state"] for i in topo["interfaces"]} == {"failed"}
    assert 'class="house" data-node="thor-5" data-state="failed"' in run.html
    # the figures thor-5 owes still have their rows, with the test's outcome instead of a value
    missing = [r for g in groups(run.results["tests"]) for r in g["rows"] if r["value"] is None]
    assert {r["subject"] for r in missing} == {"thor-5", "thor-5->thor-1", "thor-5->thor-2", "thor-5->thor-3",
                                               "thor-5->thor-4", "thor-1->thor-5", "thor-2->thor-5",
                                               "thor-3->thor-5", "thor-4->thor-5"}
    assert {r["outcome"] for r in missing} == {"failed"}
    assert "no figure: the check failed" in run.html


def test_measurements_facts_and_outcomes_reach_the_report(pytester):
    run = run_report(pytester, "--replay", str(REPLAYS / "thor5-healthy"))
    warned = run.test("test_synthetic_pair_rate[thor-3->thor-1]")
    assert warned["outcome"] == "warned" and warned["measurements"][0]["verdict"] == "warned"
    assert run.results["counts"]["warned"] == 1
    assert [(g["kind"], g["unit"], len(g["rows"])) for g in groups(run.results["tests"])] == [
        ("lane rate", "Gbit/s", 20), ("tokens/s", "tokens/s", 5)]
    assert '<svg class="chart" data-kind="lane rate"' in run.html and '<svg class="chart" data-kind="tokens/s"' in run.html
    assert 'data-subject="thor-5 -&gt; thor-2" data-verdict="failed"' in run.html
    assert all(n["facts"]["jetpack"] == "7.0" and n["facts"]["hostname"] == n["name"] for n in run.results["nodes"])
    assert run.results["scope"] == [
        {"check": "test_cx7_cable_joins_the_planned_ports", "count": 1, "reasons": ["applies to spark clusters only"]},
        {"check": "test_passwordless_ssh_over_cx7", "count": 1, "reasons": ["applies to spark clusters only"]},
        {"check": "test_synthetic_pull_a_bond_lane", "count": 5,
         "reasons": ["disturbs the cluster; run with --allow-disruptive"]}] + [
        {"check": check, "count": 1, "reasons": ["nothing in the inventory it applies to at this step"]}   # no CX7
        for check in ("test_cx7_pcie_link_at_full_speed_and_width", "test_cx7_firmware_the_same_at_both_ends",
                      "test_cx7_mtu_the_same_at_both_ends", "test_roce_v2_gid_index_the_same_at_both_ends")]


def test_a_baseline_that_is_a_fifo_is_refused_at_once(tmp_path):
    fifo = tmp_path / "results.json"
    os.mkfifo(fifo)
    with pytest.raises(document.ResultsError, match="cannot read it: a FIFO, not a regular file"):
        document.load(fifo)
