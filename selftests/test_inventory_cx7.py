"""Inventories that cannot describe a working cluster are refused with their field paths: a
Spark's CX7 pair (examples/spark2.toml, the playbook's pattern: the two logical interfaces of the
cabled port on two subnets, each subnet shared with the other end), and an address's prefix."""

import pytest

from rackproof.inventory.model import InventoryError, parse_inventory
from selftests.suite import EXAMPLES

SPARK2 = (EXAMPLES / "spark2.toml").read_text()
THOR5 = (EXAMPLES / "thor5.toml").read_text()
SECOND = '{ name = "enP2p1s0f1np1", rdma_device = "roceP2p1s0f1", address = "192.168.101.10/24" }'


def problems(text: str) -> list[str]:
    with pytest.raises(InventoryError) as err:
        parse_inventory(text, "c.toml")
    return err.value.problems


def test_the_playbooks_pair_loads():
    spark = parse_inventory(SPARK2)
    assert [c.address for c in spark.node("spark-1").cx7] == ["192.168.100.10/24", "192.168.101.10/24"]


@pytest.mark.parametrize("old, new, expected", [
    # both logical interfaces on one subnet (and the other end's second subnet then has no partner)
    ('address = "192.168.101.10/24"', 'address = "192.168.100.12/24"',
     ["nodes[0].cx7[1].address: 192.168.100.12/24 is on the subnet 192.168.100.0/24 of nodes[0].cx7[0]: each "
      "logical interface of the port has a subnet of its own",
      "nodes[1].cx7[1].address: 192.168.101.11/24: no other node has a CX7 address on 192.168.101.0/24: nothing "
      "would answer on it; give the other end of this logical interface an address on it"]),
    # the two ends of one logical interface on different subnets
    ('address = "192.168.101.11/24"', 'address = "192.168.102.11/24"',
     ["nodes[0].cx7[1].address: 192.168.101.10/24: no other node has a CX7 address on 192.168.101.0/24: nothing "
      "would answer on it; give the other end of this logical interface an address on it",
      "nodes[1].cx7[1].address: 192.168.102.11/24: no other node has a CX7 address on 192.168.102.0/24: nothing "
      "would answer on it; give the other end of this logical interface an address on it"]),
    # one interface listed twice
    (SECOND, SECOND.replace("enP2p1s0f1np1", "enp1s0f1np1"),
     ["nodes[0].cx7[1].name: enp1s0f1np1 is already nodes[0].cx7[0]"]),
    (SECOND, SECOND.replace("roceP2p1s0f1", "rocep1s0f1"),
     ["nodes[0].cx7[1].rdma_device: rocep1s0f1 is already nodes[0].cx7[0]"]),
    ("192.168.100.10/24", "192.168.100.10/0",
     ["nodes[0].cx7[0].address: 192.168.100.10/0 is in the network of every address (/0): give the cluster "
      "network's prefix, such as /24"]),
    ("192.168.100.10/24", "192.168.100.10/32",
     ["nodes[0].cx7[0].address: 192.168.100.10/32 is a network of 1 address: no room for the other nodes; give the "
      "cluster network's prefix, such as /24"]),
])
def test_a_cx7_pair_that_cannot_work_is_refused_with_its_field_path(old, new, expected):
    assert old in SPARK2
    assert sorted(problems(SPARK2.replace(old, new, 1))) == sorted(expected)


@pytest.mark.parametrize("prefix", ["0", "32"])
def test_a_cluster_address_of_every_address_or_of_one_is_refused(prefix):
    found = problems(THOR5.replace('address = "10.10.0.11/24"', f'address = "10.10.0.11/{prefix}"', 1))
    assert found and all(p.startswith("nodes[0].address: 10.10.0.11/" + prefix) for p in found), found
