"""The simulator's renderers (rackproof_sim.formats) print what the real tools print: each one,
given the facts read from a real sample by the product's parser, gives that sample back (or its
lines, where the renderer leaves out what no check reads). The round trips (parse(render(x)) == x)
live beside each parser's own tests, selftests/test_probe_*.py."""

import subprocess
import sys
from pathlib import Path

import pytest

from rackproof.probes.chrony import parse_tracking
from rackproof.probes.counters import parse_ethtool_stats
from rackproof.probes.docker import parse_image_id
from rackproof.probes.jetson import parse_dpkg_versions, parse_jetson_clocks
from rackproof.probes.nvidia_smi import parse_nvidia_smi_query
from rackproof_sim.formats.chrony import render_tracking
from rackproof_sim.formats.counters import render_ethtool_stats
from rackproof_sim.formats.docker import render_image_id
from rackproof_sim.formats.jetson import render_dpkg_versions, render_jetson_clocks
from rackproof_sim.formats.nvidia_smi import render_nvidia_smi_query

SAMPLES = Path(__file__).parent / "samples"


def sample(name: str) -> str:
    return (SAMPLES / name).read_text()


@pytest.mark.parametrize("tool", ["ib_write_bw", "ib_write_lat"])
def test_perftest_answers_its_version_as_perftest_does(tool):
    # the survey asks every tool its version (`timeout 5 TOOL --version`): perftest prints one line and
    # fails, before it opens a device; the stand-in once waited for a client until the timeout killed it
    ran = subprocess.run([sys.executable, "-m", "rackproof_sim.standins", tool, "--version"], capture_output=True,
                         text=True, timeout=30)
    assert (ran.stdout, ran.returncode) == (sample("ib_write_bw_version_FROM_SOURCE.txt"), 1)


def test_ethtool_statistics_as_ethtool_prints_them():
    real = sample("ethtool_S_e1000e_node_exporter_fixture.txt").split("\n", 1)[1]   # after the command line
    assert render_ethtool_stats(parse_ethtool_stats(real)) == real


def test_chronyc_tracking_as_chrony_prints_it():
    real = sample("chronyc_tracking_chronyc_manual_example.txt")
    tracking = parse_tracking(real)
    rendered = render_tracking(tracking.offset_s, "CB00710F (ntp1.example.net)").splitlines()
    # the reference time is the simulated rack's own
    assert [line for line in rendered if not line.startswith("Ref time")] == \
        [line for line in real.splitlines() if not line.startswith("Ref time")]


def test_docker_image_inspect_as_docker_prints_it():
    found = sample("docker_image_inspect_format_id.txt")
    assert render_image_id("hello", parse_image_id(found).id) == (found, 0)
    assert render_image_id("hello", None) == (sample("docker_image_inspect_no_such_image_daemon.txt"), 1)


def test_dpkg_query_versions_as_dpkg_query_prints_them():
    real = sample("dpkg_query_local_debian12_bash_libc6.txt")
    assert render_dpkg_versions(parse_dpkg_versions(real)) == real


def test_nvidia_smi_query_as_nvidia_smi_prints_it():
    fields = ["name", "driver_version", "memory.total"]
    real = sample("nvidia_smi_query_name_driver_memtotal_csv_header_L40.csv")
    assert render_nvidia_smi_query(parse_nvidia_smi_query(real, fields), fields, header=True) == real
    fields = ["index", "name", "utilization.gpu", "memory.used", "memory.total", "temperature.gpu", "power.draw"]
    real = sample("nvidia_smi_query_thor_jp72_fixture_row.csv")
    assert render_nvidia_smi_query(parse_nvidia_smi_query(real, fields), fields) == real


def test_jetson_clocks_lines_as_jetson_clocks_prints_them():
    """The renderer prints the CPU and GPU lines with current = max (the clocks locked, as
    jetson_clocks leaves them) and leaves out what no check reads (SoC, EMC, fan)."""
    real = sample("jetson_clocks_show_orin_nano_super_jp6_unlocked.txt")
    rendered = render_jetson_clocks(parse_jetson_clocks(real), "25W").splitlines()
    locked = [line.replace("CurrentFreq=729600", "CurrentFreq=1344000").replace("CurrentFreq=1190400",
              "CurrentFreq=1344000").replace("CurrentFreq=306000000", "CurrentFreq=918000000")
              for line in real.splitlines()]
    assert rendered and all(line in locked for line in rendered), (rendered, locked)
