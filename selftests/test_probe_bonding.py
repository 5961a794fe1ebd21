"""rackproof.probes.bonding against real /proc/net/bonding/bond0 files (samples/SOURCES.md)."""

import re

import pytest
from hypothesis import given, settings, strategies as st

from rackproof.probes import ParseError
from rackproof.probes.bonding import LACP_MODE, BondInfo, BondSlave, parse_bonding
from rackproof_sim.formats.bonding import render_bonding
from selftests.robustness import sample


def members(info: BondInfo) -> list[str]:
    return [slave.name for slave in info.slaves_in_aggregator]


def test_two_100g_lanes_to_a_switch():
    info = parse_bonding(sample("bonding_8023ad_2x100g_layer34_switch_partner.txt"))
    assert info.is_lacp
    assert (info.xmit_hash_policy, info.miimon, info.lacp_rate) == ("layer3+4", 100, "slow")
    assert (info.active_aggregator_id, info.partner_mac) == (5, "3c:c7:86:87:8a:21")
    assert [(s.name, s.speed_mbps, s.aggregator_id, s.actor_port_state) for s in info.slaves] == [
        ("enp1s0f0", 100000, 5, 61), ("enp1s0f1", 100000, 5, 61)]
    assert members(info) == ["enp1s0f0", "enp1s0f1"]
    assert info.slaves[0].partner_oper_key == 2897


def test_healthy_kernel_6_8_fast_lacp():
    info = parse_bonding(sample("bonding_8023ad_kernel6.8_healthy.txt"))
    assert info.driver_version == "v6.8.0-142-generic"
    assert (info.xmit_hash_policy, info.lacp_rate) == ("layer2+3", "fast")
    assert members(info) == ["e1", "e2"]
    assert {s.actor_port_state for s in info.slaves} == {63}
    assert info.slaves[0].link_failure_count == 1


def test_one_lane_down_and_no_lacp_partner():
    info = parse_bonding(sample("bonding_8023ad_one_down_partner_zero.txt"))
    assert info.mii_status == "up"          # the bond says up although nothing is aggregated
    assert (len(info.slaves), info.active_aggregator_id, info.partner_mac) == (2, 2, "00:00:00:00:00:00")
    down, up = info.slaves
    assert (down.name, down.mii_status, down.speed_mbps, down.duplex, down.aggregator_id) == (
        "enp1s0f0", "down", None, None, 1)
    assert (up.name, up.mii_status, up.speed_mbps, up.aggregator_id) == ("enp1s0f1", "up", 1000, 2)
    # actor and partner both print "port state": scoped per block
    assert (down.actor_port_state, down.partner_port_state) == (71, 1)
    assert (up.actor_port_state, up.partner_port_state, up.partner_mac) == (79, 1, "00:00:00:00:00:00")
    assert members(info) == []              # MII up is not membership


def test_insights_fixture_with_tab_indented_aggregator_info():
    info = parse_bonding(sample("bonding_8023ad_one_slave_mii_down_insights.txt"))
    assert (info.xmit_hash_policy, info.active_aggregator_id) == ("layer2", 1)
    assert [(s.name, s.mii_status, s.aggregator_id, s.actor_port_state) for s in info.slaves] == [
        ("enp0s9", "up", 1, 77), ("enp0s8", "down", 2, 69)]
    assert members(info) == []


def test_non_root_reader_sees_no_aggregator_details():
    # without CAP_NET_ADMIN the kernel leaves out the system MAC, the active aggregator and
    # the lacp pdu details: nobody can be shown to be a member
    text = sample("bonding_8023ad_kernel6.8_healthy.txt")
    text = re.sub(r"System priority.*?\n\n", "\n", text, flags=re.S)
    text = re.sub(r"details actor lacp pdu:.*?(?=\n\n|\Z)", "", text, flags=re.S)
    info = parse_bonding(text)
    assert (info.system_mac, info.active_aggregator_id) == (None, None)
    assert [s.aggregator_id for s in info.slaves] == [1, 1]
    assert members(info) == []


def test_no_active_aggregator_and_aggregator_not_assigned():
    text = sample("bonding_8023ad_one_down_partner_zero.txt")
    no_aggregator = "bond bond0 has no active aggregator\n\n"
    text = re.sub(r"Active Aggregator Info:.*?\n\n", no_aggregator, text, flags=re.S)
    text = text.replace("Aggregator ID: 1\n", "Aggregator ID: N/A\n")
    info = parse_bonding(text)
    assert info.active_aggregator_id is None
    assert info.slaves[0].aggregator_id is None


@pytest.mark.parametrize("text", [
    "", "Ethernet Channel Bonding Driver: v6.8.0\n",
    "Bonding Mode: x\nMII Status: up\n\nSlave Interface: e1\nSpeed: 25000 Mbps\n",     # member without MII
    "Bonding Mode: x\nMII Status: up\n\nSlave Interface: e1\nMII Status: up\nSpeed: 25000 Mb/s\n",
    "Bonding Mode: x\nMII Status: up\nMII Polling Interval (ms): often\n",
])
def test_unreadable_files_raise_parse_error(text):
    with pytest.raises(ParseError):
        parse_bonding(text)


def test_render_has_the_kernels_lines():
    text = sample("bonding_8023ad_kernel6.8_healthy.txt")
    rendered = render_bonding(parse_bonding(text))

    def keys(file_text):
        return [line.split(":")[0] for line in file_text.splitlines()]
    assert keys(rendered) == keys(text)


octets = st.lists(st.integers(0, 255), min_size=6, max_size=6)
macs = octets.map(lambda mac: ":".join(f"{octet:02x}" for octet in mac)) | st.just("00:00:00:00:00:00")
names = st.text("abcdefghijklmnopqrstuvwxyz0123456789_", min_size=1, max_size=15)
port_states = st.sampled_from([61, 63, 69, 71, 77, 79, 1]) | st.integers(0, 255)


@st.composite
def bond_slaves(draw, lacp: bool):
    in_aggregator = lacp and draw(st.booleans())    # "Aggregator ID: N/A" otherwise

    def lacp_field(strategy):
        return draw(st.none() | strategy) if in_aggregator else None
    return BondSlave(
        name=draw(names),
        mii_status=draw(st.sampled_from(["up", "down"])),
        speed_mbps=draw(st.none() | st.sampled_from([1000, 10000, 25000, 100000])),
        duplex=draw(st.none() | st.sampled_from(["full", "half"])),
        link_failure_count=draw(st.none() | st.integers(0, 1000)),
        perm_hwaddr=draw(st.none() | macs),
        aggregator_id=draw(st.integers(1, 20)) if in_aggregator else None,
        actor_port_state=lacp_field(port_states),
        partner_mac=lacp_field(macs),
        partner_oper_key=lacp_field(st.integers(0, 65535)),
        partner_port_state=lacp_field(port_states),
    )


@st.composite
def bonds(draw):
    lacp = draw(st.booleans())
    active = draw(st.none() | st.integers(1, 20)) if lacp else None

    def lacp_field(strategy):
        return draw(st.none() | strategy) if lacp else None
    return BondInfo(
        mode=LACP_MODE if lacp else "load balancing (xor)",
        mii_status=draw(st.sampled_from(["up", "down"])),
        driver_version=draw(st.none() | st.sampled_from(["v3.7.1 (April 27, 2011)", "v6.8.0-142-generic"])),
        xmit_hash_policy=draw(st.none() | st.sampled_from(["layer2", "layer3+4", "layer2+3", "encap3+4"])),
        miimon=draw(st.none() | st.integers(0, 1000)),
        lacp_rate=lacp_field(st.sampled_from(["slow", "fast"])),
        system_mac=lacp_field(macs),
        active_aggregator_id=active,
        partner_mac=None if active is None else draw(st.none() | macs),
        slaves=tuple(draw(st.lists(bond_slaves(lacp), max_size=4))),
    )


@settings(max_examples=150, deadline=None)
@given(bonds())
def test_render_round_trip(info):
    assert parse_bonding(render_bonding(info)) == info
