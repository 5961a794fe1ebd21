"""The simulated rack's jetson_clocks and chronyc print what the real ones print: each real sample
(samples/SOURCES.md) is parsed by the product's parser, those facts rendered by the simulator's
renderer, and the two compared line by line where the facts fix the line."""

import re
from pathlib import Path

import pytest

from rackproof.probes.chrony import parse_tracking
from rackproof.probes.jetson import parse_dpkg_versions, parse_jetson_clocks, parse_nv_tegra_release, parse_nvpmodel
from rackproof_sim.formats.chrony import render_tracking
from rackproof_sim.formats.jetson import (
    render_dpkg_versions, render_jetson_clocks, render_nv_tegra_release, render_nvpmodel)

SAMPLES = Path(__file__).parent / "samples"


def jetson_clocks_round_trip(name: str) -> tuple[list[str], list[str]]:
    real = (SAMPLES / name).read_text()
    mode = parse_nvpmodel(real[real.index("NV Power Mode:"):] + "0\n").name
    return real.splitlines(), render_jetson_clocks(parse_jetson_clocks(real), mode).splitlines()


def test_a_thors_jetson_clocks_line_for_line():
    """A real Thor (JetPack 7, MAXN, locked): every line, its SoC, EMC, PVA and fan lines included
    (the renderer's constants for a Thor come from this sample)."""
    real, rendered = jetson_clocks_round_trip("jetson_clocks_show_thor_jp7_maxn_locked.txt")
    assert rendered == real


@pytest.mark.parametrize("name", ["jetson_clocks_show_agx_orin_30w_locked_cpu8-11_offline.txt",
                                  "jetson_clocks_show_orin_nano_super_jp6_unlocked.txt",
                                  "jetson_clocks_show_agx_orin_30w_unlocked_cpu8-11_offline.txt"])
def test_an_orins_jetson_clocks_lines(name):
    """Orin's layout: the renderer prints the "Online CPUs:", CPU, GPU and power mode lines (the others
    no check reads), in the real order. An unlocked clock's CurrentFreq moves with the load: the
    renderer prints its max (an offline CPU's: its min), so on those lines only CurrentFreq is left out."""
    real, rendered = jetson_clocks_round_trip(name)
    kept = [line for line in real if re.match(r"(Online CPUs:|cpu[0-9]+:|GPU |NV Power Mode:)", line)]
    assert len(rendered) == len(kept)
    for have, want in zip(rendered, kept):
        if "unlocked" in name and have.startswith(("cpu", "GPU")):
            have, want = (re.sub(r"CurrentFreq=[0-9]+", "CurrentFreq=", line) for line in (have, want))
        assert have == want


@pytest.mark.parametrize("name", ["chronyc_tracking_chronyc_manual_example.txt",
                                  "chronyc_tracking_synced_stratum3_centos7.txt",
                                  "chronyc_tracking_localref_7f7f0101_server_unreachable_centos7.txt",
                                  "chronyc_tracking_localref_7f7f0101_no_sources_lab_2026.txt",
                                  "chronyc_tracking_pps_refclock_stratum1_timeserver.txt"])
def test_chronyc_tracking_lines(name):
    """The reference, stratum, offset and leap status lines are the real ones; every line is in
    chronyc's layout ("Name<padded to 16>: value") and order."""
    real = (SAMPLES / name).read_text().splitlines()
    tracking = parse_tracking("\n".join(real))
    rendered = render_tracking(tracking.offset_s, tracking.reference, tracking.stratum, tracking.leap_status).splitlines()
    assert [line[:18] for line in rendered] == [line[:18] for line in real]
    fixed = ("Reference ID", "Stratum", "System time", "Leap status")
    assert [line for line in rendered if line.startswith(fixed)] == [line for line in real if line.startswith(fixed)]


@pytest.mark.parametrize("name, parse, render", [
    ("nv_tegra_release_R38.2.0_jp7.txt", parse_nv_tegra_release, render_nv_tegra_release),  # a Thor's, JetPack 7
    ("nvpmodel_q_agx_orin_maxn.txt", parse_nvpmodel, render_nvpmodel),
    ("dpkg_query_local_debian12_bash_libc6.txt", parse_dpkg_versions, render_dpkg_versions),
])
def test_the_other_jetson_renderers_give_the_real_output_back(name, parse, render):
    """Every line of these is fixed by the facts (the release file's GCID and date: the renderer's
    defaults, taken from this file)."""
    real = (SAMPLES / name).read_text()
    assert render(parse(real)) == real
