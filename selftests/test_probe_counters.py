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
- sysfs_rx_tx_bytes_local_debian12_lo.txt: `cat .../statistics/rx_bytes .../tx_bytes` here.
"""

from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from rackproof.probes import ParseError
from rackproof.probes.counters import LaneErrors, lane_errors, parse_bytes, parse_ethtool_stats, render_ethtool_stats

SAMPLES = Path(__file__).parent / "samples"


def read(name: str) -> str:
    return (SAMPLES / name).read_text()


def abridged(name: str) -> str:
    """An excerpt of the counters: the "NIC statistics:" line its author's grep or cut left out."""
    return "NIC statistics:\n" + read(name)


def test_a_synopsys_mac_counts_crc_twice_and_the_kind_is_not_doubled():
    counters = parse_ethtool_stats(read("ethtool_S_stmmac_st_gmac_lkml_2023.txt"))
    assert counters["mmc_rx_crc_error"] == 0 and counters["mmc_rx_octetcount_gb"] == 30235 and len(counters) > 200
    assert lane_errors({"mmc_rx_crc_error": 7, "rx_crc_errors": 7}).crc == 7


def test_a_bad_mlx5_module_shows_crc_and_symbol_errors():
    errors = lane_errors(parse_ethtool_stats(abridged("ethtool_S_mlx5_cx6dx_grep_err_nonzero_vyos_ABRIDGED.txt")))
    assert errors == LaneErrors(crc=13147323, symbol=13115284, dropped=None)


def test_mlx5_phy_counters():
    counters = parse_ethtool_stats(abridged("ethtool_S_mlx5_100g_phy_counters_ANNOT_STRIPPED_ABRIDGED.txt"))
    errors = lane_errors(counters)
    assert errors.crc == 386 and errors.symbol == 386 and errors.dropped == 0


def test_a_driver_without_such_counters_reports_none_never_zero():
    counters = parse_ethtool_stats(read("ethtool_S_e1000e_node_exporter_fixture.txt"))
    assert counters["rx_packets"] == 1260062
    assert lane_errors({"rx_packets": 1}).crc is None


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
