"""rackproof.probes.counters against real `ethtool -S` outputs gathered from public sources:

- ethtool_S_stmmac_st_gmac_lkml_2023.txt: a Synopsys MAC (stmmac, driver st_gmac), the family of
  the Thor's MGBE: mmc_rx_crc_error beside rx_crc_errors (the same events twice), 241 counters
  (LKML "net: stmmac: fix out-of-bounds read via memcpy detected by KASAN", 2023-11-21);
- ethtool_S_mlx5_cx6dx_grep_err_nonzero_vyos_ABRIDGED.txt: a ConnectX-6 Dx with a bad module:
  rx_crc_errors_phy 13147323, rx_symbol_err_phy and four rx_err_lane_N_phy (a blog post on a 100G
  AIOM power budget on VyOS, 2023; the author's own `grep err | grep -v ' 0'`);
- ethtool_S_mlx5_100g_phy_counters_ANNOT_STRIPPED_ABRIDGED.txt: an mlx5 100G port's *_phy
  counters (rx_corrected_bits_phy, rx_pcs_symbol_err_phy; an annotated dump, comments removed);
- ethtool_S_e1000e_node_exporter_fixture.txt: e1000e (node_exporter's fixture), with a
  "# ethtool -S eth0" line before the header;
- ethtool_S_bnxt_en_6.6_ethq_test_file.txt: a Broadcom NIC on the in-kernel bnxt_en of Linux 6.6.43,
  per-ring counters ("[0]: rx_ucast_packets: 10198513532", 12 rings) then the port's, whole
  (github isc-projects/ethq tests/bnxt_en, commit 4604d752, Jesse Brandeburg, 2024-09-05; its
  `ethtool -i` in ethq issue #33: ethtool_i_bnxt_en_6.6_ethq_issue33.txt);
- ethtool_S_ice_e810_ethq_test_file.txt: an Intel E810 (ice): rx_crc_errors.nic, illegal_bytes.nic,
  link_xoff_rx.nic, whole (isc-projects/ethq tests/ice, commit 97f3ceb4, Jesse Brandeburg, 2023-01-26);
- ethtool_S_i40e_ethq_test_file_NO_HEADER.txt: an Intel X710 family NIC (i40e): port.rx_crc_errors,
  port.illegal_bytes, port.link_xoff_rx (isc-projects/ethq tests/i40e, commit 34733fda, Ray Bellis,
  2018-10-19); the file lacks the "NIC statistics:" line and the indent, as ethq keeps it;
- ethtool_S_mlx5_core_ethq_test_file_NO_HEADER.txt: a ConnectX (mlx5_core), every counter incl.
  rx_pause_ctrl_phy and rx_discards_phy (isc-projects/ethq tests/mlx5_core, commit f76f2283, 2018);
  no "NIC statistics:" line and no indent, as ethq keeps it;
- the Thor's MGBE: NVIDIA's nvethernet driver names its counters from the Synopsys MMC table
  (mmc_rx_crc_error, mmc_rx_fifo_overflow, mmc_rx_pause_frames: its ethtool.c, index id 1188137466),
  the names of the stmmac capture above; no capture of nvethernet itself was found;
- sysfs_rx_tx_bytes_local_debian12_lo.txt: `cat .../statistics/rx_bytes .../tx_bytes` here.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from rackproof.judging.failure import Failure, NotVerified
from rackproof.inventory.model import Expect
from rackproof.judging.linkhealth import fail_on_errors
from rackproof.measuring.linkhealth import LoadLedger, since_load
from rackproof.probes import ParseError
from rackproof.probes.counters import (
    DRIVER, DRIVERS, LaneErrors, lane_errors, parse_bytes, parse_ethtool_driver, parse_ethtool_stats)
from rackproof_sim.formats.counters import render_ethtool_stats

SAMPLES = Path(__file__).parent / "samples"


def read(name: str) -> str:
    return (SAMPLES / name).read_text()


def abridged(name: str) -> str:
    """An excerpt of the counters: the "NIC statistics:" line its author's grep or cut left out."""
    return "NIC statistics:\n" + read(name)


def test_a_synopsys_mac_counts_crc_twice_and_the_kind_is_not_doubled():
    counters = parse_ethtool_stats(read("ethtool_S_stmmac_st_gmac_lkml_2023.txt"))
    assert counters["mmc_rx_crc_error"] == 0 and counters["mmc_rx_octetcount_gb"] == 30235 and len(counters) > 200
    assert lane_errors("nvethernet", {"mmc_rx_crc_error": 7, "rx_crc_errors": 7}).crc == 7


def test_a_bad_mlx5_module_shows_crc_and_symbol_errors():
    counters = parse_ethtool_stats(abridged("ethtool_S_mlx5_cx6dx_grep_err_nonzero_vyos_ABRIDGED.txt"))
    assert lane_errors("mlx5_core", counters) == LaneErrors(crc=13147323, symbol=13115284, dropped=None, pause=None)


def test_mlx5_phy_counters():
    counters = parse_ethtool_stats(abridged("ethtool_S_mlx5_100g_phy_counters_ANNOT_STRIPPED_ABRIDGED.txt"))
    assert lane_errors("mlx5_core", counters) == LaneErrors(crc=386, symbol=386, dropped=0, pause=0)


def test_bnxt_en_per_ring_counters_are_read_and_summed_over_the_rings():
    counters = parse_ethtool_stats(read("ethtool_S_bnxt_en_6.6_ethq_test_file.txt"))
    assert counters["[0]: rx_ucast_packets"] == 10198513532 and counters["[11]: rx_discards"] == 9244693
    rings = sum(v for name, v in counters.items() if name.endswith("]: rx_discards"))
    assert rings == 123116579 < counters["rx_total_ring_discards"]
    assert lane_errors("bnxt_en", counters) == LaneErrors(crc=0, symbol=0, dropped=655430134, pause=0)
    assert lane_errors("bnxt_en", {"[0]: rx_discards": 800, "[1]: rx_discards": 900}).dropped == 1700


def test_a_driver_without_such_counters_reports_none_never_zero():
    counters = parse_ethtool_stats(read("ethtool_S_e1000e_node_exporter_fixture.txt"))
    assert counters["rx_packets"] == 1260062
    assert lane_errors("i40e", {"rx_packets": 1}) == LaneErrors(None, None, None, None)
    assert lane_errors("e1000e", counters) is None    # a driver the table does not know: not judged


@pytest.mark.parametrize("name, driver", [("ethtool_i_ice.txt", "ice"), ("ethtool_i_mlx5_core_cx4lx.txt", "mlx5_core"),
                                          ("ethtool_i_bnxt_en_6.6_ethq_issue33.txt", "bnxt_en")])
def test_the_driver_of_a_lane(name, driver):
    assert parse_ethtool_driver(read(name)) == driver


@pytest.mark.parametrize("text", ["", "version: 6.6\n", "driver: \n", "driver: a b\n", "NIC statistics:\n"])
def test_what_names_no_driver_is_refused(text):
    with pytest.raises(ParseError):
        parse_ethtool_driver(text)


# driver -> its real `ethtool -S` (each sample's counters before load; after it, one CRC counter raised)
REAL = {"mlx5_core": abridged("ethtool_S_mlx5_core_ethq_test_file_NO_HEADER.txt"),
        "bnxt_en": read("ethtool_S_bnxt_en_6.6_ethq_test_file.txt"),
        "ice": read("ethtool_S_ice_e810_ethq_test_file.txt"),
        "i40e": abridged("ethtool_S_i40e_ethq_test_file_NO_HEADER.txt"),
        "nvethernet": read("ethtool_S_stmmac_st_gmac_lkml_2023.txt")}
LANE = "ens21f0np0"   # the interface of the FEC sample the lane's node answers with
WHERE = f"thor-2 {LANE}"


class Node:
    """A node that answers the counters' probes with real outputs: its driver, `ethtool -S` text,
    and the GB its lane carried."""
    name = "thor-2"

    def __init__(self, driver: str, stats: str, gb: int):
        self.answers = {DRIVER.name: f"driver: {driver}\n", "ethtool -S": stats, "rx_bytes tx_bytes": f"{gb * 10**9}\n0\n",
                        "ethtool -I --show-fec": read("fec_ice_with_stats_I.txt")}

    def read_each(self, probe, lanes):
        return {lane: probe.parse(self.answers[probe.name], {"interface": lane}) for lane in lanes}


def under_load(tmp_path, driver: str, after: str):
    ledger = LoadLedger()
    ledger.note(Node(driver, REAL.get(driver, REAL["i40e"]), 1), [LANE])
    return since_load(ledger, Node(driver, after, 5), LANE, WHERE, Expect())


@pytest.mark.parametrize("driver", sorted(REAL))
def test_each_drivers_real_counters_pass_unchanged_and_fail_with_a_crc_counter_raised(tmp_path, driver):
    assert set(REAL) | {"st_gmac"} == set(DRIVERS)
    fail_on_errors(under_load(tmp_path / "same", driver, REAL[driver]), WHERE)
    name = DRIVERS[driver].crc[0]
    raised = REAL[driver].replace(f"{name}: {parse_ethtool_stats(REAL[driver])[name]}\n", f"{name}: 7\n", 1)
    change = under_load(tmp_path / "raised", driver, raised)
    with pytest.raises(Failure, match=f"^{WHERE}: error counters under load: expected no uncorrectable FEC block and "
                                      "no CRC/FCS error, found 7 CRC/FCS errors"):
        fail_on_errors(change, WHERE)


def test_a_driver_the_table_does_not_know_is_not_verified_never_passed(tmp_path):
    with pytest.raises(NotVerified, match=f"^{WHERE}: error counters under load not verified: counters of driver "
                                          "e1000e are not known"):
        under_load(tmp_path, "e1000e", read("ethtool_S_e1000e_node_exporter_fixture.txt"))


@pytest.mark.parametrize("text", ["", "rx_packets: 3\n", "NIC statistics:\n     rx_packets: -3\n",
                                  "NIC statistics:\n     rx_packets: 3 4\n", "NIC statistics:\n     garbage\n"])
def test_what_is_not_ethtool_s_is_refused(text):
    with pytest.raises(ParseError):
        parse_ethtool_stats(text)


def test_bytes_received_and_sent():
    received, sent = parse_bytes(read("sysfs_rx_tx_bytes_local_debian12_lo.txt"))
    assert received >= 0 and sent >= 0
    assert parse_bytes("10\n20\n") == (10, 20)
    for bad in ("", "10\n", "10\n-2\n", "1\n2\n3\n"):
        with pytest.raises(ParseError):
            parse_bytes(bad)


@given(st.dictionaries(st.from_regex(r"[a-z][a-z0-9_.]{0,30}", fullmatch=True), st.integers(0, 2**64 - 1),
                       max_size=40))
def test_the_simulated_racks_format_reads_back(counters):
    assert parse_ethtool_stats(render_ethtool_stats(counters)) == counters


def test_rackproof_probes_names_the_counters_judged_for_every_driver_known():
    proc = subprocess.run([sys.executable, "-m", "rackproof.cli", "probes", "--json"], capture_output=True, text=True,
                          timeout=60)
    does = {p["name"]: p["does"] for p in json.loads(proc.stdout)}["ethtool -S"]
    for driver, names in DRIVERS.items():
        assert f"{driver} {' or '.join(names.crc)}" in does, (driver, does)
