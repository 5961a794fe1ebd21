"""rackproof.measuring.plan: the run's measurements, built from the selected checks and run by the controller
before the first check, phase by phase; every check only judges what it was given."""

from __future__ import annotations

import datetime
import os
import re
import threading
from contextlib import contextmanager
import time
from types import SimpleNamespace

import pytest

from rackproof import checks

from rackproof.inventory import kinds

from rackproof.measuring import plan, schedule

from rackproof.nodes import portable
from rackproof.inventory.model import FINISHED, load_inventory
from rackproof.inventory.kinds import KINDS
from rackproof.measurements import ALL, lanes, logins, nodes
from rackproof.measurements.launcher import SPARKRUN_VERSION
from rackproof.nodes.ownservers import OwnServers
from rackproof.nodes.remote import Evidence, EvidenceLog, NodeUnreachable
from rackproof.nodes.together import Part
from selftests.suite import EXAMPLES, REPLAYS, run_suite

THOR5 = load_inventory(EXAMPLES / "thor5.toml").at(FINISHED)


def test_a_test_id_names_its_check_and_target():
    assert plan.selected("tests_network/test_throughput.py::test_iperf3_one_stream[thor-1->thor-2]") == \
        ("test_iperf3_one_stream", "thor-1->thor-2")
    assert plan.selected("tests_x/test_y.py::test_z[a::b]") == ("test_z", "a::b")
    assert plan.selected("tests_x/test_y.py::test_whole") == ("test_whole", "")


def test_only_the_selected_checks_targets_are_measured_in_the_kinds_order():
    named = {"test_lane_speed": [lanes.LANE_LINK], "test_lane_fec": [lanes.LANE_LINK, lanes.LANE_FEC],
             "test_same_login_on_every_node": [nodes.NODE_LOGIN], "test_same_package_version": [nodes.NODES_PACKAGES]}
    ids = ["tests_physical/test_lanes.py::test_lane_speed[thor-2:mgbe1_0]",
           "tests_physical/test_lanes.py::test_lane_fec[thor-1:mgbe0_0]",
           "tests_ssh/test_ssh_mesh.py::test_same_login_on_every_node[thor-1]",
           # a check with a parameter of its own after its target's id
           "tests_serving/test_versions.py::test_same_package_version[all-tensorrt-tensorrt_version]",
           "tests_serving/test_sparkrun.py::test_sparkrun_runs_on_the_head[thor-1]"]   # none on a thor
    assert plan.wanted(lambda test_id: named.get(plan.selected(test_id)[0], [SPARKRUN_VERSION]), ids, THOR5) == {
        "lane.link": [("thor-1", "mgbe0_0"), ("thor-2", "mgbe1_0")], "lane.fec": [("thor-1", "mgbe0_0")],
        "node.login": [("thor-1",)], "nodes.packages": [tuple(f"thor-{i}" for i in range(1, 6))]}


def test_each_check_names_its_entries_and_every_entry_is_judged():
    """The plan's entries are what the checks name (in their body or a helper they call); every
    entry is named by a check of the suite, once in ALL, under a key of its own."""
    from selftests.suite import REPO
    assert [e.key for e in checks.entries_named(REPO / "tests_physical/test_lanes.py", "test_lane_fec")] == \
        ["lane.fec", "lane.link"]     # one in its body, one through its module's helper `linked`
    assert checks.entries_named(REPO / "tests_network/test_bond.py", "test_bond_state") == (lanes.NODE_BOND,)
    judged = {entry for path in REPO.glob("tests_*/test_*.py") for check in re.findall(r"^def (test_\w+)\(",
                                                                                      path.read_text(), re.M)
              for entry in checks.entries_named(path, check)}
    assert judged == set(ALL)
    assert len({entry.key for entry in ALL}) == len(ALL) > 50


def _recorder(key, phase, kind, seen, seconds=0.05, fails=None, meet=None):
    def gather(values, ctx):
        seen.append((key, "start", time.monotonic()))
        if fails:
            raise fails
        if meet:
            meet.wait()     # only passes when the other measurement of its phase runs meanwhile
        time.sleep(seconds)
        seen.append((key, "end", time.monotonic()))
        return {value: Part(f"{key}:{value}", None, []) for value in values}
    return plan.Entry(key, phase, kind, gather)


def test_phases_run_in_order_facts_together_serving_beside_and_loads_and_engines_one_after_another(tmp_path):
    # the facts meet each other and the first engine's answer: all three run at once (which of
    # them starts first is the threads' affair: on a busy machine both engines' went first)
    seen, facts = [], threading.Barrier(3, timeout=5)
    entries = [_recorder("load.b", plan.Phase.LOAD, "link_pair", seen),
               _recorder("after", plan.Phase.AFTER_LOAD, "lane", seen),
               _recorder("serve.b", plan.Phase.SERVING, "engine", seen, meet=facts),
               _recorder("facts.a", plan.Phase.FACTS, "node", seen, meet=facts),
               _recorder("facts.b", plan.Phase.FACTS, "lane", seen, meet=facts),
               _recorder("mesh", plan.Phase.MESH, "pair", seen), _recorder("load.a", plan.Phase.LOAD, "link_pair", seen),
               _recorder("serve.a", plan.Phase.SERVING, "engine", seen)]
    values = {"link_pair": [("thor-1", "thor-2")], "pair": [("thor-1", "thor-2")], "lane": [("thor-1", "mgbe0_0")],
              "node": [("thor-1",)], "engine": [("thor-1", "qwen3-8b")]}
    said = []
    results = plan.run(entries, {e.key: values[e.kind] for e in entries},
                       plan.Context(THOR5, {}, EvidenceLog(), tmp_path / "locks", said=said.append))
    order = [key for key, what, _ in seen if what == "start"]
    assert order[-3:] == ["load.b", "load.a", "after"]
    # the person watching is told each phase as it begins (the checks wait for the whole plan)
    assert sorted(said[:2]) == ["rackproof: measuring facts (2 measurements, 2 targets)",
                                "rackproof: measuring serving (2 measurements, 2 targets)"]
    assert said[2:] == ["rackproof: measuring mesh (1 measurement, 1 target)",
                        "rackproof: measuring load (2 measurements, 2 targets)",
                        "rackproof: measuring after load (1 measurement, 1 target)"]
    assert not facts.broken    # the facts side by side, the engines' answers beside them
    times = {(key, what): at for key, what, at in seen}
    assert times[("load.a", "start")] >= times[("load.b", "end")] >= times[("load.b", "start")] >= times[("mesh", "end")]
    assert times[("mesh", "start")] >= max(times[("facts.a", "end")], times[("facts.b", "end")])
    assert times[("after", "start")] >= times[("load.a", "end")]
    # the engines' answers one after another, beside the reads (before the mesh ends), all before any load
    assert times[("serve.a", "start")] >= times[("serve.b", "end")]
    assert times[("serve.b", "start")] < times[("mesh", "end")]
    assert times[("load.b", "start")] >= times[("serve.a", "end")]
    assert results.part("load.a", "thor-1->thor-2").get(EvidenceLog()) == "load.a:('thor-1', 'thor-2')"
    assert results.part("facts.a", "thor-1").value == "facts.a:('thor-1',)"
    assert results.part("serve.a", "qwen3-8b@thor-1").value == "serve.a:('thor-1', 'qwen3-8b')"


def test_engines_that_share_a_node_take_turns_and_the_others_go_at_once(tmp_path):
    engines = KINDS["engine"].values(THOR5)
    assert len({node for node, _ in engines}) == len(engines) == 3
    hosts = {node: node for node, _ in engines}
    ctx = plan.Context(THOR5, hosts, EvidenceLog(), tmp_path / "locks")
    together_ = threading.Barrier(3, timeout=5)
    at_once = plan.one_per_node("e", plan.Phase.SERVING, "engine",
                                lambda engine, ctx: together_.wait() and engine.spec.model)
    assert all(part.error is None for part in at_once.gather(engines, ctx).values())   # one node each: at once
    running, most, lock = [], [], threading.Lock()

    def alone(engine, ctx):
        with lock:
            running.append(engine.spec.model)
            most.append(len(running))
        time.sleep(0.05)
        with lock:
            running.remove(engine.spec.model)
        return engine.spec.model
    in_turn = plan.one_per_node("e", plan.Phase.SERVING, "engine", alone, shares=lambda value: "one GPU")
    found = in_turn.gather(engines, ctx)
    assert [found[e].value for e in engines] == [model for _, model in engines] and max(most) == 1


def test_a_whole_cluster_fact_reads_every_node_at_once_and_names_the_first_that_failed(tmp_path):
    names = ("thor-1", "thor-2", "thor-3")
    every_node = threading.Barrier(3, timeout=5)

    def read(host, ctx):
        every_node.wait()
        if host in ("thor-3", "thor-2"):
            raise NodeUnreachable(host, "no route")
        return f"{host}: MAXN"
    entry = plan.of_every_node("nodes.power_mode", plan.Phase.FACTS, "every_node", read)
    ctx = plan.Context(THOR5, {name: name for name in names}, EvidenceLog(), tmp_path / "locks")
    part = entry.gather([names], ctx)[names]
    assert str(part.error) == "thor-2 is unreachable: no route"      # the first in the inventory's order
    every_node.reset()
    fine = plan.of_every_node("nodes.power_mode", plan.Phase.FACTS, "every_node",
                              lambda host, ctx: every_node.wait() is not None and f"{host}: MAXN")
    assert fine.gather([names], ctx)[names].value == {name: f"{name}: MAXN" for name in names}


def test_an_entry_that_breaks_is_each_of_its_targets_error_never_the_runs(tmp_path):
    seen = []
    entries = [_recorder("broken", plan.Phase.FACTS, "node", seen, fails=KeyError("a bug")),
               _recorder("fine", plan.Phase.FACTS, "node", seen)]
    results = plan.run(entries, {"broken": [("thor-1",), ("thor-2",)], "fine": [("thor-1",)]},
                       plan.Context(THOR5, {}, EvidenceLog(), tmp_path / "locks"))
    for node in ("thor-1", "thor-2"):
        with pytest.raises(KeyError, match="a bug"):
            results.part("broken", node).get(EvidenceLog())
    assert results.part("fine", "thor-1").value == "fine:('thor-1',)"
    with pytest.raises(plan.NotMeasured, match="fine of thor-2: not measured by the run's plan"):
        results.part("fine", "thor-2")


@contextmanager
def held_by_another_run(locks, name: str, shared: bool = False):
    """The lock `name`, held by another run (a thread here; alone unless `shared`) until the block ends."""
    held, done = threading.Event(), threading.Event()

    def other_run():
        with schedule.holding(locks, [name], shared=shared, wait=5):
            held.set()
            done.wait(5)
    other = threading.Thread(target=other_run)
    other.start()
    held.wait(5)
    try:
        yield
    finally:
        done.set()
        other.join()


def test_a_round_whose_nodes_another_run_holds_is_not_measured_and_says_so(tmp_path, monkeypatch):
    locks = tmp_path / "locks"
    monkeypatch.setattr(schedule, "LOCK_WAIT_S", 0.2)
    calls = []
    entry = plan.in_rounds("lane.one_stream", "link_pair", lambda s, d, ctx: calls.append((s, d)))
    with held_by_another_run(locks, "thor-1"):
        # the thor-1 -> thor-2 round waits for the other run's lock, at most its bound
        measured = entry.gather([("thor-1", "thor-2")], plan.Context(THOR5, {"thor-1": "h1", "thor-2": "h2"},
                                                                      EvidenceLog(), locks))
    assert calls == []
    assert isinstance(measured[("thor-1", "thor-2")].error, schedule.LockBusy)


def test_a_rounds_servers_start_while_the_round_before_measures(tmp_path):
    """No round waits for its servers to start: ahead readies round r + 1's pairs while round r
    measures, and the first round's before it."""
    measured, readied = {}, {}

    def measure(sender, receiver, ctx):
        started = time.monotonic()
        time.sleep(0.2)
        measured[(sender.name, receiver.name)] = (started, time.monotonic())
    hosts = {node.name: SimpleNamespace(name=node.name, servers=OwnServers()) for node in THOR5.nodes}
    entry = plan.in_rounds("lane.one_stream", "link_pair", measure,
                           ahead=lambda sender, receiver, ctx: readied.setdefault((sender.name, receiver.name),
                                                                                  time.monotonic()))
    rounds = kinds.rounds("link_pair", THOR5)
    entry.gather([pair for round_ in rounds for pair in round_], plan.Context(THOR5, hosts, EvidenceLog(), tmp_path))
    assert all(readied[pair] < min(measured[p][0] for p in rounds[0]) for pair in rounds[0])
    for k, round_ in enumerate(rounds[1:], start=1):
        ended = [max(measured[p][1] for p in rounds[j]) for j in range(k)]
        # while the round before measured (after the one before that ended), before its own
        assert all(max(ended[:-1], default=0) < readied[pair] < min([ended[-1], *(measured[p][0] for p in round_)])
                   for pair in round_), k


def test_a_rack_another_runs_disruptive_check_holds_is_each_checks_lockbusy_never_the_runs(tmp_path, monkeypatch):
    locks = tmp_path / "locks"
    monkeypatch.setattr(schedule, "LOCK_WAIT_S", 0.2)
    seen = []
    with held_by_another_run(locks, schedule.WHOLE_RACK):   # its disruptive check, alone on the rack
        results = plan.run([_recorder("facts.a", plan.Phase.FACTS, "node", seen)], {"facts.a": [("thor-1",), ("thor-2",)]},
                           plan.Context(THOR5, {}, EvidenceLog(), locks))
    assert seen == []
    for node in ("thor-1", "thor-2"):
        assert isinstance(results.part("facts.a", node).error, schedule.LockBusy)


def _rack_alone(locks) -> bool:
    """Whether a run holds the whole rack alone now (another run could not even share it)."""
    try:
        with schedule.holding(locks, [schedule.WHOLE_RACK], shared=True, wait=0.05):
            return False
    except schedule.LockBusy:
        return True


class _ByName(dict):
    """Hosts that are their names, and none a node the settling asks after."""

    def __missing__(self, name):
        return name


def test_the_disruptive_phase_runs_last_one_pair_at_a_time_alone_on_the_rack(tmp_path):
    locks, seen = tmp_path / "locks", []
    entries = [plan.alone("loss", "bond_pair", lambda s, d, ctx: seen.append((f"{s}->{d}", _rack_alone(locks))) or s),
               _recorder("after", plan.Phase.AFTER_LOAD, "lane", seen), _recorder("facts", plan.Phase.FACTS, "node", seen)]
    said = []
    results = plan.run(entries, {"loss": [("thor-1", "thor-2"), ("thor-2", "thor-3")], "after": [("thor-1", "mgbe0_0")],
                                 "facts": [("thor-1",)]},
                       plan.Context(THOR5, _ByName(), EvidenceLog(), locks, said=said.append))
    assert [s[:2] for s in seen] == [("facts", "start"), ("facts", "end"), ("after", "start"), ("after", "end"),
                                      ("thor-1->thor-2", True), ("thor-2->thor-3", True)]
    assert said[-1] == "rackproof: measuring disruptive (1 measurement, 2 targets)"
    assert results.part("loss", "thor-2->thor-3").value == "thor-2"
    assert not _rack_alone(locks)      # released


def test_a_disruptive_phase_another_run_keeps_waiting_is_its_checks_lockbusy_and_the_rest_is_measured(tmp_path,
                                                                                                      monkeypatch):
    locks, seen = tmp_path / "locks", []
    monkeypatch.setattr(schedule, "LOCK_WAIT_S", 0.2)
    entries = [plan.alone("loss", "bond_pair", lambda s, d, ctx: seen.append("loss")),
               _recorder("facts", plan.Phase.FACTS, "node", seen)]
    with held_by_another_run(locks, schedule.WHOLE_RACK, shared=True):   # another run's plan, measuring
        results = plan.run(entries, {"loss": [("thor-1", "thor-2")], "facts": [("thor-1",)]},
                           plan.Context(THOR5, {}, EvidenceLog(), locks))
    assert "loss" not in seen and results.part("facts", "thor-1").value == "facts:('thor-1',)"
    assert isinstance(results.part("loss", "thor-1->thor-2").error, schedule.LockBusy)


def test_results_cross_to_the_workers_as_json_and_nothing_else(tmp_path):
    evidence = [Evidence("thor-1", "ethtool mgbe0_0", 0, "Link detected: yes", "", 0.01, 1.5e9)]
    clock = datetime.datetime(2026, 12, 6, 9, 41, 7, tzinfo=datetime.timezone(datetime.timedelta(hours=1)))
    results = plan.Measured({("lane.link", "thor-1:mgbe0_0"): Part(("up",), None, evidence),
                            ("lane.link", "thor-2:mgbe0_0"): Part(None, NodeUnreachable("thor-2", "no route"), []),
                            ("node.holder_processes", "thor-1"): Part((clock, ()), None, [])})
    again = plan.Measured.loads(results.dumps())
    assert again.parts[("lane.link", "thor-1:mgbe0_0")] == results.parts[("lane.link", "thor-1:mgbe0_0")]
    assert again.parts[("node.holder_processes", "thor-1")].value == (clock, ())   # a node's clock, its offset kept
    assert again.parts[("node.holder_processes", "thor-1")].value[0].utcoffset() == datetime.timedelta(hours=1)
    assert str(again.part("lane.link", "thor-2:mgbe0_0").error) == "thor-2 is unreachable: no route"
    with pytest.raises(portable.Unportable):
        plan.Measured.loads(portable.dumps({("lane.link", "thor-1:mgbe0_0"): "not a part"}))


SPY = """
import os
from rackproof.measuring import plan
_run = plan.run
def _note(line):
    with open(os.environ["RACKPROOF_PLAN_CALLS"], "a") as calls:
        calls.write(line + "\\n")
def pytest_configure(config):
    _note(f"{os.getpid()} {'worker' if hasattr(config, 'workerinput') else 'controller'}")
def run(*args, **kwargs):
    _note(f"{os.getpid()} ran the plan")
    return _run(*args, **kwargs)
plan.run = run
"""


def _who_ran_the_plan(calls) -> list[str]:
    lines = calls.read_text().splitlines()
    roles = dict(line.split(" ", 1) for line in lines if not line.endswith("ran the plan"))
    return [roles[line.split()[0]] for line in lines if line.endswith("ran the plan")]


@pytest.mark.parametrize("replay", ["thor5-healthy", "thor5-lane-down-fec-mismatch", "thor5-ssh-thor2-to-thor4"])
def test_the_controller_measures_once_and_workers_only_judge_to_the_same_outcomes(pytester, monkeypatch, replay):
    (pytester.path / "plan_spy.py").write_text(SPY)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(pytester.path), os.environ.get("PYTHONPATH")])))
    outcomes = {}
    for workers in ((), ("-n", "2")):
        calls = pytester.path / f"calls{len(workers)}"
        monkeypatch.setenv("RACKPROOF_PLAN_CALLS", str(calls))
        run = run_suite(pytester, "-p", "plan_spy", "--replay", str(REPLAYS / replay), *workers)
        assert _who_ran_the_plan(calls) == ["controller"], run.output
        outcomes[workers] = run.outcomes
    assert outcomes[()] == outcomes[("-n", "2")]
    assert len(outcomes[()]) > 250


class _BusySshd:
    """A node whose own ssh to its sshd times out `unreached` times, then gets sshd's refusal."""

    def __init__(self, unreached: int):
        self.name, self.spec, self.unreached, self.asked = "thor-1", THOR5.nodes[0], unreached, 0

    def read_each(self, probe, labels, **values):
        from rackproof.nodes.host import ProbeFailed
        from rackproof.nodes.remote import Result
        self.asked += 1
        if self.asked <= self.unreached:
            raise ProbeFailed(self.name, Result(probe.command(address=next(iter(labels)), **values), 0,
                                                "Connection timed out during banner exchange\n", "", 0.0), "unreadable")
        return {label: ("publickey",) for label in labels}


def test_sshd_not_reached_by_the_nodes_own_ssh_is_asked_again_then_cut_short(monkeypatch, tmp_path):
    from rackproof.nodes.remote import NoAnswer
    monkeypatch.setattr(logins, "SSHD_ASKED_AGAIN_AFTER", (0.01, 0.01))
    ctx = plan.Context(THOR5, {}, EvidenceLog(), tmp_path / "locks")
    slow = _BusySshd(unreached=2)     # a busy rack's handshake: the third ask reaches sshd
    assert logins._offered_methods(slow, ctx) == {"10.10.0.11": ("publickey",)} and slow.asked == 3
    never = _BusySshd(unreached=5)    # never reached: not known, never a failure of the node
    with pytest.raises(NoAnswer, match=r"thor-1: `ssh .*10\.10\.0\.11 true 2>&1` did not reach sshd \(ssh: "
                                       r"Connection timed out during banner exchange\), asked 3 times: whether it "
                                       r"takes passwords is not known"):
        logins._offered_methods(never, ctx)
    assert never.asked == 3
