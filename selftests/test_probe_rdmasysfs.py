"""rackproof.probes.rdmasysfs: an RDMA device's PCIe link and GID table, as `grep -H` prints its sysfs
files. The values are real (samples/SOURCES.md): GID tables of a DGX Spark and a ConnectX-6 host
(show_gids reads the same files), the kernel's PCIe speed strings; the 'PATH:VALUE' lines are grep's."""

import pytest

from rackproof.probes import ParseError
from rackproof.probes.rdmasysfs import RDMA_SYSFS, ZERO_GID, PcieLink, parse_rdma_sysfs
from selftests.robustness import sample

SPEEDS = sample("rdma_sysfs_pci_speed_strings_from_source.txt").splitlines()


def _grep(device: str, speed="32.0 GT/s PCIe", width=4, max_speed="32.0 GT/s PCIe", max_width=4, table="") -> str:
    """What the probe's grep prints for DEV: its PCIe files, then each GID row of a show_gids sample as
    the three files it reads (gids/N, gid_attrs/types/N: v1 "IB/RoCE v1", v2 "RoCE v2", gid_attrs/ndevs/N)."""
    base = f"/sys/class/infiniband/{device}"
    lines = [f"{base}/device/current_link_speed:{speed}", f"{base}/device/current_link_width:{width}",
             f"{base}/device/max_link_speed:{max_speed}", f"{base}/device/max_link_width:{max_width}"]
    rows = [line.split() for line in table.splitlines() if len(line.split()) > 4 and line.split()[2].isdigit()]
    for row in rows:
        index, gid, version, netdev = row[2], row[3], row[-2], row[-1]
        lines.append(f"{base}/ports/1/gids/{index}:{gid}")
        lines.append(f"{base}/ports/1/gid_attrs/types/{index}:{'RoCE v2' if version == 'v2' else 'IB/RoCE v1'}")
        lines.append(f"{base}/ports/1/gid_attrs/ndevs/{index}:{netdev}")
    return "\n".join(lines) + "\n"


def test_a_dgx_spark_function_at_gen5_x4_with_its_ipv4_roce_v2_gid_at_index_3():
    found = parse_rdma_sysfs(_grep("rocep1s0f0", table=sample("show_gids_dgx_spark_excerpt.txt")), "rocep1s0f0")
    assert found.pcie == PcieLink("32.0 GT/s PCIe", 4, "32.0 GT/s PCIe", 4) and found.pcie.full
    assert [(g.index, g.type, g.netdev) for g in found.gids] == [(1, "RoCE v2", "enp1s0f0np0"), (3, "RoCE v2", "enp1s0f0np0")]
    assert found.roce_v2_index("enp1s0f0np0") == 3 and found.gids[-1].ipv4 == "192.168.100.10"
    assert found.roce_v2_index("enp1s0f1np1") is None


def test_two_ipv6_addresses_first_put_the_ipv4_roce_v2_gid_at_index_5():
    found = parse_rdma_sysfs(_grep("mlx5_0", table=sample("show_gids_cx6_ipv4_at_index_5_ibm_nsdperf.txt")), "mlx5_0")
    assert found.roce_v2_index("ens1f0") == 5     # its v1 twin at 4 is not RoCE v2, 1 and 3 are IPv6
    assert [g.ipv4 for g in found.gids].count("172.19.0.60") == 2


@pytest.mark.parametrize("speed", SPEEDS)
def test_every_speed_the_kernel_writes_is_read(speed):
    width = 0 if speed == "Unknown" else 4
    found = parse_rdma_sysfs(_grep("rocep1s0f1", speed=speed, width=width), "rocep1s0f1")
    assert (found.pcie.speed, found.pcie.full) == (speed, speed == "32.0 GT/s PCIe")


def test_the_second_controller_at_x2_is_not_full_and_says_both():
    link = parse_rdma_sysfs(_grep("roceP2p1s0f1", width=2), "roceP2p1s0f1").pcie
    assert not link.full and str(link) == "32.0 GT/s PCIe x2 (max 32.0 GT/s PCIe x4)"


def test_empty_slots_and_unreadable_types_are_not_in_the_table():
    text = _grep("rocep1s0f1") + "/sys/class/infiniband/rocep1s0f1/ports/1/gids/7:" + ":".join(["0000"] * 8) + "\n"
    assert parse_rdma_sysfs(text, "rocep1s0f1").gids == ()


@pytest.mark.parametrize("text, says", [
    ("", "no current_link_speed"),
    (_grep("rocep1s0f0"), "not a line of /sys/class/infiniband/rocep1s0f1/"),     # another device's files
    (_grep("rocep1s0f1").replace("32.0 GT/s PCIe", "fast", 1), "current_link_speed is not"),
    (_grep("rocep1s0f1").replace(":4\n", ":x4\n", 1), "current_link_width is not"),
    (_grep("rocep1s0f1") + "/sys/class/infiniband/rocep1s0f1/ports/1/gids/3:192.168.100.10\n", "gids/3 is not"),
    (_grep("rocep1s0f1") + "/sys/class/infiniband/rocep1s0f1/ports/1/rate:200 Gb/sec (4X HDR)\n", "does not ask for"),
    ("grep: /sys/class/infiniband/rocep1s0f1/device/current_link_speed: No such file or directory\n", "not a line of"),
])
def test_anything_else_is_its_parse_error(text, says):
    with pytest.raises(ParseError, match=says):
        parse_rdma_sysfs(text, "rocep1s0f1")


def test_the_probe_reads_only_the_device_asked_for_its_name_quoted():
    assert "/sys/class/infiniband/rocep1s0f1/ports/1/gid_attrs/types/*" in str(RDMA_SYSFS.command(device="rocep1s0f1"))
    assert "'x; reboot'" in str(RDMA_SYSFS.command(device="x; reboot"))


def test_the_simulated_files_read_back_as_the_real_dgx_spark_table():
    """rackproof_sim.formats.rdmasysfs fills the table as the kernel does: from the MAC of the real
    sample's interface and its address, the same GIDs at the same indexes as its show_gids rows."""
    from rackproof_sim.formats.rdmasysfs import files
    link = PcieLink("32.0 GT/s PCIe", 4, "32.0 GT/s PCIe", 4)
    made = files("rocep1s0f0", "enp1s0f0np0", link, "4c:bb:47:e8:9f:39", ["192.168.100.10"])
    text = "".join(f"{path}:{value}\n" for path, value in made.items() if value not in (None, ZERO_GID))
    found = parse_rdma_sysfs(text, "rocep1s0f0")
    real = parse_rdma_sysfs(_grep("rocep1s0f0", table=sample("show_gids_dgx_spark_excerpt.txt")), "rocep1s0f0")
    assert {g.index: g.gid for g in found.gids if g.type == "RoCE v2"} == {g.index: g.gid for g in real.gids}
    assert found.pcie == real.pcie and found.roce_v2_index("enp1s0f0np0") == 3
