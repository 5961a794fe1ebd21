"""Synthetic checks for the report's selftests (copied into a run as tests_synthetic/): the
figures, facts and capabilities that the network and serving checks give, with planted
results, so that charts, warned and failed figures, missing figures and facts can be tested
against a recording that has no such answers.

Each asks its nodes for `hostname` first (recorded everywhere), so an unreachable node fails
these checks as it fails the real ones, before any figure.
"""

import pytest

from rackproof.judging.failure import judge
from rackproof.probes.system import HOSTNAME
from rackproof.inventory.references import REFERENCES, Reference

# figures of their own, with a target above the floor so that a figure between them is warned
REFERENCES.update({r.name: r for r in (
    Reference("synthetic.lane", "lane rate", "Gbit/s", lambda e: 22.5, "22.5", target=23.5),
    Reference("synthetic.tokens", "tokens/s", "tokens/s", lambda e: 30.0, "30"),
)})

# Gbit/s of one iperf3 stream, sender -> receiver; all others 23.8 (target 23.5, floor 22.5)
PLANTED_RATES = {("thor-3", "thor-1"): 23.1, ("thor-5", "thor-2"): 17.9}
TOKENS_PER_S = {"thor-1": 41.0, "thor-2": 40.2, "thor-3": 12.5, "thor-4": 39.8, "thor-5": 40.7}


@pytest.mark.capability("cluster network bandwidth")
def test_synthetic_pair_rate(pair, measure):
    pair.dst.read(HOSTNAME)   # as iperf3 does: the server on the receiver, then the client on the sender
    pair.src.read(HOSTNAME)
    rate = PLANTED_RATES.get((pair.src.name, pair.dst.name), 23.8)
    m = measure("synthetic.lane", pair.where, rate, "Gbit/s")
    judge(m, f"{pair.where} (iperf3 one stream)", "a lane negotiated lower")


@pytest.mark.capability("serving on each node")
def test_synthetic_tokens(node, measure, facts):
    facts(node.name, "jetpack", "7.0")
    node.read(HOSTNAME)
    m = measure("synthetic.tokens", f"qwen3-8b on {node.name}", TOKENS_PER_S[node.name], "tokens/s")
    judge(m, node.name, "")


@pytest.mark.disruptive
def test_synthetic_pull_a_bond_lane(node):
    pass
