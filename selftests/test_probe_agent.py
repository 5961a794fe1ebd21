from hypothesis import given, settings, strategies as st

from rackproof.probes import ParseError
from rackproof.probes.agent import parse_agent_process

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


def test_a_malformed_engine_flag_is_a_parse_error():
    try:
        parse_agent_process("7 thor-tigress-agent --engine qwen3-8b\n")
    except ParseError as e:
        assert "MODEL=HOST:PORT" in e.reason
    else:
        raise AssertionError("no ParseError")


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_arbitrary_text_gives_none_an_agent_or_a_parse_error(text):
    try:
        parse_agent_process(text)
    except ParseError:
        pass
