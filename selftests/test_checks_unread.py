"""A check passes only on a measurement it read: each check below is called with its plan's
answer empty (None, not installed, "N/A", no counter, no peers, no interface) and never passes.
It is not verified (what was missing and how to get it), or it fails. The checks themselves are
called, with their `planned` answers given here."""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest

from rackproof.judging.failure import Failure, NotVerified
from rackproof.inventory.model import FINISHED, parse_inventory
from rackproof.judging.linkhealth import Change
from rackproof.probes.agent import AgentCommand
from rackproof.probes.ip import Address, Interface
from rackproof.probes.nvidia_smi import NvidiaSmiBanner
from rackproof.probes.ping import PingResult
from rackproof.measuring.targets import Cx7Target, LaneTarget
from selftests.suite import EXAMPLES
from tests_network import test_addressing, test_cx7, test_link_health
from tests_serving import test_agent, test_versions

THOR5 = parse_inventory((EXAMPLES / "thor5.toml").read_text()).at(FINISHED)
SPARK2 = parse_inventory((EXAMPLES / "spark2.toml").read_text())


def answers(value):
    return lambda key: value


def host(spec):
    return SimpleNamespace(name=spec.name, spec=spec)


def no_guards(*_):
    pass


def measure_nothing(*args, **kwargs):
    raise AssertionError(f"a figure was recorded from nothing: {args}")


# --- lane error counters -------------------------------------------------------------------------

def lane():
    node = THOR5.node("thor-2")
    return LaneTarget(host(node), node.lanes[0], f"thor-2 {node.lanes[0].name}")


@pytest.mark.parametrize("missing, why", [
    ({"crc": None}, "no CRC/FCS counter in `ethtool -S` (driver nvethernet: mmc_rx_crc_error, rx_crc_errors)"),
    ({"corrected": None, "uncorrectable": None}, "no FEC block counters"),
    ({"crc": None, "corrected": None, "uncorrectable": None}, "no CRC/FCS counter"),
])
def test_lane_counters_without_a_judged_counter_are_not_verified(missing, why):
    change = Change(**({"received": 5 * 10**9, "sent": 10**9, "crc": 0, "symbol": None, "dropped": 0, "pause": 0,
                        "corrected": 0, "uncorrectable": 0, "driver": "nvethernet"} | missing))
    with pytest.raises(NotVerified, match=re.escape(f"thor-2 mgbe0_0: error counters under load not verified: {why}")):
        test_link_health.test_lane_error_counters_under_load(lane(), THOR5, measure_nothing, no_guards,
                                                             answers(change))


# --- versions ------------------------------------------------------------------------------------

NODES = ("thor-1", "thor-2", "thor-3")


def package_check(installed: dict, inventory=THOR5):
    return test_versions.test_same_package_version(None, inventory, "tensorrt", "tensorrt_version", answers(installed))


def test_a_package_installed_on_no_node_is_not_verified():
    with pytest.raises(NotVerified) as caught:
        package_check({n: {} for n in NODES})
    assert str(caught.value).startswith("every node: tensorrt version (dpkg) not verified: not installed on any of "
                                        "thor-1, thor-2, thor-3: no value to compare. To verify it: install "
                                        "JetPack on the nodes (`dpkg-query -W tensorrt` then names its version)")


def test_a_package_missing_on_most_nodes_fails_those_nodes_not_the_one_that_has_it():
    with pytest.raises(Failure) as caught:
        package_check({"thor-1": {"tensorrt": "10.13.3.9-1+cuda13.0"}, "thor-2": {}, "thor-3": {}})
    assert str(caught.value).startswith("tensorrt version (dpkg) differs on thor-2, thor-3: expected "
                                        "10.13.3.9-1+cuda13.0 (on most nodes), found not installed on thor-2, "
                                        "not installed on thor-3.")


def test_a_pinned_package_installed_nowhere_fails():
    pinned = parse_inventory((EXAMPLES / "thor5.toml").read_text().replace(
        "[expect]", '[expect]\ntensorrt_version = "10.13"', 1)).at(FINISHED)
    with pytest.raises(Failure, match=r"expected 10\.13 \(pinned in the inventory\), found not installed on thor-1"):
        package_check({n: {} for n in NODES}, pinned)


def gpu_check(banners):
    return test_versions.test_same_gpu_driver_and_cuda(None, THOR5, answers(banners))


def test_cuda_not_reported_on_any_node_is_not_verified():
    with pytest.raises(NotVerified, match=r"^every node: CUDA version \(nvidia-smi\) not verified: N/A on any of thor-1, "):
        gpu_check({n: NvidiaSmiBanner("580.00", None, ("NVIDIA Thor",)) for n in NODES})


def test_a_driver_mismatch_fails_though_no_node_reports_cuda():
    banners = {n: NvidiaSmiBanner("580.00", None, ("NVIDIA Thor",)) for n in NODES}
    banners["thor-3"] = NvidiaSmiBanner("575.00", None, ("NVIDIA Thor",))
    with pytest.raises(Failure, match=r"^GPU driver \(nvidia-smi\) differs on thor-3"):
        gpu_check(banners)


# --- MTU -----------------------------------------------------------------------------------------

def test_mtu_with_no_node_holding_its_cluster_interface_is_not_verified():
    network = [host(n) for n in THOR5.nodes]
    with pytest.raises(NotVerified, match=r"^the cluster network: MTU of the cluster interfaces not verified: no node has its cluster "
                                          r"interface \(thor-1 bond0, "):
        test_addressing.test_mtu_is_the_same_on_every_cluster_interface(network, THOR5,
                                                                        answers({n.name: {} for n in network}))


def test_mtu_with_one_node_missing_its_interface_fails_naming_it():
    network = [host(n) for n in THOR5.nodes]
    interfaces = {h.name: {"bond0": Interface("bond0", "UP", 1500, None, (Address("inet", h.spec.ip, 24),))}
                  for h in network}
    interfaces["thor-4"] = {}
    with pytest.raises(Failure, match="thor-4 bond0: no such interface"):
        test_addressing.test_mtu_is_the_same_on_every_cluster_interface(network, THOR5, answers(interfaces))


# --- CX7 pings -----------------------------------------------------------------------------------

def ping(target, received=3):
    return PingResult(target, 3, received, 0.0 if received else 100.0, *((0.1,) * 4 if received else (None,) * 4))


def cx7(inventory=SPARK2, node="spark-1"):
    spec = inventory.node(node)
    return Cx7Target(host(spec), spec.cx7[0])


def test_cx7_ping_with_no_peer_on_its_subnet_is_not_verified():
    alone = parse_inventory((EXAMPLES / "spark2.toml").read_text().split("[[nodes]]\nname = \"spark-2\"")[0])
    with pytest.raises(NotVerified, match="no other node has a CX7 interface on the subnet of 192.168.100.10/24"):
        test_cx7.test_cx7_ping_on_its_subnet(cx7(alone), alone, measure_nothing, answers({}))


def test_cx7_ping_without_a_reply_for_a_peer_is_never_a_pass():
    with pytest.raises(NotVerified, match=r"-> spark-2 enp1s0f1np1 \(192.168.100.11\): ping on its CX7 subnet not "
                                          "verified: no ping of it was made"):
        test_cx7.test_cx7_ping_on_its_subnet(cx7(), SPARK2, lambda *a: None, answers({"192.168.100.99": ping("x")}))


def test_cx7_ping_judges_every_peer_not_the_first_of_them():
    """Two peers on the subnet: the second's loss fails, whatever order the answers came in."""
    three = parse_inventory((EXAMPLES / "spark2.toml").read_text() + """
[[nodes]]
name = "spark-3"
cx7 = [
    { name = "enp1s0f1np1", rdma_device = "rocep1s0f1", address = "192.168.100.12/24" },
    { name = "enP2p1s0f1np1", rdma_device = "roceP2p1s0f1", address = "192.168.101.12/24" },
]
""")
    replies = {"192.168.100.12": ping("192.168.100.12", received=0), "192.168.100.11": ping("192.168.100.11")}
    with pytest.raises(Failure, match=r"-> spark-3 enp1s0f1np1 \(192.168.100.12\): 100% loss"):
        test_cx7.test_cx7_ping_on_its_subnet(cx7(three), three, lambda *a: None, answers(replies))


# --- the agent's --listen ------------------------------------------------------------------------

def test_an_agent_without_listen_is_judged_at_its_default_address():
    inventory = parse_inventory((EXAMPLES / "thor5.toml").read_text().replace(
        'listen = "127.0.0.1:8080"', 'listen = "10.10.0.11:8080"', 1)).at(FINISHED)
    wanted = tuple((e.model, f"{inventory.engine_flag_host(e)}:{e.port}") for e in inventory.engines if e.agent)
    process = AgentCommand(4242, "thor-tigress-agent ...", None, wanted)
    with pytest.raises(Failure, match=r"--listen: expected 10\.10\.0\.11:8080, found none given, so its default "
                                      r"127\.0\.0\.1:8080"):
        test_agent.test_agent_routes_exactly_the_inventory_engines(host(inventory.node("thor-1")), inventory,
                                                                   answers(process))
    # the inventory's default is the agent's own: no --listen is that address
    test_agent.test_agent_routes_exactly_the_inventory_engines(host(THOR5.node("thor-1")), THOR5, answers(process))
