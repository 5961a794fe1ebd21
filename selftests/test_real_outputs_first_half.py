"""Probes of the first half of `rackproof probes` whose parsers live in modules of their own
checks (rackproof.probes.agent), read on real outputs of other machines (samples/SOURCES.md)."""

from pathlib import Path

from rackproof.probes.agent import parse_agent_process

SAMPLES = Path(__file__).parent / "samples"


def test_ps_pid_args_of_a_rhel_7_host():
    """insights-core's `ps -eo pid,args` of a RHEL 7 host (with the header our `pid=,args=` leaves
    out): pids right-aligned, a six-digit pid with no space before it, kernel threads in brackets."""
    text = (SAMPLES / "ps_eo_pid_args_rhel7_insights_fixture.txt").read_text()
    assert parse_agent_process(text) is None                       # no agent runs there
    httpd = parse_agent_process(text, "httpd")
    assert (httpd.pid, httpd.args) == (988, "/usr/sbin/httpd -DFOREGROUND")
    java = parse_agent_process(text, "java")
    assert (java.pid, java.args) == (28218, "/usr/bin/java TestSleepMethod1")
    assert parse_agent_process(text, "kthreadd") is None           # "[kthreadd]" is no program path
