"""rackproof.probes.ethtool against real `ethtool IFACE` outputs (samples/SOURCES.md names them)."""

import re

import pytest
from hypothesis import given, settings, strategies as st

from rackproof.probes import ParseError
from rackproof.probes.ethtool import DriverInfo, LinkInfo, parse_driver_info, parse_ethtool
from rackproof_sim.formats.ethtool import render_ethtool
from selftests.robustness import sample

THOR = "ethtool_multiple_ifnames_only_first_printed_thor.txt"
OTHER_ETHTOOL_OUTPUTS = [       # -S, -i, -m: not link settings
    "ethtool_S_e1000e_node_exporter_fixture.txt",
    "ethtool_i_ice.txt",
    "ethtool_i_mlx5_core_cx4lx.txt",
    "ethtool_m_dgx_spark_dac_ABRIDGED.txt",
    "ethtool_m_hexdump_unsupported_decode_ice.txt",
    "ethtool_m_qsfp28_dac_ice_TRUNCATED.txt",
]


def test_ice_25g_dac_link_up():
    assert parse_ethtool(sample("ethtool_ice_25g_dac_link_up.txt"), "eth0") == LinkInfo(
        interface="eth0", speed_mbps=25000, duplex="Full", link_detected=True,
        port="Direct Attach Copper", auto_negotiation=False, lanes=None,
        supported_link_modes=("1000baseT/Full", "10000baseT/Full", "25000baseCR/Full", "25000baseSR/Full",
                              "1000baseX/Full", "10000baseSR/Full", "10000baseLR/Full"),
        advertised_link_modes=("10000baseT/Full", "25000baseCR/Full"))


def test_link_down_speed_unknown_with_mangled_indentation():
    info = parse_ethtool(sample("ethtool_100g_link_down_speed_unknown_mlxsw.txt"), "swp1")
    assert (info.interface, info.speed_mbps, info.duplex, info.link_detected) == ("swp1", None, None, False)
    # continuation lines indented with spaces or tabs all belong to the key above
    assert len(info.supported_link_modes) == 10
    assert info.advertised_link_modes[-1] == "100000baseCR4/Full"


def test_lanes_line():
    info = parse_ethtool("Settings for swp3:\n" + sample("ethtool_100g_lanes_line_tail_mlxsw.txt"), "swp3")
    assert (info.interface, info.speed_mbps, info.lanes, info.link_detected) == ("swp3", 100000, 4, True)


def test_bond_reports_aggregate_speed_and_no_link_modes():
    info = parse_ethtool(sample("ethtool_bond0_2x100g_lacp_200000.txt"), "bond0")
    assert (info.interface, info.speed_mbps, info.port) == ("bond0", 200000, "Other")
    assert info.auto_negotiation is False
    assert info.supported_link_modes == info.advertised_link_modes == ()


@pytest.mark.parametrize("name", [
    "ethtool_grep_speed_dgx_spark_100g_before_fix.txt", "ethtool_grep_speed_dgx_spark_200g.txt",
    "ethtool_100g_lanes_line_tail_mlxsw.txt", "ethtool_thor_mgbe0_0_nonroot_ABRIDGED.txt",
])
def test_without_the_header_nothing_says_which_interface_it_is(name):
    # `ethtool X | grep Speed`, a cut copy: the speed of some interface, not necessarily this one
    with pytest.raises(ParseError, match="'Settings for mgbe0_0:'") as raised:
        parse_ethtool(sample(name), "mgbe0_0")
    assert raised.value.text == sample(name)


OTHER_BLOCK = "Settings for mgbe1_0:\n\tSpeed: 10000Mb/s\n\tLink detected: no\n"


def test_only_the_block_of_the_interface_asked_for_is_read():
    thor = sample(THOR)
    info = parse_ethtool(thor, "mgbe0_0")
    assert (info.interface, info.speed_mbps, info.link_detected) == ("mgbe0_0", 25000, True)
    # `ethtool A B` prints A only; concatenated outputs: each block is its own interface's
    assert parse_ethtool(thor + OTHER_BLOCK, "mgbe0_0") == info
    assert parse_ethtool(OTHER_BLOCK + thor, "mgbe0_0") == info
    other = parse_ethtool(OTHER_BLOCK + thor, "mgbe1_0")
    assert (other.interface, other.speed_mbps, other.link_detected) == ("mgbe1_0", 10000, False)


@pytest.mark.parametrize("asked", ["mgbe1_0", "mgbe0", "mgbe0_00", "mgbe0.0", ".*"])
def test_another_interfaces_block_is_no_answer(asked):
    with pytest.raises(ParseError, match=re.escape(f"'Settings for {asked}:'")):
        parse_ethtool(sample(THOR), asked)


def test_non_root_noise_before_the_header():
    info = parse_ethtool(sample("ethtool_nonroot_permission_errors_insights.txt"), "eth1")
    assert (info.interface, info.speed_mbps, info.duplex, info.link_detected) == ("eth1", 1000, "Full", True)
    assert info.supported_link_modes[:2] == ("10baseT/Half", "10baseT/Full")   # two modes per line


def test_thor_abridged_non_root():
    info = parse_ethtool("Settings for mgbe0_0:\n" + sample("ethtool_thor_mgbe0_0_nonroot_ABRIDGED.txt"), "mgbe0_0")
    assert info == LinkInfo("mgbe0_0", speed_mbps=25000, duplex="Full", link_detected=True, auto_negotiation=True)


@pytest.mark.parametrize("name", OTHER_ETHTOOL_OUTPUTS)
def test_other_ethtool_outputs_are_not_link_settings(name):
    with pytest.raises(ParseError):
        parse_ethtool(sample(name), "eth0")


def test_link_state_only_from_link_detected():
    # some drivers keep printing the speed of a link that is down
    assert parse_ethtool("Settings for x:\n\tSpeed: 25000Mb/s\n\tLink detected: no\n", "x").link_detected is False
    assert parse_ethtool("Settings for x:\n\tSpeed: 25000Mb/s\n", "x").link_detected is None
    cannot = "Cannot get link status: Operation not permitted\nSettings for x:\n\tSpeed: 25000Mb/s\n"
    assert parse_ethtool(cannot, "x").link_detected is None


def test_spaces_instead_of_tabs_and_new_lines_read_the_same():
    text = sample("ethtool_ice_25g_dac_link_up.txt")
    spaced = text.replace("\t", "        ")
    with_new_line = text.replace("\tDuplex: Full\n", "\tDuplex: Full\n\tmaster-slave cfg: preferred slave\n")
    assert parse_ethtool(spaced, "eth0") == parse_ethtool(with_new_line, "eth0") == parse_ethtool(text, "eth0")


@pytest.mark.parametrize("text", [
    "", "Settings for x:\n\tSpeed: fast\n", "Settings for x:\n\tLink detected: maybe\n",
    "Settings for x:\n\tLanes: four\n", "Settings for x:\n\tAuto-negotiation: sometimes\n",
])
def test_unreadable_values_raise_parse_error(text):
    with pytest.raises(ParseError):
        parse_ethtool(text, "x")


def test_render_is_the_real_format():
    up = render_ethtool(LinkInfo("mgbe0_0", 25000, "Full", True))
    assert up.splitlines()[0] == "Settings for mgbe0_0:"
    assert {"\tSpeed: 25000Mb/s", "\tDuplex: Full", "\tLink detected: yes"} <= set(up.splitlines())
    down = render_ethtool(LinkInfo("mgbe0_0", None, None, False))
    assert {"\tSpeed: Unknown!", "\tDuplex: Unknown! (255)", "\tLink detected: no"} <= set(down.splitlines())


def test_render_lines_are_the_samples_lines_in_order():
    text = sample("ethtool_ice_25g_dac_link_up.txt")
    rendered = render_ethtool(parse_ethtool(text, "eth0")).splitlines()
    real = iter(text.splitlines())
    assert all(line in real for line in rendered)   # a subsequence: `in` consumes the iterator


names = st.text("abcdefghijklmnopqrstuvwxyz0123456789_", min_size=1, max_size=15)
link_mode = st.builds("{}base{}/{}".format, st.integers(10, 400_000),
                      st.sampled_from(["T", "KX", "CR", "SR4", "LR4"]), st.sampled_from(["Full", "Half"]))
link_modes = st.lists(link_mode, max_size=5).map(tuple)
link_infos = st.builds(
    LinkInfo,
    interface=names,
    speed_mbps=st.none() | st.sampled_from([10, 1000, 10000, 25000, 100000, 200000]) | st.integers(0, 10**7),
    duplex=st.none() | st.sampled_from(["Full", "Half"]),
    link_detected=st.none() | st.booleans(),
    port=st.none() | st.sampled_from(["Direct Attach Copper", "FIBRE", "Twisted Pair", "Other", "None"]),
    auto_negotiation=st.none() | st.booleans(),
    lanes=st.none() | st.integers(1, 8),
    supported_link_modes=link_modes,
    advertised_link_modes=link_modes,
)


@settings(max_examples=150, deadline=None)
@given(link_infos)
def test_render_round_trip(info):
    assert parse_ethtool(render_ethtool(info), info.interface) == info


@pytest.mark.parametrize("before", ["\tSpeed: 10Mb/s\n\tLink detected: no\n", "Link detected: no\n",
                                    "garbage\n"])
def test_a_value_before_the_first_header_is_refused_not_read_as_the_interfaces(before):
    thor = sample(THOR)
    with pytest.raises(ParseError, match="comes before the 'Settings for mgbe0_0:' line: a value of no interface"):
        parse_ethtool(before + thor, "mgbe0_0")


def test_ethtools_own_complaints_before_the_header_are_not_values():
    """The real sample: a login without root, stderr's "Cannot get ..." lines printed first."""
    info = parse_ethtool(sample("ethtool_nonroot_permission_errors_insights.txt"), "eth1")
    assert (info.speed_mbps, info.duplex, info.link_detected) == (1000, "Full", True)
    assert parse_ethtool("netlink error: Operation not permitted\n" + sample(THOR), "mgbe0_0") == \
        parse_ethtool(sample(THOR), "mgbe0_0")


# --- ethtool -i: the driver and the NIC's firmware (parse_driver_info)

def test_driver_info_of_a_dgx_spark_cx7_first_three_lines():
    assert parse_driver_info(sample("ethtool_i_dgx_spark_enP2p1s0f0np0_PARTIAL.txt")) == DriverInfo(
        "mlx5_core", "6.17.0-1029-nvidia", "28.45.4028 (NVD0000000087)", None)


def test_driver_info_of_a_connectx7_whole_with_its_pci_function():
    info = parse_driver_info(sample("ethtool_i_mlx5_cx7_fw28.39_ubuntu_gpu_server.txt"))
    assert (info.driver, info.firmware, info.bus) == ("mlx5_core", "28.39.3560 (MT_0000000838)", "0000:e6:00.0")


@pytest.mark.parametrize("text", ["", "Settings for eth0:\n\tSpeed: 25000Mb/s\n", "driver: \nfirmware-version: 1\n",
                                  "driver: mlx5 core\n"])
def test_driver_info_without_a_driver_name_is_its_parse_error(text):
    with pytest.raises(ParseError, match="ethtool -i"):
        parse_driver_info(text)


def test_driver_info_as_the_simulated_cx7_prints_it(tmp_path, monkeypatch, capsys):
    """The stand-in prints the firmware of the node's model (a fault changes it there)."""
    from rackproof_sim.standins import ethtool as standin
    model = tmp_path / "model.json"
    model.write_text('{"interfaces": {"enP2p1s0f1np1": {"kind": "cx7", "firmware": "28.39.1002 (NVD0000000087)"}}}')
    monkeypatch.setenv("RACKPROOF_SIM_MODEL", str(model))
    monkeypatch.setattr(standin, "exists", lambda iface: True)
    assert standin.run("ethtool", ["-i", "enP2p1s0f1np1"]) == 0
    assert parse_driver_info(capsys.readouterr().out) == DriverInfo(
        "mlx5_core", "6.17.0-1029-nvidia", "28.39.1002 (NVD0000000087)", "0002:01:00.1")
