"""rackproof.probes.ip against real `ip -j` output.

Samples: ip_j_addr_router_multi_addr.json (public, iproute2 >= 6), ip_addr_show_dgx_spark_*.txt
(the text form, which is not what we run); ip_j_*_local_* were captured on the dev machine in
throwaway network namespaces (veth pairs named like Thor lanes, a peer down for NO-CARRIER,
an address with a lifetime for "dynamic"; for `ip -j route show`, a namespace with a default
route with a metric, a static route via a gateway and a blackhole; and the dev machine's own
table).
"""

from pathlib import Path

import pytest

from rackproof.probes import ParseError
from rackproof.probes.ip import Address, Interface, Route, parse_ip_addr, parse_ip_route_get, parse_route_table

SAMPLES = Path(__file__).parent / "samples"


def by_name(interfaces):
    return {interface.name: interface for interface in interfaces}


def test_router_sample_every_interface():
    interfaces = parse_ip_addr((SAMPLES / "ip_j_addr_router_multi_addr.json").read_text())
    assert [i.name for i in interfaces] == ["lo", "dummy0", "eth0", "eth1", "eth2", "eth3", "eth4", "sit0", "brlan0"]
    lo, eth2, eth3, sit0 = (by_name(interfaces)[n] for n in ("lo", "eth2", "eth3", "sit0"))
    assert lo == Interface(
        name="lo", state="UNKNOWN", mtu=65536, mac="00:00:00:00:00:00",
        addresses=(Address("inet", "127.0.0.1", 8, "host"), Address("inet6", "::1", 128, "host")),
        flags=("LOOPBACK", "UP", "LOWER_UP"),
    )
    assert eth2.state == "DOWN" and eth2.master == "brlan0"
    assert [a.local for a in eth2.addresses] == [f"172.16.10{n}.1" for n in range(6)]
    assert [(a.family, a.local, a.prefixlen) for a in eth3.addresses] == [
        ("inet", "192.168.1.128", 24), ("inet", "172.16.0.1", 24), ("inet", "172.16.1.1", 24),
        ("inet", "172.16.2.1", 24), ("inet6", "fe80::227c:14ff:fef4:5000", 64)]
    assert eth3.addresses[-1].scope == "link"
    # "link": null and "addr_info": [] on a DOWN tunnel
    assert sit0 == Interface("sit0", "DOWN", 1480, "0.0.0.0", (), ("NOARP",))
    assert by_name(interfaces)["dummy0"].addresses == ()


def test_local_thor_like_lanes():
    interfaces = by_name(parse_ip_addr((SAMPLES / "ip_j_addr_local_netns_veth_nocarrier_dynamic.json").read_text()))
    lane0, lane1, house = interfaces["mgbe0_0"], interfaces["mgbe1_0"], interfaces["enP2p1s0"]
    assert (lane0.state, lane0.mtu, lane0.mac) == ("UP", 1466, "16:5f:f4:2f:ba:95")
    assert lane0.addresses[0] == Address("inet", "10.10.0.11", 24, "global", dynamic=False)
    # peer down: admin UP but no carrier
    assert lane1.state == "DOWN" and "NO-CARRIER" in lane1.flags and "UP" in lane1.flags
    assert lane1.addresses[0].local == "10.10.1.11"
    assert house.addresses[0] == Address("inet", "192.168.1.50", 24, "global", dynamic=True)


def test_ip_link_reads_without_addresses():
    interfaces = parse_ip_addr((SAMPLES / "ip_j_link_local_netns.json").read_text())
    assert [i.name for i in interfaces] == ["lo", "mgbe0_0", "mgbe1_0", "enP2p1s0"]
    assert all(i.addresses == () for i in interfaces)
    assert by_name(interfaces)["mgbe1_0"].mtu == 1466


@pytest.mark.parametrize("name, route", [
    ("ip_j_route_get_local_direct.json", Route("10.10.0.12", "mgbe0_0", "10.10.0.11", None)),
    ("ip_j_route_get_local_via_gateway.json", Route("8.8.8.8", "enP2p1s0", "192.168.1.50", "192.168.1.1")),
    ("ip_j_route_get_local_own_address.json", Route("10.10.0.11", "lo", "10.10.0.11", None, "local")),
])
def test_route_get(name, route):
    assert parse_ip_route_get((SAMPLES / name).read_text()) == route


def test_text_form_is_not_what_we_read():
    with pytest.raises(ParseError, match="not JSON"):
        parse_ip_addr((SAMPLES / "ip_addr_show_dgx_spark_enp1s0f1np1.txt").read_text())


@pytest.mark.parametrize("text", [
    "", "{}", "[{}]", '[{"ifname": "x", "operstate": "UP", "mtu": true}]',
    '[{"ifname": "x", "operstate": "UP", "mtu": 1500, "addr_info": [{"family": "inet"}]}]',
])
def test_addr_unreadable(text):
    with pytest.raises(ParseError):
        parse_ip_addr(text)


@pytest.mark.parametrize("text", ["", "\n", "[]", '[{"dst": "1.2.3.4"}]', "RTNETLINK answers: Network is unreachable"])
def test_route_unreadable(text):
    with pytest.raises(ParseError):
        parse_ip_route_get(text)


def test_route_table_in_ips_words_without_the_routes_addresses_imply():
    table = parse_route_table((SAMPLES / "ip_j_route_show_local_netns_static_metric_blackhole.json").read_text())
    assert table == ("default via 192.168.55.1 dev v1 metric 100", "blackhole 10.99.0.0/16",
                     "172.16.0.0/16 via 10.10.0.1 dev v0 proto static")
    assert parse_route_table((SAMPLES / "ip_j_route_show_local_default_and_kernel.json").read_text()) == (
        "default via 192.0.2.1 dev eth0",)


@pytest.mark.parametrize("text", ["", "{}", '[{"dev": "eth0"}]', '[{"dst": "default", "metric": "100"}]', "[1]"])
def test_route_table_unreadable(text):
    with pytest.raises(ParseError):
        parse_route_table(text)


# --- real outputs of other machines (samples/SOURCES.md) ---

def test_an_ubuntu_laptops_addresses_with_details():
    """netplan's `ip -d -j addr` of an Ubuntu laptop: -d adds fields the parser passes over."""
    text = (SAMPLES / "ip_d_j_addr_ubuntu_laptop_netplan_status_fixture.json").read_text()
    interfaces = by_name(parse_ip_addr(text))
    assert list(interfaces) == ["lo", "enp0s31f6", "wlan0", "wg0", "wwan0", "tun0"]
    wired = interfaces["enp0s31f6"]
    assert (wired.state, wired.mtu, wired.mac) == ("UP", 1500, "54:e1:ad:5f:24:b4")
    assert wired.addresses[0] == Address("inet", "192.168.178.62", 24, "global", dynamic=True)   # DHCP
    assert interfaces["wg0"].mac is None and interfaces["wg0"].addresses == (
        Address("inet", "10.10.0.2", 24, "global"),)                                                # static
    assert (interfaces["wwan0"].state, interfaces["wwan0"].addresses) == ("DOWN", ())
    assert interfaces["tun0"].mac == "1.1.1.1"          # a sit tunnel's link address is its local IPv4


def test_an_ubuntu_laptops_route_table_without_the_kernels_own():
    table = parse_route_table((SAMPLES / "ip_d_j_route_ubuntu_laptop_netplan_status_fixture.json").read_text())
    assert table == ("default via 192.168.178.1 dev enp0s31f6 proto dhcp src 192.168.178.62 metric 100",
                     "default via 192.168.178.1 dev wlan0 proto dhcp metric 600",
                     "192.168.178.1 dev enp0s31f6 proto dhcp src 192.168.178.62 metric 100")


def test_a_vagrant_ubuntu_vms_route_table():
    assert parse_route_table((SAMPLES / "ip_j_route_ubuntu_vagrant_dhcp.json").read_text()) == (
        "default via 10.0.2.2 dev eth0 proto dhcp src 10.0.2.15 metric 100",
        "10.0.2.2 dev eth0 proto dhcp src 10.0.2.15 metric 100")
