"""rackproof.judging.cabling (what measuring.lldp heard), judged against the cabling of examples/thor5.toml and
examples/spark2.toml. A plug in its port passes; a swap names both plugs and both ports; a plug
in another node's port names whose port it is; silence or a closed lldpd is not verified."""

import pytest

from rackproof.judging import cabling
from rackproof.judging.failure import Failure, NotVerified
from rackproof.inventory.model import load_inventory
from rackproof.probes.lldp import Neighbour, newest_by_interface
from selftests.suite import EXAMPLES

THOR = load_inventory(EXAMPLES / "thor5.toml")
SPARK = load_inventory(EXAMPLES / "spark2.toml")


def switch_port(interface: str, port: int, age: int = 5, system: str = "sw-25g", name: str = "swp{}") -> Neighbour:
    return Neighbour(interface, system, "b8:59:9f:2a:10:00", name.format(port), "ifname", name.format(port), age)


def heard_as_planned(node: str) -> dict[str, list[Neighbour]]:
    return {lane.name: [switch_port(lane.name, lane.switch_port)] for lane in THOR.node(node).lanes}


def newest(heard: dict[str, list[Neighbour]]) -> dict[str, Neighbour]:
    """What cabling.heard gives a check: each interface's newest announcement."""
    return newest_by_interface([n for announcements in heard.values() for n in announcements])


def judge(node: str, lane: str, heard) -> None:
    spec = THOR.node(node)
    cabling.check_lane(THOR, spec, spec.lane(lane), newest(heard))


def test_every_plug_in_its_planned_port_passes():
    for node in THOR.nodes:
        for lane in node.lanes:
            judge(node.name, lane.name, heard_as_planned(node.name))


def test_two_plugs_of_one_node_swapped_name_each_other_and_both_ports():
    heard = heard_as_planned("thor-2") | {"mgbe1_0": [switch_port("mgbe1_0", 7)], "mgbe2_0": [switch_port("mgbe2_0", 6)]}
    with pytest.raises(Failure) as first:
        judge("thor-2", "mgbe1_0", heard)
    assert str(first.value) == (
        "thor-2 mgbe1_0 (cable thor-2/2): switch port announced by LLDP: expected sw-25g port 6 (swp6), found "
        "sw-25g port 7 (swp7). Cause: it is swapped with thor-2 mgbe2_0 (cable thor-2/3), which is in "
        "port 6: swap the two plugs back")
    with pytest.raises(Failure, match=r"mgbe2_0 \(cable thor-2/3\).*found sw-25g port 6 .*swapped with thor-2 "
                                      r"mgbe1_0 \(cable thor-2/2\), which is in port 7"):
        judge("thor-2", "mgbe2_0", heard)
    judge("thor-2", "mgbe0_0", heard)      # the other plugs of the node are where they belong


def test_a_plug_in_another_nodes_port_names_whose_port_it_is():
    heard = {"mgbe0_0": [switch_port("mgbe0_0", 9)]}
    with pytest.raises(Failure) as caught:
        judge("thor-2", "mgbe0_0", heard)
    assert caught.value.cause == ("port 9 belongs to thor-3 mgbe0_0 (cable thor-3/1) in cluster.toml: move this plug to "
                                  "port 5 and thor-3 mgbe0_0's plug into port 9")


def test_a_port_outside_the_plan_and_another_switch():
    with pytest.raises(Failure, match="port 23 is in no cable of cluster.toml: move the plug to port 5"):
        judge("thor-2", "mgbe0_0", {"mgbe0_0": [switch_port("mgbe0_0", 23)]})
    with pytest.raises(Failure, match="another device than sw-25g"):
        judge("thor-2", "mgbe0_0", {"mgbe0_0": [switch_port("mgbe0_0", 5, system="lab-1g")]})
    with pytest.raises(Failure, match=r'names its ports otherwise than \[switch\] lldp_port = "swp\{port\}"'):
        judge("thor-2", "mgbe0_0", {"mgbe0_0": [switch_port("mgbe0_0", 5, name="Ethernet{}")]})


def test_the_newest_announcement_counts_after_a_plug_was_moved():
    """The old port's announcement lingers until its TTL (120 s on a real switch) runs out."""
    judge("thor-2", "mgbe0_0", {"mgbe0_0": [switch_port("mgbe0_0", 9, age=300), switch_port("mgbe0_0", 5, age=2)]})
    with pytest.raises(Failure):
        judge("thor-2", "mgbe0_0", {"mgbe0_0": [switch_port("mgbe0_0", 5, age=300), switch_port("mgbe0_0", 9, age=2)]})


def test_a_fully_qualified_switch_name_is_the_switch():
    judge("thor-2", "mgbe0_0", {"mgbe0_0": [switch_port("mgbe0_0", 5, system="SW-25G.lab.example")]})


def test_silence_on_a_lane_is_not_verified():
    with pytest.raises(NotVerified) as caught:
        judge("thor-2", "mgbe0_0", {})
    assert str(caught.value) == ("thor-2 mgbe0_0 (cable thor-2/1): cabling against cluster.toml (LLDP) not verified: lldpd "
                                 "on the node heard no LLDP announcement on this lane (a lane without link hears none: see "
                                 "test_lane_link_detected). To verify it: enable LLDP on "
                                 "sw-25g (port 5 and the others of the shelf)")


def test_the_port_name_pattern_reads_numbers_only_where_the_pattern_puts_them():
    switch = THOR.switch.model_copy(update={"lldp_port": "Ethernet1/{port}"})
    assert [switch.port_number(n) for n in ("Ethernet1/7", "Ethernet1/", "Ethernet1/7x", "Ethernet2/7", "Ethernet1/٣")] \
        == [7, None, None, None, None]
    assert switch.port_name(12) == "Ethernet1/12"


def peer(interface: str, system: str, port: str) -> Neighbour:
    return Neighbour(interface, system, "4c:bb:47:30:02:00", "4c:bb:47:30:02:00", "mac", port, 3)


def test_a_spark_cable_joins_the_interfaces_on_one_subnet():
    one, two = SPARK.nodes
    for cx7 in one.cx7:
        cabling.check_cx7(SPARK, one, cx7, newest({cx7.name: [peer(cx7.name, two.name, cx7.name)]}))
    first = one.cx7[0]
    wrong = {first.name: [peer(first.name, two.name, one.cx7[1].name)]}   # the other logical interface's subnet
    with pytest.raises(Failure, match="the far end of the QSFP cable"):
        cabling.check_cx7(SPARK, one, first, newest(wrong))
