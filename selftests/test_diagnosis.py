"""rackproof.measuring.diagnosis: which measured results show the symptom a diagnosis is asked for, both
sides of each (no rack: results made here), and that a finding asks only the node it names; the
plan's diagnosis phase (plan.diagnosis) asks it of those targets only, after the other phases."""

from pathlib import Path
from types import SimpleNamespace

import pytest

from rackproof.measuring import diagnosis, plan
from rackproof.measuring.serving import Comparison
from rackproof.inventory.model import FINISHED, load_inventory
from rackproof.probes.getent import GETENT_HOSTS
from rackproof.probes.iperf import IperfResult
from rackproof.probes.slurm import Controller, NodeState
from rackproof.inventory.references import lane_gbps
from rackproof.nodes.remote import EvidenceLog, NodeUnreachable, Result

INVENTORY = load_inventory(Path(__file__).parents[1] / "examples" / "thor5.toml")
CLUSTER = INVENTORY.at(FINISHED)
LANE = lane_gbps(INVENTORY.expect) * 1e9
PAIR = SimpleNamespace(src=SimpleNamespace(name="thor-1", spec=INVENTORY.node("thor-1")),
                       dst=SimpleNamespace(name="thor-2", spec=INVENTORY.node("thor-2")))


def rate(bps: float) -> IperfResult:
    return IperfResult(bps, bps, 0, 1, 3.0, "thor-1", "10.10.0.12", 5201, False)


def test_a_rate_under_its_floor_shows_the_symptom_and_one_at_it_does_not():
    assert diagnosis.slow_one_stream(PAIR, (rate(0.5 * LANE), rate(0.6 * LANE)), CLUSTER)
    assert not diagnosis.slow_one_stream(PAIR, (rate(0.5 * LANE), rate(0.95 * LANE)), CLUSTER)
    assert diagnosis.slow_bond(PAIR, (rate(2 * LANE),), CLUSTER)
    assert not diagnosis.slow_bond(PAIR, (rate(3.9 * LANE),), CLUSTER)
    assert not diagnosis.slow_bond(PAIR, None, CLUSTER)   # a pair not both bonded: nothing measured


def test_slurms_refusals_show_the_symptom_and_a_working_node_does_not():
    node = SimpleNamespace(name="thor-3")
    up, down = Controller("primary", "thor-1", True), Controller("primary", "thor-1", False)
    assert diagnosis.controller_not_up(node, [down], CLUSTER) and not diagnosis.controller_not_up(node, [up], CLUSTER)
    idle, silent, drained = NodeState("idle", None), NodeState("down*", "Not responding"), NodeState("drained", "fan")
    ran = Result("srun -w thor-3 hostname", 0, "thor-3\n", "", 0.1)
    refused = Result("srun -w thor-3 hostname", 1, "", "srun: error: Invalid credential", 0.1)
    assert diagnosis.job_refused(node, (silent, None), CLUSTER)
    assert diagnosis.job_refused(node, (idle, refused), CLUSTER)
    assert not diagnosis.job_refused(node, (idle, ran), CLUSTER)
    assert not diagnosis.job_refused(node, (drained, None), CLUSTER)   # drained by hand: munge is not asked
    assert not diagnosis.job_refused(node, (None, None), CLUSTER)


def test_an_unreached_name_shows_the_symptom_and_only_the_sender_is_asked_where_it_leads():
    asked = []

    def read(probe, names):
        asked.append((probe, tuple(names)))
        return {"thor-2": ("192.168.100.2",)}
    pair = SimpleNamespace(src=SimpleNamespace(name="thor-1", read=read), dst=PAIR.dst)
    unreached = Result("ssh thor-2 hostname", 255, "", "ssh: connect to host thor-2 port 22: No route to host", 1.0)
    refused = Result("ssh thor-2 hostname", 255, "", "thor@thor-2: Permission denied (publickey).", 1.0)
    assert diagnosis.name_unreached(pair, unreached, CLUSTER)
    assert not diagnosis.name_unreached(pair, refused, CLUSTER)
    assert not diagnosis.name_unreached(pair, Result("ssh thor-2 hostname", 0, "thor-2\n", "", 0.1), CLUSTER)
    assert diagnosis.where_the_name_leads(pair, unreached) == ("192.168.100.2",)
    assert asked == [(GETENT_HOSTS, ("thor-2",))]


def test_a_chat_that_did_not_come_whole_shows_the_symptom():
    whole = SimpleNamespace(problem=None, tokens_per_s=None)
    broken = SimpleNamespace(problem="the stream stopped", tokens_per_s=None)
    assert diagnosis.chat_broken(None, (broken,), CLUSTER) and not diagnosis.chat_broken(None, (whole,), CLUSTER)
    assert diagnosis.compared_chat_broken(None, (Comparison(broken, whole),), CLUSTER)
    # the local one: no agent to ask
    assert not diagnosis.compared_chat_broken(None, (Comparison(whole, broken),), CLUSTER)


class _ByName(dict):
    """Hosts that are their names, and none a node the settling asks after."""

    def __missing__(self, name):
        return name


def test_the_plan_asks_a_diagnosis_of_the_targets_showing_a_symptom_only_after_the_other_phases(tmp_path):
    seen = []

    def rate(node, ctx):
        seen.append(("rate", node))
        if node == "thor-4":
            raise NodeUnreachable(node, "no route")   # its judge reports that: no cause to find
        return 1 if node == "thor-3" else 10
    rates = plan.each("x.rate", plan.Phase.FACTS, "node", rate)
    jobs = plan.each("x.job", plan.Phase.LOAD, "node", lambda node, ctx: seen.append(("job", node)) or node == "thor-1")
    cause = plan.diagnosis("x.cause", [(rates, lambda node, value, cluster: value < 5),
                                       (jobs, lambda node, refused, cluster: refused)],
                           lambda node, value, ctx: seen.append(("cause", node)) or f"{node}: {value}")
    nodes = [("thor-1",), ("thor-2",), ("thor-3",), ("thor-4",)]
    said = []
    results = plan.run([cause, rates, jobs], {"x.rate": nodes, "x.job": nodes[:2], "x.cause": nodes},
                       plan.Context(CLUSTER, _ByName(), EvidenceLog(), tmp_path / "locks", said=said.append))
    assert sorted(node for what, node in seen[-2:] if what == "cause") == ["thor-1", "thor-3"], seen
    assert [what for what, _ in seen[:-2]] == ["rate"] * 4 + ["job"] * 2
    # thor-1 by its refused job (its rate was good: fn gets what showed the symptom), thor-3 by its rate
    assert results.part("x.cause", "thor-1").value == "thor-1: True"
    assert results.part("x.cause", "thor-3").value == "thor-3: 1"
    for node in ("thor-2", "thor-4"):
        with pytest.raises(plan.NotMeasured):
            results.part("x.cause", node)
    # the diagnosis says nothing on the terminal: a healthy rack's asks no one
    assert said == ["rackproof: measuring facts (1 measurement, 4 targets)",
                    "rackproof: measuring load (1 measurement, 2 targets)"]
