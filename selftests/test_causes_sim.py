"""Causes chosen from evidence, on a simulated rack: an engine that lists its model and answers
/health but never sends a token fails its checks within the first-token bound, each naming the
model, the node and "accepts requests but does not generate", never "down"."""

from __future__ import annotations

import pytest

from selftests.simrack import SimRack, rack_marks, unique_name
from selftests.suite import run_suite

pytestmark = rack_marks()

MODEL = "llama-3.1-8b@thor-2"


def test_a_stalled_engine_fails_naming_model_node_and_that_it_accepts_but_does_not_generate(pytester):
    with SimRack("thor2", unique_name("stall")) as rack:
        rack.fault("thor-2", "stalled-engine")
        run = run_suite(pytester, f"--inventory={rack.inventory}", "--step", "6", "tests_serving", "-n", "2",
                        netns=rack.rack.topo.bench)
        rack.heal("thor-2", "stalled-engine")
        healed = rack.chat("llama-3.1-8b")   # the healed engine streams again, through the agent
    assert run.failed == {f"test_engines::test_engine_answers_from_the_agent_node[{MODEL}]",
                          f"test_agent::test_agent_streams_each_model[{MODEL}]",
                          f"test_agent::test_remote_model_keeps_up_with_the_local_one[{MODEL}]"}, run.output
    assert run.outcomes[f"test_engines::test_engine_listens_on_its_cluster_address[{MODEL}]"] == "passed"
    direct = run.messages[f"test_engines::test_engine_answers_from_the_agent_node[{MODEL}]"]
    assert "llama-3.1-8b on thor-2 (10.10.0.12:8081)" in direct and "no token within" in direct
    for test in run.failed:
        message = run.messages[test]
        assert "llama-3.1-8b" in message and "thor-2" in message, message
        assert "the engine accepts requests but does not generate: check its log and GPU memory" in message, message
        assert "down" not in message, message
    assert healed[0] == "200", healed
