"""What a test touched, read from its parameters: nodes, interfaces (lanes, CX7 logical
interfaces, bonds) and pairs of nodes.

A parameter is a name or a tuple of names (node names first), and the names themselves,
checked against the inventory, say what was touched, so new kinds of parameters need no
change here:

    "thor-3" or ("thor-3",)         a node
    ("thor-3", "mgbe1_0")           an interface of a node: a lane, a CX7 interface, a bond
    ("thor-1", "thor-2")            a pair of nodes
    ("thor-2", "llama-3.1-8b")      a node and an engine's model (a model alone: its node)
    ("thor-1", ..., "thor-5")       several nodes

Only a parameter whose name says more than its values is listed in NODE_PARAMS_MEANING.
"""

from __future__ import annotations

from rackproof.inventory import Inventory, Node

# a node-valued parameter that stands for one of that node's interfaces
NODE_PARAMS_MEANING = {"bonded_node": "bond"}


def plain(value):
    """A parameter value as JSON: tuples become lists, anything else unknown its text."""
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def _interfaces(node: Node) -> set[str]:
    return {lane.name for lane in node.lanes} | {c.name for c in node.cx7} | (
        {node.bond.name} if node.bond else set())


def touched(params: dict, inventory: Inventory) -> dict:
    """{"nodes": [...], "interfaces": [[node, iface]], "pairs": [[a, b]]} in inventory order."""
    nodes = {n.name: n for n in inventory.nodes}
    engines = {e.model: e.node for e in inventory.engines}
    found_nodes, interfaces, pairs = set(), set(), set()
    for name, value in params.items():
        words = [value] if isinstance(value, str) else list(value) if isinstance(value, (list, tuple)) else []
        words = [w for w in words if isinstance(w, str)]
        named = [w for w in words if w in nodes]
        found_nodes.update(named)
        found_nodes.update(engines[w] for w in words if w in engines)
        if len(words) == 2 and words[0] in nodes:
            if words[1] in nodes:
                pairs.add(tuple(words))
            elif words[1] in _interfaces(nodes[words[0]]):
                interfaces.add(tuple(words))
        if NODE_PARAMS_MEANING.get(name) == "bond":
            interfaces.update((n, nodes[n].bond.name) for n in named if nodes[n].bond)
    order = {name: i for i, name in enumerate(nodes)}
    return {
        "nodes": sorted(found_nodes, key=order.__getitem__),
        "interfaces": [list(i) for i in sorted(interfaces, key=lambda i: (order[i[0]], i[1]))],
        "pairs": [list(p) for p in sorted(pairs, key=lambda p: (order[p[0]], order[p[1]]))],
    }
