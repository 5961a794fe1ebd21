"""rackproof.probes.agent against `ps -eo pid=,args=`.

ps_eo_pid_args_local_pidns_agent_standin.txt: procps-ng ps on the dev machine, in a fresh PID
namespace (`unshare --pid --fork --mount-proc sh -c '...'`) where a stand-in script named
thor-tigress-agent (it only sleeps) ran under python3 with --listen and two --engine routes,
started by the shell whose command line names it too.
"""

import shlex

import pytest
from hypothesis import given, settings, strategies as st

from rackproof.probes import ParseError
from rackproof.probes.agent import _words, parse_agent_process
from selftests.robustness import sample

PS = """    1 /sbin/init
  812 /usr/bin/python3 /usr/local/bin/thor-tigress-agent --listen 127.0.0.1:8080 --engine qwen3-8b=127.0.0.1:8081 --engine llama-3.1-8b=thor-2:8081 --engine=gemma-3-12b=thor-3:8081
  901 bash -c ps -eo pid=,args= | grep thor-tigress-agent
"""


def test_reads_the_agent_and_its_engine_routes_in_order():
    agent = parse_agent_process(PS)
    assert agent.pid == 812 and agent.listen == "127.0.0.1:8080"
    assert agent.engines == (("qwen3-8b", "127.0.0.1:8081"), ("llama-3.1-8b", "thor-2:8081"),
                             ("gemma-3-12b", "thor-3:8081"))


def test_a_shell_mentioning_the_name_is_not_the_agent():
    assert parse_agent_process(PS.splitlines()[2] + "\n") is None


def test_local_capture_the_shell_naming_the_agent_is_not_it():
    agent = parse_agent_process(sample("ps_eo_pid_args_local_pidns_agent_standin.txt"))
    assert (agent.pid, agent.listen) == (2, "10.10.0.11:8080")
    assert agent.engines == (("qwen3-8b", "10.10.0.11:8081"), ("llama-3.1-8b", "thor-2:8081"))


@pytest.mark.parametrize("pid", ["\u00b2", "\u0663", "9" * 5000, "-1"])
def test_a_pid_that_is_not_a_pid_is_not_a_process(pid):
    assert parse_agent_process(f"{pid} thor-tigress-agent --listen 10.10.0.11:8080\n") is None


def test_a_malformed_engine_flag_is_a_parse_error():
    try:
        parse_agent_process("7 thor-tigress-agent --engine qwen3-8b\n")
    except ParseError as e:
        assert "MODEL=HOST:PORT" in e.reason
    else:
        raise AssertionError("no ParseError")


def test_quoted_arguments_are_read_as_the_shell_wrote_them():
    agent = parse_agent_process("""7 thor-tigress-agent --listen "10.10.0.11:8080" --engine 'qwen3-8b=thor-2:8081' """
                                """--engine=llama\\-3.1-8b="thor-3":8081 --label "a \\"b\\" \\c" ''\n""")
    assert agent.listen == "10.10.0.11:8080"
    assert agent.engines == (("qwen3-8b", "thor-2:8081"), ("llama-3.1-8b", "thor-3:8081"))


def test_an_unclosed_quote_is_split_at_whitespace():
    agent = parse_agent_process("7 thor-tigress-agent --listen 10.10.0.11:8080 --engine qwen3-8b=thor-2:8081 'x\n")
    assert (agent.listen, agent.engines) == ("10.10.0.11:8080", (("qwen3-8b", "thor-2:8081"),))


def shlex_split(args: str) -> list[str]:
    """What the parser split with before (quadratic in a long word): the reference."""
    try:
        return shlex.split(args)
    except ValueError:
        return args.split()


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet="a=:-'\"\\ \t\r\n\x0b#$", max_size=24))
def test_words_are_split_exactly_as_shlex_splits_them(args):
    assert list(_words(args)) == shlex_split(args)
