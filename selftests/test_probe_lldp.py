"""rackproof.probes.lldp against real outputs of lldpcli, gathered from public sources:

- lldpcli_json0_show_neighbors_h3c_and_ubuntu_3ifaces.json: `lldpcli -f json0 show neighbors`
  with an H3C switch (port id subtype ifname, a description with CR LF) and an Ubuntu host heard
  on two ports (port id a MAC, the interface in the description)
  (github.com/unifabric-io/unifabric pkg/agent/fabricnode/lldp_test.go testJSON1, a81daf64);
- lldpcli_json0_show_neighbors_sonic_local_portid_5ifaces.json: SONiC switches, port id
  subtype local ("Ethernet120"), five interfaces (same file, testJSON2);
- lldpcli_json_show_neighbors_sonic_two_neighbors_one_iface_FIXTURE.json: `-f json` with two
  neighbours on one interface, a list of one-key objects (a sonic-utilities style test fixture,
  anonymised by its authors);
- lldpcli_json_no_neighbors_DERIVED_FROM_SOURCE.json, lldpcli_json0_no_neighbors_DERIVED_FROM_SOURCE.json:
  the answers with no neighbour, as lldpd's src/client/json_writer.c writes them;
- lldpcli_json0_local_debian12_*, lldpcli_local_debian12_*: Debian 12's lldpcli 1.0.16 on the
  simulated rack (a Thor hearing the switch's lldpd, a Spark hearing its peer's), and its message
  when lldpd is not running.
"""

from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from rackproof.probes import ParseError
from rackproof.probes.lldp import _FIELDS, Neighbour, parse_neighbours, unavailable

SAMPLES = Path(__file__).parent / "samples"


def read(name: str) -> str:
    return (SAMPLES / name).read_text()


def test_a_switch_names_its_port_by_ifname_and_a_host_by_its_interface_description():
    h3c, host, _ = parse_neighbours(read("lldpcli_json0_show_neighbors_h3c_and_ubuntu_3ifaces.json"))
    assert (h3c.interface, h3c.system, h3c.port_id, h3c.port_id_type) == \
        ("enp129s0f0", "DaoCloud_ShangPu_H3C_D01_AccessSwitch", "GigabitEthernet1/0/17", "ifname")
    assert h3c.port_names() == ("GigabitEthernet1/0/17", "GigabitEthernet1/0/17 Interface")
    # a host's port id is its MAC: only the description names the interface
    assert (host.system, host.port_id_type, host.port_names()) == ("10-20-1-50", "mac", ("enp5s0f0np0",))


def test_sonic_local_port_ids_and_ages():
    found = parse_neighbours(read("lldpcli_json0_show_neighbors_sonic_local_portid_5ifaces.json"))
    assert [(n.interface, n.system, n.port_id) for n in found][:2] == \
        [("ens1np0", "StorageSW", "Ethernet120"), ("ens841np0", "LEAF03", "Ethernet184")]
    assert found[0].age_s == 1 * 3600 + 48 * 60 + 20


def test_the_folded_json_format_reads_the_same_way():
    first, second = parse_neighbours(read("lldpcli_json_show_neighbors_sonic_two_neighbors_one_iface_FIXTURE.json"))
    assert (first.interface, first.system, first.port_descr) == ("Ethernet0", "dummy", "First MAC")
    assert (second.interface, second.port_id) == ("Ethernet0", "00:00:00:00:00:02")


@pytest.mark.parametrize("name", ["lldpcli_json_no_neighbors_DERIVED_FROM_SOURCE.json",
                                  "lldpcli_json0_no_neighbors_DERIVED_FROM_SOURCE.json"])
def test_no_neighbour_is_an_empty_answer(name):
    assert parse_neighbours(read(name)) == ()


def test_a_node_of_the_simulated_rack_hears_the_switch_port():
    """Just after a plug went back from port 13 to port 1: the old announcement lingers (4 s TTL)."""
    found = parse_neighbours(read("lldpcli_json0_local_debian12_thor_hears_switch.json"))
    assert [(n.interface, n.system, n.port_id, n.port_id_type, n.age_s) for n in found] == [
        ("mgbe0_0", "sw-25g", "swp13", "ifname", 16), ("mgbe0_0", "sw-25g", "swp1", "ifname", 1),
        ("mgbe1_0", "sw-25g", "swp2", "ifname", 26), ("mgbe2_0", "sw-25g", "swp3", "ifname", 26),
        ("mgbe3_0", "sw-25g", "swp4", "ifname", 26)]


def test_a_spark_hears_the_peer_host_and_interface():
    found = parse_neighbours(read("lldpcli_json0_local_debian12_spark_hears_peer.json"))
    assert [(n.interface, n.system, n.port_id_type, n.port_names()) for n in found] == [
        ("enp1s0f1np1", "spark-2", "mac", ("enp1s0f1np1",)), ("enP2p1s0f1np1", "spark-2", "mac", ("enP2p1s0f1np1",))]


@pytest.mark.parametrize("text", ["", "[]", '{"lldp": 3}', '{"lldp": {"interface": [{"eth0": 3}]}}',
                                  '{"lldp": [{"interface": [{"via": "LLDP"}]}]}',
                                  '{"lldp": {"interface": {"eth0": {"age": "yesterday"}}}}',
                                  '{"lldp": {"interface": {"eth0": {"port": {"id": {"type": "ifname"}}}}}}'])
def test_what_is_not_an_answer_is_refused(text):
    with pytest.raises(ParseError):
        parse_neighbours(text)


def test_why_lldpcli_gave_no_answer():
    stopped = read("lldpcli_local_debian12_lldpd_not_running.txt")
    assert unavailable(1, stopped, "nvidia")[0] == "lldpd is not running"
    closed = "2015-06-29T13:19:49 [WARN/control] unable to connect to socket /var/run/lldpd.socket: Permission denied\n"
    assert unavailable(1, closed, "nvidia") == (
        "nvidia may not use lldpd's socket", "sudo usermod -aG _lldpd nvidia on the node, then log in again")
    assert unavailable(127, "bash: line 1: lldpcli: command not found\n", "nvidia")[0].startswith("lldpd is not installed")
    outside_adm = "bash: line 1: /usr/sbin/lldpcli: Permission denied\n"      # Debian's lldpcli is setuid, mode 4750 root:adm
    assert unavailable(126, outside_adm, "nvidia")[1] == "sudo usermod -aG adm nvidia on the node, then log in again"
    assert unavailable(1, "some other trouble\n", "nvidia") is None


# a chassis or an interface named like one of lldpd's tags ("id", "pi") cannot be told from an
# unnamed one in -f json
NAMES = st.text(min_size=1, max_size=20).filter(lambda name: name not in _FIELDS)
INTERFACES = st.from_regex(r"[a-z][a-z0-9_]{0,14}", fullmatch=True).filter(lambda name: name not in _FIELDS)


@given(st.lists(st.tuples(INTERFACES, NAMES,
                          st.text(min_size=1, max_size=20)), max_size=6),
       st.booleans())
def test_both_formats_give_the_same_neighbours(rows, folded):
    """A document built the way lldpd's writer builds each format reads back to its rows."""
    def json0(interface, system, port):
        return {"name": interface, "via": "LLDP", "age": "0 day, 00:00:07",
                "chassis": [{"id": [{"type": "mac", "value": "aa:bb"}], "name": [{"value": system}]}],
                "port": [{"id": [{"type": "ifname", "value": port}], "descr": [{"value": port}]}]}

    def json(interface, system, port):
        return {interface: {"via": "LLDP", "age": "0 day, 00:00:07",
                            "chassis": {system: {"id": {"type": "mac", "value": "aa:bb"}}},
                            "port": {"id": {"type": "ifname", "value": port}, "descr": port}}}
    import json as json_module
    if folded:
        items = [json(*row) for row in rows]
        body = {"lldp": {"interface": items[0] if len(items) == 1 else items} if items else {}}
    else:
        body = {"lldp": [{"interface": [json0(*row) for row in rows]} if rows else {}]}
    found = parse_neighbours(json_module.dumps(body))
    assert found == tuple(Neighbour(i, s, "aa:bb", p, "ifname", p, 7) for i, s, p in rows)
