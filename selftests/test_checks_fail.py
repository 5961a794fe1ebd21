"""Failing cases of the checks no rack or replay selftest fails by name: each check is called
with its plan's answer planted with the fault it exists to find, and fails (or, with nothing to
judge, is not verified). selftests/test_every_check_fails.py lists these with the rest."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from rackproof.judging.failure import Failure, NotVerified
from rackproof.nodes.http import HttpResponse
from rackproof.inventory.model import FINISHED, parse_inventory
from rackproof.probes.ethtool import LinkInfo
from rackproof.probes.ibdev2netdev import RdmaMap
from rackproof.probes.ip import Address, Interface, Route
from rackproof.probes.ping import PingResult
from rackproof.nodes.remote import Result
from rackproof.measuring.targets import Cx7Target, Pair
from selftests.suite import EXAMPLES
from tests_network import test_addressing, test_closed_network, test_cx7, test_reachability, test_rollback
from tests_physical import test_cabling
from tests_serving import test_agent
from tests_ssh import test_ssh_mesh

THOR5 = parse_inventory((EXAMPLES / "thor5.toml").read_text()).at(FINISHED)
SPARK2 = parse_inventory((EXAMPLES / "spark2.toml").read_text()).at(FINISHED)


def answers(value):
    return lambda key: value


def host(spec):
    return SimpleNamespace(name=spec.name, spec=spec)


def fails(check, *args, match: str) -> None:
    with pytest.raises(Failure, match=match):
        check(*args)


def record(*args, **kwargs):
    pass


THOR3 = host(THOR5.node("thor-3"))


def bond0(ip: str, prefixlen: int = 24, dynamic: bool = False, name: str = "bond0") -> dict:
    return {name: Interface(name, "UP", 1500, None, (Address("inet", ip, prefixlen, "global", dynamic),))}


@pytest.mark.parametrize("interfaces, found", [
    ({}, "cluster address: expected 10.10.0.13/24 on bond0, found it on no interface"),
    (bond0("10.10.0.13", name="mgbe0_0"), "interface holding the cluster address: expected bond0, found mgbe0_0"),
    (bond0("10.10.0.13", 16), "prefix of the cluster address: expected /24, found /16"),
    (bond0("10.10.0.13", dynamic=True), "kind of cluster address: expected static"),
])
def test_the_cluster_address_missing_elsewhere_mistyped_or_dynamic_fails(interfaces, found):
    fails(test_addressing.test_cluster_address_on_the_cluster_interface, THOR3, THOR5, answers(interfaces),
          match=found)


def test_a_hostname_that_is_not_the_inventory_name_fails():
    fails(test_addressing.test_hostname_is_the_inventory_name, THOR3, answers("ubuntu"),
          match="thor-3: hostname: expected thor-3, found ubuntu")


def test_a_name_resolved_to_another_address_fails_naming_it():
    names = {n.name: (n.ip,) for n in THOR5.nodes} | {"thor-4": ("100.64.0.14", "10.10.0.14")}
    names["thor-4"] = ("100.64.0.14",)
    fails(test_addressing.test_every_name_resolves_to_its_cluster_address, THOR3, THOR5, answers(names),
          match=r"thor-4 -> 100\.64\.0\.14 \(expected 10\.10\.0\.14\)")


def test_a_route_by_the_house_port_fails_naming_it():
    routes = {n.ip: Route(n.ip, "bond0", "10.10.0.13") for n in THOR5.nodes}
    routes["10.10.0.15"] = Route("10.10.0.15", "eno1", "192.168.1.20", "192.168.1.1")
    fails(test_addressing.test_route_to_each_peer_leaves_by_the_cluster_interface, THOR3, THOR5, answers(routes),
          match=r"traffic to thor-5 \(10\.10\.0\.15\) leaves by eno1 via 192\.168\.1\.1, expected bond0")


def ping(target, received=3):
    return PingResult(target, 3, received, 0.0 if received else 100.0, *((0.2,) * 4 if received else (None,) * 4))


def test_a_peer_that_does_not_answer_fails_and_one_not_pinged_is_not_verified():
    replies = {n.ip: ping(n.ip) for n in THOR5.nodes if n.name != "thor-3"}
    replies["10.10.0.12"] = ping("10.10.0.12", received=0)
    fails(test_reachability.test_reaches_every_peer, THOR3, THOR5, record, answers(replies),
          match=r"thor-3: cannot reach thor-2 \(10\.10\.0\.12\): 100% loss \(0/3 replies\)")
    del replies["10.10.0.12"]
    with pytest.raises(NotVerified, match=r"no ping of thor-2 \(10\.10\.0\.12\) was made"):
        test_reachability.test_reaches_every_peer(THOR3, THOR5, record, answers(replies))


def spark_cx7(node="spark-1", k=0):
    spec = SPARK2.node(node)
    return Cx7Target(host(spec), spec.cx7[k])


def test_a_cx7_interface_without_its_address_fails():
    iface = Interface("enp1s0f1np1", "UP", 9000, None, (Address("inet", "192.168.100.99", 24, "global"),))
    fails(test_cx7.test_cx7_address, spark_cx7(), answers({"enp1s0f1np1": iface}),
          match="IPv4 address: expected 192.168.100.10/24, found 192.168.100.99/24")
    fails(test_cx7.test_cx7_address, spark_cx7(), answers({}), match="found none")


def test_a_cx7_interface_down_or_slow_fails():
    fails(test_cx7.test_cx7_interface_up, spark_cx7(), answers({"enp1s0f1np1": RdmaMap("rocep1s0f1", 1, "enp1s0f1np1",
                                                                                         False)}),
          match="link state \\(ibdev2netdev\\): expected Up, found Down")
    fails(test_cx7.test_cx7_speed, spark_cx7(), SPARK2, answers(LinkInfo("enp1s0f1np1", 100000, "Full", True)),
          match="ethtool speed: expected 200000Mb/s with link, found 100000Mb/s, link yes")


def test_ssh_over_cx7_refused_fails_naming_the_pair():
    pair = Pair(host(SPARK2.node("spark-1")), host(SPARK2.node("spark-2")))
    refused = Result("ssh -o BatchMode=yes 192.168.100.11 hostname", 255, "",
                     "nvidia@192.168.100.11: Permission denied (publickey).\r\n", 0.1)
    fails(test_ssh_mesh.test_passwordless_ssh_over_cx7, pair, SPARK2, answers(("192.168.100.11", refused)),
          match=r"^spark-1 -> spark-2: `ssh -o BatchMode=yes 192\.168\.100\.11 hostname` \(over CX7\)")


def test_an_agent_that_lists_no_model_with_the_key_fails():
    agent = host(THOR5.node("thor-1"))
    fails(test_agent.test_agent_lists_every_model_with_the_key, agent, THOR5,
          answers((HttpResponse(200, '{"data": []}', None, 0.01), ())), match="models listed with the key")
    fails(test_agent.test_agent_lists_every_model_with_the_key, agent, THOR5,
          answers((HttpResponse(401, "no", None, 0.01), None)), match="GET /v1/models with the key answered 401")


def test_a_cx7_cable_to_the_other_logical_interface_fails():
    from selftests.test_cabling import newest, peer
    cx7 = spark_cx7()
    wrong = newest({"enp1s0f1np1": [peer("enp1s0f1np1", "spark-2", "enP2p1s0f1np1")]})
    fails(test_cabling.test_cx7_cable_joins_the_planned_ports, cx7, SPARK2, answers(wrong),
          match="the far end of the QSFP cable")


def test_sshd_that_takes_passwords_fails_naming_the_address():
    fails(test_closed_network.test_password_login_is_off, THOR3,
          answers({"10.10.0.13": ("publickey", "password", "keyboard-interactive")}),
          match=r"thor-3: sshd takes passwords on 10\.10\.0\.13 \(publickey,password,keyboard-interactive\)")


def test_another_login_name_fails():
    fails(test_ssh_mesh.test_same_login_on_every_node, THOR3, THOR5, answers("ubuntu"),
          match="thor-3: login name: expected nvidia, found ubuntu")


def test_a_management_path_over_the_cx7_link_fails():
    from rackproof.probes.sshcheck import SshConnection
    seen = SshConnection("192.168.100.1", "192.168.100.10")
    fails(test_rollback.test_management_path_does_not_ride_on_the_cx7_link, host(SPARK2.node("spark-1")),
          answers((seen, Route("192.168.100.1", "enp1s0f1np1", "192.168.100.10"))),
          match="the management path rides on the CX7 link")
