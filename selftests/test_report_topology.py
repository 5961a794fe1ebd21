"""The topology: each lane, bond, CX7 link and pair takes the state of the checks that touched
it, and the SVG carries that state where a browser (or a reader) finds it."""

import datetime as dt
import re

from rackproof.inventory.model import load_inventory
from rackproof.report import style, topology, topology_svg
from rackproof.report.document import Recorded, entry_for
from rackproof.report.outcomes import PytestReport
from selftests.suite import EXAMPLES

TODAY = dt.date(2026, 12, 2)


def record(name, params, outcome, text=""):
    """A test as the plugin hands it over: its call phase with its parameters."""
    return Recorded(f"tests_x/test_x.py::{name}",
                      (PytestReport("call", outcome, text, 0.1, {"rackproof_subject": params}),))


def build(inventory, records, step=9):
    tests = [entry_for(r, inventory.at(step), [], TODAY) for r in records]
    return topology.build(inventory.at(step), tests, {}, {})


def element(svg, tag_class, **data):
    """The SVG group of that class with those data attributes (the drawing nests no groups)."""
    for group in re.findall(rf'<g class="{tag_class}[ "].*?</g>', svg, re.DOTALL):
        opening = group.split(">", 1)[0]
        if all(f'data-{k.replace("_", "-")}="{v}"' in opening for k, v in data.items()):
            return group
    raise AssertionError(f"no {tag_class} element with {data}")


def test_a_lane_takes_the_worst_state_of_its_checks_and_skips_do_not_count():
    thor5 = load_inventory(EXAMPLES / "thor5.toml")
    topo = build(thor5, [
        record("test_link[thor-3:mgbe1_0]", {"lane": ["thor-3", "mgbe1_0"]}, "failed", "no link"),
        record("test_speed[thor-3:mgbe1_0]", {"lane": ["thor-3", "mgbe1_0"]}, "skipped", "no link"),
        record("test_link[thor-3:mgbe0_0]", {"lane": ["thor-3", "mgbe0_0"]}, "passed"),
        record("test_speed[thor-4:mgbe0_0]", {"lane": ["thor-4", "mgbe0_0"]}, "skipped", "later"),
        record("test_bond_state[thor-2]", {"bonded_node": ["thor-2"]}, "passed"),
        record("test_ssh[thor-2->thor-4]", {"pair": ["thor-2", "thor-4"]}, "failed", "denied"),
    ])
    lanes = {(n["name"], i["name"]): i for n in topo["nodes"] for i in n["interfaces"]}
    assert lanes["thor-3", "mgbe1_0"]["state"] == "failed" and lanes["thor-3", "mgbe1_0"]["switch_port"] == 10
    assert lanes["thor-3", "mgbe0_0"]["state"] == "passed"
    assert lanes["thor-4", "mgbe0_0"]["state"] == "not checked"
    assert topo["nodes"][1]["bond"]["state"] == "passed"
    assert topo["pairs"] == [{"src": "thor-2", "dst": "thor-4", "state": "failed",
                              "tests": ["tests_x/test_x.py::test_ssh[thor-2->thor-4]"]}]
    svg = topology_svg.draw(topo, {})
    assert f'stroke="{style.RED}"' in element(svg, "lane", node="thor-3", lane="mgbe1_0", port=10, state="failed")
    element(svg, "port", port=10, state="failed", node="thor-3", lane="mgbe1_0")
    element(svg, "port", port=21, state="free")
    element(svg, "bond", node="thor-2", bond="bond0", state="passed")


def test_a_spark_pair_is_drawn_with_its_direct_cable_and_both_logical_links():
    spark2 = load_inventory(EXAMPLES / "spark2.toml")
    topo = build(spark2, [
        record("test_cx7_up[spark-1:enp1s0f1np1]", {"cx7": ["spark-1", "enp1s0f1np1"]}, "failed", "Down"),
        record("test_cx7_up[spark-2:enP2p1s0f1np1]", {"cx7": ["spark-2", "enP2p1s0f1np1"]}, "passed"),
    ])
    assert topo["switch"] is None
    assert [(c["a"], c["b"], c["state"]) for c in topo["cables"]] == [
        (["spark-1", "enp1s0f1np1"], ["spark-2", "enp1s0f1np1"], "failed"),
        (["spark-1", "enP2p1s0f1np1"], ["spark-2", "enP2p1s0f1np1"], "passed")]
    svg = topology_svg.draw(topo, {})
    element(svg, "cable", cable="qsfp", state="failed")
    element(svg, "link", a="spark-1:enp1s0f1np1", b="spark-2:enp1s0f1np1", state="failed")
    element(svg, "lane", node="spark-2", lane="enP2p1s0f1np1", rdma="roceP2p1s0f1", state="passed")
    element(svg, "house", node="spark-1", state="not checked")
