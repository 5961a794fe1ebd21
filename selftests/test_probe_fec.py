"""rackproof.probes.fec against real `ethtool [-I] [--json] --show-fec IFACE` outputs."""

import json

import pytest
from hypothesis import given, settings, strategies as st

from rackproof.probes import ParseError
from rackproof.probes.fec import FecInfo, normalize_fec_mode, parse_fec
from rackproof_sim.formats.fec import render_fec
from selftests.robustness import sample


@pytest.mark.parametrize("name, expected", [
    # direct-attach cable between two Sparks: no FEC is the working state
    ("fec_dgx_spark_cx7_auto_none.txt", FecInfo("enp1s0f0np0", ("Auto",), ("None",))),
    # through a QSFP switch
    ("fec_dgx_spark_cx7_auto_rs.txt", FecInfo("enp1s0f1np1", ("Auto",), ("RS",))),
    ("fec_dgx_spark_cx7_forced_rs.txt", FecInfo("enp1s0f0np0", ("RS",), ("RS",))),
    ("fec_ice_with_stats_I.txt", FecInfo("ens21f0np0", ("Auto", "RS", "BaseR"), ("RS",), 0, 0)),
    # older label, doc placeholder as the interface
    ("fec_nfp_doc_auto_off_baser_rs.txt", FecInfo("<netdev>", ("Auto", "Off", "BaseR", "RS"), ("Auto",))),
    # per-lane counters under the totals
    ("fec_stats_per_lane_netdev_2021.txt", FecInfo("eth0", ("None",), ("None",), 256, 145)),
    # histogram lines with "[ per_lane: ... ]" suffixes
    ("fec_hist_ethtool_6.18.txt", FecInfo("eni8np1", ("None",), ("None",), 123, 4)),
])
def test_real_outputs(name, expected):
    assert parse_fec(sample(name), expected.interface) == expected


def test_json_output_reads_like_the_text_output():
    assert parse_fec(sample("fec_hist_ethtool_6.18_j.json"), "eni8np1") == \
        parse_fec(sample("fec_hist_ethtool_6.18.txt"), "eni8np1")


@pytest.mark.parametrize("name, interface", [("fec_dgx_spark_cx7_auto_none.txt", "enp1s0f0np0"),
                                             ("fec_ice_with_stats_I.txt", "ens21f0np0")])
def test_render_reproduces_current_ethtool_output(name, interface):
    assert render_fec(parse_fec(sample(name), interface)) == sample(name)


SPARK_PORT_0 = "fec_dgx_spark_cx7_auto_none.txt"    # enp1s0f0np0: Auto / None
SPARK_PORT_1 = "fec_dgx_spark_cx7_auto_rs.txt"      # enp1s0f1np1: Auto / RS


def test_only_the_block_of_the_interface_asked_for_is_read():
    both = sample(SPARK_PORT_1) + sample(SPARK_PORT_0)
    assert parse_fec(both, "enp1s0f0np0").active == ("None",)
    assert parse_fec(both, "enp1s0f1np1").active == ("RS",)
    assert parse_fec(sample(SPARK_PORT_0) + sample(SPARK_PORT_1), "enp1s0f1np1").active == ("RS",)


@pytest.mark.parametrize("text", [sample(SPARK_PORT_1), sample(SPARK_PORT_1).split("\n", 1)[1]])
def test_another_interfaces_block_or_none_is_no_answer(text):
    # without its own "FEC parameters for" line, the RS of another port must not pass for this one's
    with pytest.raises(ParseError, match="'FEC parameters for enp1s0f0np0:'") as raised:
        parse_fec(text, "enp1s0f0np0")
    assert raised.value.text == text


def test_json_reads_the_entry_of_the_interface_asked_for():
    entry = json.loads(sample("fec_hist_ethtool_6.18_j.json"))[0]
    other = dict(entry, ifname="eni9np1", active=["RS"])
    assert parse_fec(json.dumps([other, entry]), "eni8np1").active == ("None",)
    assert parse_fec(json.dumps([other, entry]), "eni9np1").active == ("RS",)
    with pytest.raises(ParseError, match="eni7np1"):
        parse_fec(json.dumps([other, entry]), "eni7np1")
    with pytest.raises(ParseError, match="eni8np1"):
        parse_fec(json.dumps([{key: value for key, value in entry.items() if key != "ifname"}]), "eni8np1")


def test_mode_names_are_normalised_and_off_stays_distinct_from_none():
    info = parse_fec("FEC parameters for eth0:\nConfigured FEC encodings: auto off none rs baser llrs bit7\n"
                     "Active FEC encoding: rs\n", "eth0")
    assert info.configured == ("Auto", "Off", "None", "RS", "BaseR", "LLRS", "BIT7")
    assert info.active == ("RS",)
    assert normalize_fec_mode("RS544") == "RS544"      # unknown names stay as printed


def test_not_reported_is_one_mode():
    info = parse_fec("FEC parameters for eth0:\nConfigured FEC encodings: Not reported\n"
                     "Active FEC encoding: Not reported\n", "eth0")
    assert info.configured == info.active == ("Not reported",)


@pytest.mark.parametrize("text", [
    "",
    "netlink error: Operation not supported\n",
    "FEC parameters for eth0:\nSupported/Configured FEC encodings: Auto\n",       # no active line
    "FEC parameters for eth0:\nConfigured FEC encodings:\nActive FEC encoding: RS\n",
    "FEC parameters for eth0:\nConfigured FEC encodings: RS\nActive FEC encoding: RS\nStatistics:\n"
    "  corrected_blocks: many\n",
    '[ {"ifname": "eth0", "config": [], "active": ["RS"]} ]',
    '[ {"ifname": "eth0", "config": ["RS"], "active": [1]} ]',
    '[ {"ifname": "eth0", "config": ["RS"], "active": ["RS"], "statistics": {"corrected_blocks": {"total": "x"}}} ]',
    "[ not json",
    "[]",
])
def test_unreadable_outputs_raise_parse_error(text):
    with pytest.raises(ParseError):
        parse_fec(text, "eth0")


modes = st.lists(st.sampled_from(["Auto", "Off", "None", "RS", "BaseR", "LLRS"])
                 | st.integers(0, 99).map(lambda bit: f"BIT{bit}"), min_size=1, max_size=4).map(tuple)
fec_infos = st.builds(
    FecInfo,
    interface=st.text("abcdefghijklmnopqrstuvwxyz0123456789_", min_size=1, max_size=15),
    configured=modes,
    active=modes,
    corrected_blocks=st.none() | st.integers(0, 2**64 - 1),
    uncorrectable_blocks=st.none() | st.integers(0, 2**64 - 1),
)


@settings(max_examples=150, deadline=None)
@given(fec_infos)
def test_render_round_trip(info):
    assert parse_fec(render_fec(info), info.interface) == info


def test_modes_before_the_first_header_are_refused_not_read_as_the_interfaces():
    before = "Supported/Configured FEC encodings: Off\nActive FEC encoding: Off\n"
    with pytest.raises(ParseError, match="comes before the 'FEC parameters for enp1s0f1np1:' line"):
        parse_fec(before + sample(SPARK_PORT_1), "enp1s0f1np1")
    assert parse_fec("netlink error: Operation not permitted\n" + sample(SPARK_PORT_1), "enp1s0f1np1") == \
        parse_fec(sample(SPARK_PORT_1), "enp1s0f1np1")
