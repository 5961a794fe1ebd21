"""The report library's rules, on plain data: outcomes from pytest phases, the verdict by
capability, waivers (matching, expiry, what each did), and what a test touched."""

import datetime as dt
import os

import pytest

from rackproof.inventory import kinds
from rackproof.inventory.model import FINISHED, load_inventory
from rackproof.inventory.kinds import KINDS
from rackproof.report import verdict, waivers
from rackproof.report.outcomes import PytestReport, outcome_of
from selftests.suite import EXAMPLES

TODAY = dt.date(2026, 12, 2)
BONDED = {"name": "full bonded bandwidth of thor-3", "blocks": False}
SSH = {"name": "SSH mesh between the nodes", "blocks": True}


def entry(name, outcome, capability=None, message="", nodes=("thor-3",)):
    return {"id": f"tests_x/test_x.py::{name}", "outcome": outcome, "capability": capability,
            "message": message, "nodes": list(nodes)}


def test_all_passed_is_accepted():
    result = verdict.decide([entry("test_a[thor-1]", "passed", SSH), entry("test_b[thor-3]", "passed", BONDED)])
    assert result["decision"] == verdict.ACCEPTED
    assert {c["status"] for c in result["capabilities"]} == {"available"}


def test_a_blocking_failure_rejects_the_cluster():
    result = verdict.decide([entry("test_ssh[thor-2->thor-4]", "failed", SSH, "Permission denied"),
                             entry("test_b[thor-3]", "passed", BONDED)])
    assert result["decision"] == verdict.REJECTED
    assert "SSH mesh between the nodes: failed" in result["summary"]
    ssh = next(c for c in result["capabilities"] if c["name"] == SSH["name"])
    assert ssh["status"] == "blocked" and ssh["why"][0]["message"] == "Permission denied"


def test_non_blocking_failures_accept_with_limits_and_say_why():
    result = verdict.decide([entry("test_a[thor-1]", "passed", SSH),
                             entry("test_lane_link_detected[thor-3:mgbe1_0]", "failed", BONDED,
                                   "thor-3 mgbe1_0 (switch port 10): no link\nmore detail")])
    assert result["decision"] == verdict.LIMITED
    assert "full bonded bandwidth of thor-3" in result["summary"]
    limited = next(c for c in result["capabilities"] if c["name"] == BONDED["name"])
    assert limited["status"] == "limited"
    assert limited["why"] == [{"test": "tests_x/test_x.py::test_lane_link_detected[thor-3:mgbe1_0]",
                               "outcome": "failed", "message": "thor-3 mgbe1_0 (switch port 10): no link"}]


def test_a_check_without_capability_counts_as_blocking():
    result = verdict.decide([entry("test_new_check[thor-1]", "failed")])
    assert result["decision"] == verdict.REJECTED
    assert result["capabilities"][0]["name"] == verdict.UNDECLARED["name"]


def test_an_unconfirmed_blocking_check_cannot_be_accepted():
    result = verdict.decide([entry("test_a[thor-1]", "passed", SSH), entry("test_b[thor-2]", "error", SSH, "timed out")])
    assert result["decision"] == verdict.REJECTED
    assert "could not be confirmed" in result["summary"]


def test_an_unconfirmed_non_blocking_check_limits_its_capability():
    result = verdict.decide([entry("test_a[thor-1]", "passed", SSH), entry("test_b[thor-3]", "error", BONDED)])
    assert result["decision"] == verdict.LIMITED
    assert "(unconfirmed)" in result["summary"]


def test_a_run_with_no_verdict_at_all_is_not_accepted():
    assert verdict.decide([entry("test_a[thor-1]", "skipped", SSH)])["decision"] == verdict.REJECTED
    assert verdict.decide([])["decision"] == verdict.REJECTED


def test_warned_and_waived_checks_are_accepted_and_counted():
    result = verdict.decide([entry("test_a[thor-1]", "warned", SSH), entry("test_b[thor-3]", "waived", SSH)])
    assert result["decision"] == verdict.ACCEPTED
    assert "(1 warned)" in result["summary"]
    assert "1 failed under a valid waiver" in result["summary"]


# --- outcomes from pytest's phases ------------------------------------------------------

def measured(verdict_):
    return {"rackproof_measurements": [{"kind": "lane rate", "verdict": verdict_}]}


@pytest.mark.parametrize("phases, outcome", [
    ([PytestReport("setup", "passed"), PytestReport("call", "passed"), PytestReport("teardown", "passed")], "passed"),
    ([PytestReport("setup", "passed"), PytestReport("call", "passed", properties=measured("warned"))], "warned"),
    ([PytestReport("setup", "passed"), PytestReport("call", "passed", properties=measured("passed"))], "passed"),
    ([PytestReport("setup", "passed"), PytestReport("call", "failed", "no link")], "failed"),
    ([PytestReport("setup", "failed", "fixture broke")], "error"),
    ([PytestReport("setup", "passed"), PytestReport("call", "passed"), PytestReport("teardown", "failed", "cleanup")], "error"),
    ([PytestReport("setup", "passed"), PytestReport("call", "failed", "timed out", properties={"rackproof_outcome": "error"})], "error"),
    ([PytestReport("setup", "skipped", "not at this step")], "skipped"),
    ([PytestReport("setup", "passed"), PytestReport("call", "skipped", "no link", properties={"rackproof_waiver": {}})], "waived"),
])
def test_outcome_from_phases(phases, outcome):
    assert outcome_of(phases)[0] == outcome


def test_a_waived_check_keeps_its_original_message():
    phases = [PytestReport("call", "skipped", "thor-2 mgbe0_0: found BaseR", properties={"rackproof_waiver": {}})]
    assert outcome_of(phases) == ("waived", "thor-2 mgbe0_0: found BaseR")


# --- waivers ----------------------------------------------------------------------------

def waiver(**kw):
    return waivers.Waiver(**{"check": "test_lane_fec", "node": "thor-2", "justification": "switch swap in CHG-1240",
                             "approved_by": "J. Doe", "expires": "2027-01-31", **kw})


FEC = "tests_physical/test_lanes.py::test_lane_fec[thor-2:mgbe0_0]"


def test_a_waiver_matches_its_check_on_its_node_only():
    w = waiver()
    assert w.matches(FEC, ["thor-2"])
    assert not w.matches(FEC.replace("thor-2", "thor-3"), ["thor-3"])
    assert not w.matches("tests_physical/test_lanes.py::test_lane_speed[thor-2:mgbe0_0]", ["thor-2"])
    assert waiver(node=None).matches(FEC.replace("thor-2", "thor-3"), ["thor-3"])


def test_a_waiver_can_name_a_full_test_id():
    assert waiver(check="test_lane_fec[thor-2:mgbe0_0]", node=None).matches(FEC, ["thor-2"])
    assert waiver(check=FEC, node=None).matches(FEC, ["thor-2"])
    assert not waiver(check="test_lane_fec[thor-2:mgbe1_0]", node=None).matches(FEC, ["thor-2"])


def test_an_expired_waiver_counts_as_none():
    assert waivers.active([waiver(expires="2026-12-01")], FEC, ["thor-2"], TODAY) is None
    assert waivers.active([waiver(expires="2026-12-02")], FEC, ["thor-2"], TODAY) is not None  # valid through its day


def test_each_waiver_says_what_it_did():
    tests = [{"id": FEC, "nodes": ["thor-2"], "outcome": "waived"},
             {"id": FEC.replace("fec", "speed"), "nodes": ["thor-2"], "outcome": "passed"}]
    found = waivers.statuses([waiver(), waiver(check="test_lane_speed"), waiver(check="test_lane_fec", expires="2026-01-01"),
                              waiver(check="test_gone")], tests, TODAY)
    assert [w["status"] for w in found] == ["applied", "not needed", "expired", "unmatched"]
    assert found[0]["tests"] == [FEC]


def test_waiver_file_problems_are_one_line_each(tmp_path):
    good = tmp_path / "waivers.toml"
    good.write_text('[[waiver]]\ncheck = "test_lane_fec"\nnode = "thor-2"\njustification = "swap"\n'
                    'approved_by = "J. Doe"\nexpires = 2027-01-31\n')
    assert waivers.load_waivers(good) == [waiver(justification="swap")]
    bad = tmp_path / "bad.toml"
    bad.write_text('[[waiver]]\ncheck = "test_lane_fec"\njustification = "swap"\nexpires = "soon"\nowner = "me"\n')
    with pytest.raises(waivers.WaiverError) as e:
        waivers.load_waivers(bad)
    lines = str(e.value).splitlines()
    assert all(line.startswith(f"{bad}: waiver[0].") for line in lines), lines
    assert {line.split(": ")[1] for line in lines} == {"waiver[0].approved_by", "waiver[0].expires", "waiver[0].owner"}



def test_a_waiver_file_that_is_a_fifo_or_a_folder_is_refused_at_once(tmp_path):
    fifo = tmp_path / "waivers.toml"
    os.mkfifo(fifo)                   # nobody writes to it: reading it would wait forever
    for path, kind in ((fifo, "a FIFO"), (tmp_path, "a directory")):
        with pytest.raises(waivers.WaiverError, match=f"^{path}: cannot read it: {kind}, not a regular file$"):
            waivers.load_waivers(path)


# --- what a test touched ------------------------------------------------------------------

@pytest.fixture(scope="module")
def thor5():
    return load_inventory(EXAMPLES / "thor5.toml")


@pytest.mark.parametrize("params, nodes, interfaces, pairs", [
    ({"node": ("thor-1",)}, ["thor-1"], [], []),
    ({"lane": ("thor-3", "mgbe1_0")}, ["thor-3"], [["thor-3", "mgbe1_0"]], []),
    ({"cx7": ("spark-1", "enp1s0f1np1")}, ["spark-1"], [["spark-1", "enp1s0f1np1"]], []),
    ({"pair": ("thor-2", "thor-4")}, ["thor-2", "thor-4"], [], [["thor-2", "thor-4"]]),
    ({"link_pair": ("thor-4", "thor-2")}, ["thor-2", "thor-4"], [], [["thor-4", "thor-2"]]),
    ({"bonded_node": ("thor-2",)}, ["thor-2"], [["thor-2", "bond0"]], []),
    ({"engine": ("thor-2", "llama-3.1-8b")}, ["thor-2"], [], []),
    ({"local_and_remote": ("thor-2", "llama-3.1-8b")}, ["thor-1", "thor-2"], [], []),
    ({"every_node": ("thor-1", "thor-2", "thor-3")}, ["thor-1", "thor-2", "thor-3"], [], []),
    ({"package": "tensorrt", "pin": "tensorrt_version"}, [], [], []),   # not a kind: touches nothing
])
def test_what_a_test_touched_is_read_from_its_kinds(thor5, params, nodes, interfaces, pairs):
    cluster = (load_inventory(EXAMPLES / "spark2.toml") if "cx7" in params else thor5).at(FINISHED)
    assert kinds.subjects(params, cluster) == {"nodes": nodes, "interfaces": interfaces, "pairs": pairs}


def test_every_kind_gives_each_value_an_id_and_subjects(thor5):
    cluster = thor5.at(FINISHED)
    for kind in KINDS.values():
        for value in kind.values(cluster):
            assert kind.id(value) and kinds.subjects({kind.name: value}, cluster)["nodes"], (kind.name, value)


# --- a run that did not cover its scope -------------------------------------------------------

def test_an_interrupted_run_is_incomplete_never_accepted():
    coverage = verdict.Coverage(interrupted="interrupted (Ctrl-C)", not_run=("tests_x/test_x.py::test_b[thor-2]",))
    result = verdict.decide([entry("test_a[thor-1]", "passed", SSH)], coverage)
    assert result["decision"] == verdict.INCOMPLETE
    assert result["coverage"]["complete"] is False and result["coverage"]["not_run"] == list(coverage.not_run)
    assert "interrupted (Ctrl-C); 1 check of its scope did not run" in result["summary"]


def test_a_narrowed_run_is_incomplete_even_when_everything_in_it_ran():
    result = verdict.decide([entry("test_a[thor-1]", "passed", SSH)], verdict.Coverage(narrowed_by=("-k lane",)))
    assert result["decision"] == verdict.INCOMPLETE and "narrowed by -k lane" in result["summary"]


def test_a_blocking_failure_in_an_incomplete_run_still_rejects_and_says_it_is_incomplete():
    result = verdict.decide([entry("test_ssh[thor-2->thor-4]", "failed", SSH, "Permission denied")],
                            verdict.Coverage(interrupted="interrupted (Ctrl-C)"))
    assert result["decision"] == verdict.REJECTED
    assert "the run is incomplete: interrupted (Ctrl-C)" in result["summary"]


def test_a_declared_node_scope_is_named_in_the_verdict_line():
    result = verdict.decide([entry("test_a[thor-3]", "passed", SSH)], verdict.Coverage(nodes=("thor-3",)))
    assert result["decision"] == verdict.ACCEPTED and result["coverage"]["complete"]
    assert verdict.line(result) == "ACCEPTED for thor-3 only (--node)"
    assert verdict.line(verdict.decide([entry("test_a[thor-3]", "passed", SSH)])) == "ACCEPTED"


def test_a_test_stopped_before_its_teardown_did_not_run_to_an_outcome():
    from rackproof.report import document

    started = document.Recorded("tests_x/test_x.py::test_b[thor-2]", (PytestReport("setup", "passed"),))
    done = document.Recorded("tests_x/test_x.py::test_a[thor-1]",
                             (PytestReport("setup", "passed"), PytestReport("call", "passed"), PytestReport("teardown", "passed")))
    assert document.finished(done) and not document.finished(started)


def test_a_check_cut_short_by_a_transient_fault_makes_the_run_incomplete_not_rejected():
    cut = entry("test_kill[thor-1]", "error", SSH, "thor-1: the SSH connection dropped while `kill 4242` ran")
    tests = [entry("test_a[thor-1]", "passed", SSH), cut]
    result = verdict.decide(tests, verdict.Coverage(cut_short=(cut["id"],)))
    assert result["decision"] == verdict.INCOMPLETE
    assert "1 check cut short by a transient fault" in result["summary"]
    # the same error without the transient cause: unconfirmed, and it blocks
    assert verdict.decide(tests)["decision"] == verdict.REJECTED
    # a real failure beside it still rejects
    failed = entry("test_b[thor-2]", "failed", SSH, "Permission denied")
    assert verdict.decide([*tests, failed], verdict.Coverage(cut_short=(cut["id"],)))["decision"] == verdict.REJECTED


def test_a_check_cut_short_by_a_reboot_names_the_reboot_not_a_dropped_connection():
    from rackproof.nodes.remote import Rebooted

    words = str(Rebooted("thor-3", "`ethtool enP2p1s0f0`", ("21:53:13", "21:53:40")))
    rebooted = entry("test_speed[thor-3]", "error", SSH, words)
    dropped = entry("test_kill[thor-1]", "error", SSH, "thor-1: the SSH connection dropped while `kill 4242` ran")
    tests = [entry("test_a[thor-1]", "passed", SSH), rebooted, dropped]
    result = verdict.decide(tests[:2], verdict.Coverage(cut_short=(rebooted["id"],)))
    assert result["decision"] == verdict.INCOMPLETE
    said = "1 check cut short as thor-3 rebooted at 21:53:13–21:53:40"
    assert said in result["summary"] and said in result["coverage"]["reason"]
    assert "transient fault" not in result["summary"]
    # a dropped connection beside it keeps its own words, each counted once
    both = verdict.decide(tests, verdict.Coverage(cut_short=(rebooted["id"], dropped["id"])))["summary"]
    assert said in both and "1 check cut short by a transient fault (a dropped SSH connection" in both
    # a dropped connection alone says no reboot
    alone = verdict.decide([tests[0], dropped], verdict.Coverage(cut_short=(dropped["id"],)))["summary"]
    assert "rebooted" not in alone and "1 check cut short by a transient fault" in alone
    # the report page's "incomplete" box says the same: the reboot's checks apart from the dropped one
    from rackproof.report import html
    box = html._incomplete(verdict.decide(tests, verdict.Coverage(cut_short=(rebooted["id"], dropped["id"])))
                           ["coverage"], tests)
    assert "1 check measured before thor-3 rebooted at 21:53:13–21:53:40" in box and "test_speed[thor-3]" in box
    assert box.count("cut short by a transient fault") == 1 and box.index("test_kill[thor-1]") > box.index(
        'id="cut-short"')
