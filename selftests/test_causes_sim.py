"""Causes chosen from evidence, on a simulated rack whose inventory bounds the first token at 2 s
and waits 6 s for one (each answer that never comes costs the run the whole wait, so it is no
longer than the late token's 4 s and a margin of 2 s). An engine that lists its model and
answers /health but never sends a token fails its checks within the wait, each naming the
model, the node and "accepts requests but does not generate", never "down". An engine whose
first token comes after 4 s and then streams at its rate fails the first-token checks with the
figure and its bound, and its rate checks pass. A stream that stops after five tokens is named
as stopping midway, not as not generating."""

from __future__ import annotations

import re

import pytest

from selftests.simrack import SimRack, rack_marks, unique_name
from selftests.suite import run_suite

pytestmark = rack_marks()

MODEL = "llama-3.1-8b@thor-2"
DIRECT = f"test_engines::test_engine_answers_from_the_agent_node[{MODEL}]"
THROUGH_AGENT = f"test_agent::test_agent_streams_each_model[{MODEL}]"
COMPARED = f"test_agent::test_remote_model_keeps_up_with_the_local_one[{MODEL}]"
BOUNDS = "first_token_seconds = 2\nfirst_token_wait_seconds = 6\n"


@pytest.fixture(scope="module")
def thor2():
    with SimRack("thor2", unique_name("cause")) as rack:
        yield rack


@pytest.fixture
def inventory(thor2, tmp_path):
    path = tmp_path / "short-bounds.toml"
    path.write_text(thor2.inventory.read_text().replace("[expect]\n", f"[expect]\n{BOUNDS}", 1))
    return path


def serving_checks(pytester, thor2, inventory):
    return run_suite(pytester, f"--inventory={inventory}", "--step", "6", "tests_serving", "-n", "2",
                     netns=thor2.rack.topo.bench)


def test_a_stalled_engine_fails_naming_model_node_and_that_it_accepts_but_does_not_generate(pytester, thor2,
                                                                                             inventory):
    with thor2.planted("thor-2", "stalled-engine"):
        run = serving_checks(pytester, thor2, inventory)
    healed = thor2.chat("llama-3.1-8b")   # the healed engine streams again, through the agent
    assert run.failed == {DIRECT, THROUGH_AGENT, COMPARED}, run.output
    assert run.outcomes[f"test_engines::test_engine_listens_on_its_cluster_address[{MODEL}]"] == "passed"
    direct = run.messages[DIRECT]
    assert "llama-3.1-8b on thor-2 (10.10.0.12:8081)" in direct and "no token within 6 s" in direct
    for test in run.failed:
        message = run.messages[test]
        assert "llama-3.1-8b" in message and "thor-2" in message, message
        assert "the engine accepts requests but does not generate: check its log and GPU memory" in message, message
        assert "down" not in message, message
    assert healed[0] == "200", healed


def test_a_late_first_token_fails_as_a_figure_against_its_bound_and_the_rates_pass(pytester, thor2, inventory):
    with thor2.planted("thor-2", "late-first-token", "4"):
        run = serving_checks(pytester, thor2, inventory)
    assert run.failed == {DIRECT, THROUGH_AGENT}, run.output
    assert run.outcomes[COMPARED] == "passed"    # the rate after the first token keeps up
    for test, where in ((DIRECT, r"llama-3\.1-8b on thor-2 \(10\.10\.0\.12:8081\)"),
                        (THROUGH_AGENT, r"llama-3\.1-8b through the agent on thor-1 \(-> [^)]+:8081\)")):
        message = run.messages[test]
        assert re.match(where + r": first token after 4\.[0-9] s \(bound 2 s\)\. Usual cause: the engine queues "
                        "requests behind other work", message), message
        assert "does not generate" not in message, message


def test_a_stream_that_stops_midway_is_named_as_stopping_not_as_not_generating(pytester, thor2, inventory):
    with thor2.planted("thor-2", "stream-stops", "5"):
        run = serving_checks(pytester, thor2, inventory)
    assert run.failed == {DIRECT, THROUGH_AGENT, COMPARED}, run.output
    for test in run.failed:
        message = run.messages[test]
        assert "llama-3.1-8b" in message and "thor-2" in message, message
        assert "the stream stopped after 5 tokens: nothing more for 6 s" in message, message
        assert "stops generating in the middle of it" in message, message
        assert "does not generate" not in message and "no token within" not in message, message
