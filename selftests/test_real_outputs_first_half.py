"""Probes of the first half of `rackproof probes` whose parsers other changes own (rackproof.probes.agent,
.jetson), read on real outputs of other machines (samples/SOURCES.md)."""

from pathlib import Path

from rackproof.probes.agent import parse_agent_process
from rackproof.probes.counters import parse_bytes
from rackproof.probes.jetson import parse_dpkg_versions, parse_nvpmodel

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


def test_nvpmodel_of_a_jetson_thor_in_maxn():
    """A Jetson Thor's `sudo nvpmodel -q` in a 2026 inference report: the same two lines as an Orin's."""
    mode = parse_nvpmodel((SAMPLES / "nvpmodel_q_thor_maxn_openpi_report.txt").read_text())
    assert (mode.name, mode.id) == ("MAXN", 0)


def test_nvpmodel_after_a_warning_of_its_own():
    """A Jetson Nano (L4T R32.5.1) warns about its fan before the mode: the warning is no mode."""
    mode = parse_nvpmodel((SAMPLES / "nvpmodel_q_nano_r32.5.1_fan_mode_warning.txt").read_text())
    assert (mode.name, mode.id) == ("MAXN", 0)


def test_dpkg_query_show_of_an_agx_orin_on_jetpack_6_2():
    """`dpkg-query --show nvidia-l4t-core`, then `... nvidia-jetpack`, on an AGX Orin 32GB: the
    default format (package, TAB, version), which the parser reads as well as its own -f."""
    text = (SAMPLES / "dpkg_query_show_l4t_core_and_jetpack_orin_agx_jp6.2.txt").read_text()
    assert parse_dpkg_versions(text) == {"nvidia-l4t-core": "36.4.3-20250107174145", "nvidia-jetpack": "6.2+b77"}


def test_the_byte_counters_of_a_centos_6_vps():
    """rx_bytes then tx_bytes of a CentOS 6 VPS's venet0 (two `cat`s in the source, one after the other)."""
    assert parse_bytes((SAMPLES / "sysfs_rx_tx_bytes_centos6_vps_venet0_EDITED.txt").read_text()) == \
        (2300558468, 2111210364)
