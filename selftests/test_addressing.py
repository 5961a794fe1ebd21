"""Address clashes found from every node's own interfaces (rackproof.judging.addressing)."""

from rackproof.judging.addressing import clashes
from rackproof.inventory.model import load_inventory
from rackproof.probes.ip import Address, Interface
from selftests.suite import EXAMPLES

THOR5 = load_inventory(EXAMPLES / "thor5.toml").nodes


def holding(*addresses: str, name: str = "bond0") -> dict:
    return {name: Interface(name, "UP", 1500, "02:00:00:00:00:01",
                            tuple(Address("inet6" if ":" in a else "inet", a, 24) for a in addresses))}


def healthy() -> dict:
    return {n.name: holding(n.ip) for n in THOR5}


def test_one_holder_per_address_is_no_clash():
    assert clashes(THOR5, healthy()) == []


def test_a_node_holding_another_nodes_address_is_named_with_both_holders():
    seen = {**healthy(), "thor-5": holding("10.10.0.14")}
    (clash,) = clashes(THOR5, seen)
    assert str(clash) == ("10.10.0.14 is held by 2 nodes: thor-4 (bond0) and thor-5 (bond0); "
                          "the inventory gives it to thor-4, so thor-5 is misconfigured")


def test_an_ipv4_mapped_ipv6_address_is_the_ipv4_address():
    seen = {**healthy(), "thor-2": holding("10.10.0.12", "::ffff:10.10.0.11", name="mgbe0_0")}
    assert [c.address for c in clashes(THOR5, seen)] == ["10.10.0.11"]


def test_nodes_that_could_not_be_read_hold_nothing():
    assert clashes(THOR5, {"thor-1": holding("10.10.0.11")}) == []
