"""The rack as built, from the inventory, with the state of every element taken from the
checks that touched it: each lane and its switch port, each CX7 logical interface and the
direct cable between a Spark pair, each bond, each node, each node's way in from the house
network (the controller's SSH), and each pair of nodes.

A state is the worst outcome of those checks: failed, error (unconfirmed), waived, passed; a
skipped check does not count, and an element no check touched is "not checked".
"""

from __future__ import annotations

from rackproof.inventory.model import ClusterAtStep, Node

from .facts import REACHED, UNREACHABLE

STATES = ("failed", "error", "waived", "passed", "not checked")   # worst first
_STATE_OF = {"failed": "failed", "error": "error", "waived": "waived", "passed": "passed", "warned": "passed"}


def state(outcomes) -> str:
    """The worst of some outcomes (or of some states: a state reads as the outcome it names)."""
    seen = {_STATE_OF[o] for o in outcomes if o in _STATE_OF}
    return next((s for s in STATES if s in seen), "not checked")


def _element(tests: list[dict]) -> dict:
    return {"state": state(t["outcome"] for t in tests), "tests": [t["id"] for t in tests]}


def _joins(cluster: ClusterAtStep, *steps: int) -> dict:
    """When an element joins (the latest of its own step and its node's), and whether it has."""
    joins = max(steps)
    return {"joins_at_step": joins, "joined": joins <= cluster.step}


def _seen_port(cluster: ClusterAtStep, lane, facts: dict) -> dict:
    """{"seen_port": N} when LLDP put the lane in another port of the switch than the plan."""
    switch = cluster.inventory.switch
    system, _, name = facts.get("LLDP", "").partition(" ")
    seen = switch.port_number(name) if switch and system else None
    return {"seen_port": seen} if seen is not None and seen != lane.switch_port else {}


def _node_entry(cluster: ClusterAtStep, node: Node, tests: list[dict], facts: dict, reach: dict) -> dict:
    def on(iface: str) -> list[dict]:
        return [t for t in tests if [node.name, iface] in t["interfaces"]]

    interfaces = [
        {"name": lane.name, "kind": "lane", "switch_port": lane.switch_port, "cable": lane.cable,
         "connected": lane.connected, **_joins(cluster, lane.joins_at_step, node.joins_at_step),
         "facts": facts.get((node.name, lane.name), {}), **_seen_port(cluster, lane, facts.get((node.name, lane.name), {})),
         **_element(on(lane.name))}
        for lane in node.lanes]
    interfaces += [
        {"name": c.name, "kind": "cx7", "rdma_device": c.rdma_device, "address": c.address,
         "connected": True, **_joins(cluster, node.joins_at_step),
         "facts": facts.get((node.name, c.name), {}), **_element(on(c.name))}
        for c in node.cx7]
    bond = node.bond and {"name": node.bond.name, "mode": node.bond.mode, "lanes": list(node.bond.lanes),
                          **_joins(cluster, node.bond.joins_at_step, node.joins_at_step), **_element(on(node.bond.name))}
    # node-level checks: the node itself is the subject (hostname, login, versions), not its links
    own = [t for t in tests if node.name in t["nodes"] and not t["interfaces"] and not t["pairs"]]
    way_in = reach.get(node.name, {}).get("status")
    return {
        "name": node.name, "address": node.address, "joins_at_step": node.joins_at_step,
        "joined": cluster.joined(node), "interfaces": interfaces, "bond": bond,
        "house": {REACHED: "passed", UNREACHABLE: "failed"}.get(way_in, "not checked"),
        **_element(own),
    }


def build(cluster: ClusterAtStep, tests: list[dict], interface_facts: dict, reach: dict) -> dict:
    """Every node of the inventory, joined by the cluster's step or not (drawn dashed)."""
    inventory = cluster.inventory
    nodes = [_node_entry(cluster, n, tests, interface_facts, reach) for n in inventory.nodes]
    switch = inventory.switch and {"name": inventory.switch.name, "ports": inventory.switch.ports,
                                   "fec": inventory.switch.fec, "port_speed_mbps": inventory.switch.port_speed_mbps}
    cabled = [n for n in inventory.nodes if n.cx7]
    # a Spark pair: one QSFP cable, its logical interfaces paired in order (playbook: same port both ends)
    cables = []
    if len(cabled) == 2 and len(cabled[0].cx7) == len(cabled[1].cx7):
        ends = {n["name"]: {i["name"]: i for i in n["interfaces"]} for n in nodes}
        a, b = cabled
        for ca, cb in zip(a.cx7, b.cx7):
            both = [ends[a.name][ca.name], ends[b.name][cb.name]]
            cables.append({"a": [a.name, ca.name], "b": [b.name, cb.name], "state": state(i["state"] for i in both)})
    pairs: dict[tuple[str, str], list[dict]] = {}
    for test in tests:
        for src, dst in test["pairs"]:
            pairs.setdefault((src, dst), []).append(test)
    return {
        "platform": inventory.cluster.platform, "step": cluster.step, "switch": switch, "nodes": nodes,
        "cables": cables,
        "pairs": [{"src": src, "dst": dst, **_element(ts)} for (src, dst), ts in pairs.items()],
    }
