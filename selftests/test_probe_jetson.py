"""rackproof.probes.jetson against real Jetson files and dpkg-query / nvpmodel output.

Public: nv_tegra_release_R36.4.7 (Orin, JetPack 6.2) and R38.2.0 (Thor, JetPack 7),
dpkg_query_show_nvidia-l4t-core_jp511 (default `dpkg-query --show`), nvpmodel_q_* (plain and
--verbose); jetson_clocks_show_thor_jp7_maxn_locked.txt (a Thor, JetPack 7, MAXN, locked: its GPU as
gpu-gpc-0 and gpu-nvd-0), jetson_clocks_show_agx_orin_30w_*_cpu8-11_offline.txt (an AGX Orin in 30 W before
and after jetson_clocks, four CPUs offline; sources in samples/SOURCES.md);
jetson_clocks_show_orin_nano_super_jp6_unlocked.txt (`sudo -n jetson_clocks --show` on an
Orin Nano Super, JetPack 6.2.2, from a preflight report, index id 54837080849; its "$ ..." and
"exit=0" lines removed) and jetson_clocks_show_nano_locked_ABRIDGED.txt (a Jetson Nano after
`sudo jetson_clocks`, from a ZED camera note of 2026-09-28, index id 70711749937; its author showed
cpu0 of four). Local (dpkg 1.21, Debian 12): dpkg_query_local_debian12_bash_libc6.txt is
`DPKG_VERSIONS.command(packages=["bash", "nvidia-jetpack", "libc6"])`; the *_admindir_* and *_default_format_*
files are dpkg-query run with --admindir on a status file holding nvidia-jetpack installed,
tensorrt removed with config files left ("rc") and nvidia-l4t-core on hold ("hi").
"""

from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from rackproof.probes import ParseError
from rackproof.probes.jetson import (
    ClockRange, L4TRelease, PowerMode, DPKG_VERSIONS, parse_dpkg_versions, parse_jetson_clocks, parse_nv_tegra_release,
    parse_nvpmodel)
from rackproof_sim.formats.jetson import (
    render_dpkg_versions, render_jetson_clocks, render_nv_tegra_release, render_nvpmodel)

SAMPLES = Path(__file__).parent / "samples"


def sample(name):
    return (SAMPLES / name).read_text()


@pytest.mark.parametrize("name, release, jetpack, version", [
    ("nv_tegra_release_R36.4.7_orin_jp62.txt", L4TRelease("R36", "4.7", 36), 6, "36.4.7"),
    ("nv_tegra_release_R38.2.0_jp7.txt", L4TRelease("R38", "2.0", 38), 7, "38.2.0"),
])
def test_nv_tegra_release(name, release, jetpack, version):
    parsed = parse_nv_tegra_release(sample(name))
    assert parsed == release
    assert (parsed.jetpack_major, parsed.version) == (jetpack, version)


def test_jetpack_of_r39_and_unknown():
    assert L4TRelease("R39", "2", 39).jetpack_major == 7
    assert L4TRelease("R99", "0.1", 99).jetpack_major is None


def test_render_matches_the_real_file():
    assert render_nv_tegra_release(L4TRelease("R38", "2.0", 38)) == sample("nv_tegra_release_R38.2.0_jp7.txt")


@pytest.mark.parametrize("text", ["", "R38.2.0\n", "# KERNEL_VARIANT: oot\n# R38 (release), REVISION: 2.0\n",
                                  "cat: /etc/nv_tegra_release: No such file or directory\n",
                                  "# R" + "9" * 5000 + " (release), REVISION: 2.0\n", "# R\u0663\u0668 (release), REVISION: 2.0\n"])
def test_nv_tegra_release_unreadable(text):
    with pytest.raises(ParseError):
        parse_nv_tegra_release(text)


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 999), st.lists(st.integers(0, 99), min_size=1, max_size=3))
def test_nv_tegra_release_round_trip(major, revision_parts):
    release = L4TRelease(f"R{major}", ".".join(map(str, revision_parts)), major)
    assert parse_nv_tegra_release(render_nv_tegra_release(release)) == release


@pytest.mark.parametrize("name, versions", [
    ("dpkg_query_local_debian12_bash_libc6.txt", {"bash": "5.2.15-2+b8", "libc6": "2.36-9+deb12u14"}),
    ("dpkg_query_local_admindir_installed_rc_hold.txt",
     {"nvidia-jetpack": "6.2.1+b38", "nvidia-l4t-core": "36.4.7-20250918154033"}),  # tensorrt is "rc"
    # the default format cannot tell "rc" from installed
    ("dpkg_query_local_default_format_foreign_arch_rc.txt",
     {"nvidia-jetpack": "6.2.1+b38", "tensorrt": "10.3.0.30-1+cuda12.5"}),
    ("dpkg_query_show_nvidia-l4t-core_jp511.txt", {"nvidia-l4t-core": "35.3.1-20230319081403"}),
])
def test_dpkg_versions(name, versions):
    assert parse_dpkg_versions(sample(name)) == versions


def test_dpkg_nothing_installed():
    assert parse_dpkg_versions("") == {}


def test_dpkg_versions_command():
    assert DPKG_VERSIONS.command(packages=["nvidia-jetpack", "tensorrt"]) == (
        "dpkg-query -W -f '${Package}\\t${db:Status-Abbrev}\\t${Version}\\n' nvidia-jetpack tensorrt")
    with pytest.raises(ValueError):
        DPKG_VERSIONS.command(packages=["--admindir=/tmp"])


@pytest.mark.parametrize("text", ["dpkg-query: no packages found matching tensorrt\n",
                                  "ii  nvidia-jetpack  6.2.1+b38  arm64  NVIDIA Jetpack Meta Package\n"])
def test_dpkg_unreadable(text):
    with pytest.raises(ParseError):
        parse_dpkg_versions(text)


packages = st.text("nvidia-jetpack+tensor.rt0123", min_size=1, max_size=20)
versions = st.text("0123456789.+~-bcuda", min_size=1, max_size=20)


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(packages, versions, max_size=5))
def test_dpkg_round_trip(installed):
    assert parse_dpkg_versions(render_dpkg_versions(installed)) == installed


@pytest.mark.parametrize("name, mode", [
    ("nvpmodel_q_agx_orin_maxn.txt", PowerMode("MAXN", 0)),
    ("nvpmodel_q_verbose_orin_nx_15w_PARTIAL.txt", PowerMode("MODE_15W_6CORE", 2)),
])
def test_nvpmodel(name, mode):
    assert parse_nvpmodel(sample(name)) == mode


def test_render_nvpmodel_matches_the_real_output():
    assert render_nvpmodel(PowerMode("MAXN", 0)) == sample("nvpmodel_q_agx_orin_maxn.txt")


@pytest.mark.parametrize("text", [
    "", "NV Power Mode: MAXN\n", "NV Power Mode: MAXN\nNV Fan Mode:quiet\n", "NV Power Mode: MAXN\n\u00b2\n",
    "nvpmodel: command not found\n", "NV Power Mode: MAXN\n" + "9" * 5000 + "\n",
])
def test_nvpmodel_unreadable(text):
    with pytest.raises(ParseError):
        parse_nvpmodel(text)


@settings(max_examples=150, deadline=None)
@given(st.from_regex(r"[A-Z0-9_]{1,20}", fullmatch=True), st.integers(0, 99))
def test_nvpmodel_round_trip(name, number):
    assert parse_nvpmodel(render_nvpmodel(PowerMode(name, number))) == PowerMode(name, number)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3000000), st.integers(0, 3000000), st.booleans()), min_size=1, max_size=16),
       st.sampled_from([("GPU",), ("gpu-gpc-0", "gpu-nvd-0")]), st.integers(0, 2 * 10**9))
def test_the_simulated_racks_jetson_clocks_reads_back(cpus, gpu_domains, hz):
    """Orin's layout ("GPU", Online= on each CPU line) and Thor's (gpu-gpc-0 and gpu-nvd-0, the
    online CPUs in its "Online CPUs:" line) read back, offline CPUs included."""
    cpus[0] = (*cpus[0][:2], True)   # cpu0 is never offline
    ranges = tuple(ClockRange(f"cpu{k}", low, high, online) for k, (low, high, online) in enumerate(cpus)) + \
        tuple(ClockRange(name, hz, hz) for name in gpu_domains)
    assert parse_jetson_clocks(render_jetson_clocks(ranges, "MAXN")) == ranges


def test_jetson_clocks():
    unlocked = parse_jetson_clocks(sample("jetson_clocks_show_orin_nano_super_jp6_unlocked.txt"))
    assert [c.name for c in unlocked] == ["cpu0", "cpu1", "cpu2", "cpu3", "cpu4", "cpu5", "GPU"]
    assert unlocked[-1] == ClockRange("GPU", 306000000, 918000000)
    assert parse_jetson_clocks(sample("jetson_clocks_show_nano_locked_ABRIDGED.txt")) == (
        ClockRange("cpu0", 1479000, 1479000), ClockRange("GPU", 921600000, 921600000))


def test_a_thors_gpu_domains():
    """A real Thor (JetPack 7): no "GPU" line, its GPU's gpu-gpc-0 and gpu-nvd-0 domains; CPU lines
    without Online=, every CPU online by its "Online CPUs: 0-13, Offline CPUs:" line."""
    thor = parse_jetson_clocks(sample("jetson_clocks_show_thor_jp7_maxn_locked.txt"))
    assert thor == tuple(ClockRange(f"cpu{k}", 2601000, 2601000) for k in range(14)) + (
        ClockRange("gpu-gpc-0", 1575000000, 1575000000), ClockRange("gpu-nvd-0", 1692000000, 1692000000))


def test_offline_cpus():
    """An AGX Orin in 30 W: cpu8-11 Online=0 (their range untouched by jetson_clocks). A Thor line has no
    Online=: its "Online CPUs:" line says (the real sample, edited to take cpu12 and cpu13 offline)."""
    orin = parse_jetson_clocks(sample("jetson_clocks_show_agx_orin_30w_locked_cpu8-11_offline.txt"))
    assert [c.name for c in orin if not c.online] == ["cpu8", "cpu9", "cpu10", "cpu11"]
    assert orin[8] == ClockRange("cpu8", 729600, 2201600, online=False)
    thor = sample("jetson_clocks_show_thor_jp7_maxn_locked.txt")
    offline = parse_jetson_clocks(thor.replace("Online CPUs: 0-13, Offline CPUs:", "Online CPUs: 0-11, Offline CPUs: 12-13"))
    assert [c.name for c in offline if not c.online] == ["cpu12", "cpu13"]
    assert all(c.online for c in parse_jetson_clocks(thor.replace("0-13, Offline", "0-3,4-13, Offline")))


@pytest.mark.parametrize("text", ["", "sudo: a password is required\n", "GPU MinFreq=1 MaxFreq=2\n",
                                  "gpu-gpc-0 MinFreq=1 MaxFreq=1\ngpu-nvd-0 MinFreq=1 MaxFreq=1\n",
                                  "Online CPUs: 0-x, Offline CPUs:\ncpu0:  MinFreq=1 MaxFreq=1\ngpu-gpc-0 MinFreq=1 MaxFreq=1\n",
                                  "Online CPUs: \ncpu0:  MinFreq=1 MaxFreq=1\ngpu-gpc-0 MinFreq=1 MaxFreq=1\n",
                                  "cpu0: MinFreq=1\nGPU MinFreq=1 MaxFreq=2\n", "cpu0: MinFreq=x MaxFreq=2\nGPU MinFreq=1 MaxFreq=2\n"])
def test_what_is_not_jetson_clocks_is_refused(text):
    with pytest.raises(ParseError):
        parse_jetson_clocks(text)
