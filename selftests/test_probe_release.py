"""rackproof.probes.release on real outputs (selftests/samples, SOURCES.md): `uname -r` of this
machine (verbatim) and the releases a Jetson AGX Thor and a DGX Spark report (kept from a jtop
report and a login banner); /sys/class/dmi/id/bios_version of a DGX Spark (from a sosreport's DMI
summary) and cat's words on a machine without DMI tables (verbatim). The simulated rack's uname
prints through render_kernel, which reads back. And rackproof.judging.releases, the check's comparison,
and the check itself (test_same_kernel_and_firmware, given its plan's answers), both ways."""

from pathlib import Path

import pytest

from rackproof.judging.failure import Failure
from rackproof.probes import ParseError
from rackproof.probes.release import Firmware, parse_bios_version, parse_kernel
from rackproof.judging.releases import same_kernel_and_firmware
from rackproof_sim.formats.release import render_kernel
from rackproof_sim.profiles import SPARK_RELEASE, THOR_RELEASE
from tests_serving import test_configuration

SAMPLES = Path(__file__).parent / "samples"


def read(name: str) -> str:
    return (SAMPLES / name).read_text()


@pytest.mark.parametrize("sample, release", [
    ("uname_r_local_debian12.txt", "6.18.44-fc-v1300"),
    ("uname_r_jetson_agx_thor_jp7_DERIVED_FROM_JTOP.txt", "6.8.12-tegra"),
    ("uname_r_dgx_spark_dgx_os_7.2.3_DERIVED_FROM_BANNER.txt", "6.11.0-1016-nvidia")])
def test_the_kernel_release_is_read(sample, release):
    assert parse_kernel(read(sample)) == release


@pytest.mark.parametrize("text", ["", "6.8.12-tegra\nextra\n", "Linux thor-1 6.8.12-tegra #1 SMP aarch64\n"])
def test_anything_but_one_release_is_refused(text):
    with pytest.raises(ParseError):
        parse_kernel(text)


def test_the_firmware_version_or_why_there_is_none():
    assert parse_bios_version(read("bios_version_dgx_spark_DERIVED_FROM_SOSREPORT.txt")) == Firmware("5.36_0ACUM018")
    assert parse_bios_version(read("bios_version_local_debian12_no_dmi.txt")) == Firmware(
        None, "/sys/class/dmi/id/bios_version: no such file or directory (no DMI tables the login can read)")
    with pytest.raises(ParseError):
        parse_bios_version("American Megatrends Inc. 5.36\n")


@pytest.mark.parametrize("release", [THOR_RELEASE["kernel"], SPARK_RELEASE["kernel"]])
def test_the_simulated_uname_prints_what_the_parser_reads(release):
    assert parse_kernel(render_kernel(release)) == release


SPARK_BIOS = Firmware("5.36_0ACUM018")
NO_DMI = Firmware(None, "/sys/class/dmi/id/bios_version: no such file or directory (no DMI tables the login can read)")


def test_one_kernel_and_one_firmware_pass_and_no_dmi_anywhere_is_not_compared():
    assert same_kernel_and_firmware({"spark-1": "6.11.0-1016-nvidia", "spark-2": "6.11.0-1016-nvidia"},
                                    {"spark-1": SPARK_BIOS, "spark-2": SPARK_BIOS}) is None
    assert same_kernel_and_firmware({"thor-1": "6.8.12-tegra", "thor-2": "6.8.12-tegra"},
                                    {"thor-1": NO_DMI, "thor-2": NO_DMI}) is None


def test_the_odd_kernel_is_named_with_every_nodes():
    problem = same_kernel_and_firmware({"thor-1": "6.8.12-tegra", "thor-2": "6.8.12-tegra", "thor-3": "6.8.1-tegra"},
                                       {n: NO_DMI for n in ("thor-1", "thor-2", "thor-3")})
    assert isinstance(problem, Failure)
    assert str(problem).startswith("kernel release (uname -r) differs on thor-3: expected 6.8.12-tegra (on most nodes), "
                                   "found 6.8.1-tegra on thor-3. Usual cause: the odd node was updated alone")


def test_another_firmware_or_one_not_readable_beside_readable_ones_is_odd():
    kernels = {n: "6.11.0-1016-nvidia" for n in ("spark-1", "spark-2", "spark-3")}
    problem = same_kernel_and_firmware(kernels, {"spark-1": SPARK_BIOS, "spark-2": Firmware("5.36_0ACUM023"),
                                                 "spark-3": NO_DMI})
    assert str(problem).startswith("system firmware (/sys/class/dmi/id/bios_version) differs on spark-2, spark-3: "
                                   "expected 5.36_0ACUM018 (on most nodes), found 5.36_0ACUM023 on spark-2, "
                                   "not readable on spark-3.")


def planned_as(kernels: dict, firmware: dict):
    return lambda entry: {"nodes.kernel": kernels, "nodes.firmware": firmware}[entry.key]


def test_same_kernel_and_firmware_the_check_passes_on_one_kernel_and_fails_naming_the_odd_node():
    nodes = ("spark-1", "spark-2", "spark-3")
    kernels = {n: "6.11.0-1016-nvidia" for n in nodes}
    test_configuration.test_same_kernel_and_firmware(None, planned_as(kernels, {n: SPARK_BIOS for n in nodes}))
    with pytest.raises(Failure, match=r"^system firmware \(/sys/class/dmi/id/bios_version\) differs on spark-3"):
        test_configuration.test_same_kernel_and_firmware(None, planned_as(
            kernels, {**{n: SPARK_BIOS for n in nodes}, "spark-3": Firmware("5.36_0ACUM023")}))
