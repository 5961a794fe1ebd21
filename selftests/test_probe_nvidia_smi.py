"""rackproof.probes.nvidia_smi against real nvidia-smi output (all public; see the samples'
names: GB10 / DGX Spark, Jetson Thor on drivers 580.00 and 595.78, an L40 host with a header;
nvidia_smi_no_devices_found_open_gpu_kernel_modules_862.txt: what nvidia-smi printed with its driver
loaded and the GPU not initialised, github NVIDIA/open-gpu-kernel-modules issue #862, comment of
2025-07-26).
The Thor CSV row is a test fixture whose field list was not shown; the fields below are the
likely ones (index, name, utilization, memory used/total, temperature, power)."""

from pathlib import Path

import pytest
from hypothesis import assume, given, settings, strategies as st

from rackproof.probes import ParseError
from rackproof.probes.nvidia_smi import (
    GPUS, Gpu, NvidiaSmiBanner, parse_gpus, parse_nvidia_smi_banner, parse_nvidia_smi_query)
from rackproof_sim.formats.nvidia_smi import render_nvidia_smi_banner, render_nvidia_smi_query

SAMPLES = Path(__file__).parent / "samples"


def sample(name):
    return (SAMPLES / name).read_text()


@pytest.mark.parametrize("name, fields, rows", [
    ("nvidia_smi_query_name_compute_cap_gb10.csv", ["name", "compute_cap"],
     ({"name": "NVIDIA GB10", "compute_cap": "12.1"},)),
    ("nvidia_smi_query_name_memtotal_driver_gb10_noheader.csv", ["name", "memory.total", "driver_version"],
     ({"name": "NVIDIA GB10", "memory.total": None, "driver_version": "580.126.09"},)),
    ("nvidia_smi_query_name_driver_memtotal_csv_header_L40.csv", ["name", "driver_version", "memory.total"],
     ({"name": "NVIDIA L40", "driver_version": "580.126.09", "memory.total": "46068 MiB"},) * 2),
    ("nvidia_smi_query_thor_jp72_fixture_row.csv",
     ["index", "name", "utilization.gpu", "memory.used", "memory.total", "temperature.gpu", "power.draw"],
     ({"index": "0", "name": "NVIDIA Thor", "utilization.gpu": "85", "memory.used": None, "memory.total": None,
       "temperature.gpu": "62", "power.draw": "37.53"},)),
])
def test_query(name, fields, rows):
    assert parse_nvidia_smi_query(sample(name), fields) == rows


@pytest.mark.parametrize("text", [
    "NVIDIA GB10, 12.1, extra\n",
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n",
    'Field "compute_capability" is not a valid field to query.\n',
])
def test_query_unreadable(text):
    with pytest.raises(ParseError):
        parse_nvidia_smi_query(text, ["name", "compute_cap"])


def test_no_gpu_is_no_rows():
    assert parse_nvidia_smi_query("", ["name"]) == ()


def test_the_gpus_the_driver_sees():
    assert GPUS.command() == "nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader"
    assert parse_gpus(sample("nvidia_smi_query_name_memtotal_driver_gb10_noheader.csv")) == \
        (Gpu("NVIDIA GB10", "580.126.09"),)
    assert parse_gpus(sample("nvidia_smi_no_devices_found_open_gpu_kernel_modules_862.txt")) == ()


@pytest.mark.parametrize("text", ["", "NVIDIA GB10, [N/A]\n", "[N/A], [N/A], 580.126.09\n", ",,\n", ", 128 MiB, 580.126.09\n",
                                  "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n"])
def test_what_names_no_gpu_and_no_absence_is_refused(text):
    with pytest.raises(ParseError):
        parse_gpus(text)


@pytest.mark.parametrize("name, banner", [
    ("nvidia_smi_gb10_dgx_spark_580.159.03.txt", NvidiaSmiBanner("580.159.03", "13.0", ("NVIDIA GB10",))),
    ("nvidia_smi_thor_jp7_580.00_PARTIAL.txt", NvidiaSmiBanner("580.00", "13.0", ("NVIDIA Thor",))),
    ("nvidia_smi_thor_595.78_idle_PARTIAL.txt", NvidiaSmiBanner("595.78", "13.2", ("NVIDIA Thor",))),
])
def test_banner(name, banner):
    assert parse_nvidia_smi_banner(sample(name)) == banner


def test_render_banner_matches_the_real_table():
    rendered = render_nvidia_smi_banner(NvidiaSmiBanner("595.78", "13.2", ("NVIDIA Thor",)))
    # the capture lost its final border line
    assert rendered.startswith(sample("nvidia_smi_thor_595.78_idle_PARTIAL.txt"))


def test_banner_unreadable():
    with pytest.raises(ParseError):
        parse_nvidia_smi_banner("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n")


cells = st.text("ABCabc019 ._/-", min_size=1, max_size=16).map(str.strip).filter(bool)
field_names = st.lists(st.text("abcmory_.", min_size=1, max_size=16), min_size=1, max_size=5, unique=True)


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_query_round_trip(data):
    fields = data.draw(field_names)
    rows = tuple(data.draw(st.lists(st.fixed_dictionaries({f: st.none() | cells for f in fields}), max_size=4)))
    header = data.draw(st.booleans())
    # a first row that spells the field names reads as a header line; no GPU prints that
    assume(not rows or [rows[0][f] for f in fields] != fields)
    assert parse_nvidia_smi_query(render_nvidia_smi_query(rows, fields, header), fields) == rows


@settings(max_examples=100, deadline=None)
@given(st.from_regex(r"[0-9]{3}\.[0-9]{2,3}(\.[0-9]{2})?", fullmatch=True),
       st.none() | st.from_regex(r"1[0-9]\.[0-9]", fullmatch=True),
       st.lists(st.from_regex(r"NVIDIA [A-Za-z0-9][A-Za-z0-9 -]{0,21}[A-Za-z0-9]", fullmatch=True), max_size=4))
def test_banner_round_trip(driver, cuda, names):
    banner = NvidiaSmiBanner(driver, cuda, tuple(names))
    assert parse_nvidia_smi_banner(render_nvidia_smi_banner(banner)) == banner
