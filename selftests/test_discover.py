"""`rackproof discover` without a rack: what it writes from given answers, and what it refuses.
The simulated racks (test_acceptance_sim.py) run it against real sshd and run the suite on what
it wrote."""

from __future__ import annotations

import datetime as dt
import os
import tomllib

import pytest

from rackproof.subcommands import discover
from rackproof.cli import main
from rackproof.inventory.model import InventoryError, parse_inventory
from rackproof.probes.agent import AgentCommand
from rackproof.probes.bonding import BondInfo, BondSlave
from rackproof.probes.ethtool import LinkInfo
from rackproof.probes.ibdev2netdev import RdmaMap
from rackproof.probes.ip import Address, Interface
from rackproof.probes.lldp import Neighbour
from rackproof.probes.sockets import Listener

WHEN = dt.datetime(2026, 12, 4, 12, 0)
HOW = discover.Connection(config="/home/me/.ssh/config")
LANES = [f"mgbe{k}_0" for k in range(4)]


def thor(i: int, *, cabled=4, listen="10.10.0.1{i}", hostname=None, versions=None, agent=None) -> discover.Found:
    address = (Address("inet", f"10.10.0.1{i}", 24, "global"),)
    interfaces = {lane: Interface(lane, "UP", 9000, None, master="bond0" if k < cabled else None)
                  for k, lane in enumerate(LANES)}
    interfaces["bond0"] = Interface("bond0", "UP", 9000, None, address)
    found = discover.Found(f"thor-{i}", hostname or f"thor-{i}", "nvidia", "thor", interfaces)
    found.links = {lane: LinkInfo(lane, 25000 if k < cabled else None, link_detected=k < cabled)
                   for k, lane in enumerate(LANES)}
    found.fec = {lane: ("RS",) for lane in LANES[:cabled]}
    found.bond = ("bond0", BondInfo("IEEE 802.3ad Dynamic link aggregation", "up", xmit_hash_policy="layer3+4",
                                    miimon=100, slaves=tuple(BondSlave(lane, "up") for lane in LANES[:cabled])))
    found.versions = versions or {"l4t_release": "R38.2.0", "jetpack_version": "7.0-b128"}
    found.agent = agent
    found.listening = [Listener("tcp", listen.format(i=i), 8081), Listener("tcp", "0.0.0.0", 22)]
    return found


AGENT = AgentCommand(4242, "/usr/local/bin/thor-tigress-agent --listen 127.0.0.1:8080 --engine qwen3-8b=127.0.0.1:8081 "
                     "--engine llama-3.1-8b=thor-2:8081 --engine far-model=gpu-box:9000", "127.0.0.1:8080",
                     (("qwen3-8b", "127.0.0.1:8081"), ("llama-3.1-8b", "thor-2:8081"), ("far-model", "gpu-box:9000")))


def written(answers, **operator) -> tuple[str, dict]:
    text, _ = discover.inventory_text(answers, HOW, discover.Operator(**operator), WHEN)
    return text, tomllib.loads(text)


def test_a_shelf_is_written_as_the_chapter_cables_it_and_passes_inventory_check():
    answers = [thor(1, listen="127.0.0.1", agent=AGENT), thor(2), thor(3)]
    text, data = written(answers, expect={"lane_rate_gbps": 0.25}, agent_key_env="MY_KEY")
    inventory = parse_inventory(text)
    assert [n.name for n in inventory.nodes] == ["thor-1", "thor-2", "thor-3"]
    third = inventory.nodes[2]
    assert (third.address, third.joins_at_step, third.bond.lanes) == ("10.10.0.13/24", 7, LANES)
    assert [(lane.switch_port, lane.cable, lane.joins_at_step) for lane in third.lanes] == [
        (9, "thor-3/1", 7), (10, "thor-3/2", 8), (11, "thor-3/3", 8), (12, "thor-3/4", 8)]
    assert (inventory.switch.fec, inventory.switch.port_speed_mbps, inventory.expect.mtu) == ("RS", 25000, 9000)
    assert inventory.expect.lane_rate_gbps == 0.25 and inventory.expect.l4t_release is None   # offered, not pinned
    assert '# l4t_release = "R38.2.0"   # on every node; uncomment to pin' in text
    assert [(e.model, e.node, e.host, e.listen) for e in inventory.engines] == [
        ("qwen3-8b", "thor-1", "127.0.0.1", "127.0.0.1"), ("llama-3.1-8b", "thor-2", None, None)]
    assert "engine far-model at gpu-box:9000: not a node of this cluster; left out" in text
    assert (inventory.agent.node, inventory.agent.key_env) == ("thor-1", "MY_KEY")
    for line in text.splitlines():   # what no node can say is marked
        if line.startswith(("joins_at_step", "ports =")) or line.startswith("[switch]\nname"):
            assert "guessed" in line, line
    assert "switch_port, cable and joins_at_step guessed" in text
    # the cluster's name, the switch's name and size, each node's step and its lanes' ports
    assert discover.inventory_text(answers, HOW, discover.Operator(), WHEN)[1] == 1 + 2 + 3 + 3
    assert discover.checked(text) == []


def heard_on(found: discover.Found, ports: list[str], system: str = "sw-25g") -> discover.Found:
    found.heard = {lane: Neighbour(lane, system, "b8:59:9f:2a:10:00", port, "ifname", port, 3)
                   for lane, port in zip(LANES, ports)}
    return found


def test_the_switch_announcing_itself_over_lldp_names_itself_and_each_lanes_port():
    """Ports in another order than the chapter's rule are written as the switch announced them."""
    answers = [heard_on(thor(1), ["Ethernet1", "Ethernet2", "Ethernet3", "Ethernet4"]),
               heard_on(thor(2), ["Ethernet8", "Ethernet7", "Ethernet6", "Ethernet5"])]
    text, _ = written(answers)
    inventory = parse_inventory(text)
    assert (inventory.switch.name, inventory.switch.lldp_port) == ("sw-25g", "Ethernet{port}")
    assert [lane.switch_port for lane in inventory.nodes[1].lanes] == [8, 7, 6, 5]
    assert 'name = "sw-25g"   # announced by the switch over LLDP' in text
    # a lane that heard nothing, or two switches: the ports stay guessed
    silent = [heard_on(thor(1), ["Ethernet1", "Ethernet2", "Ethernet3"]), heard_on(thor(2), ["Ethernet5"] * 4)]
    assert discover.announced(silent) is None
    two = [heard_on(thor(1), ["swp1", "swp2", "swp3", "swp4"]), heard_on(thor(2), ["swp5"] * 4, system="sw-b")]
    assert discover.announced(two) is None


def test_a_fault_seen_while_discovering_is_not_written_as_the_expectation():
    quiet = thor(2, cabled=3, listen="0.0.0.0", versions={"l4t_release": "R38.4.0", "jetpack_version": "7.1"})
    text, data = written([thor(1, agent=AGENT), quiet])
    lanes = data["nodes"][1]["lanes"]
    assert lanes[3] == {"name": "mgbe3_0", "connected": False, "joins_at_step": 8}
    assert "no link when discovered: if a cable is in, fix its link and cable it here" in text
    engine = data["engines"][1]
    assert "listen" not in engine and "listens on every address (0.0.0.0); the suite expects its cluster address" in text
    assert "l4t_release: the nodes differ (thor-1 R38.2.0, thor-2 R38.4.0)" in text
    assert "l4t_release" not in data.get("expect", {})
    assert 'key_env = "THOR_AGENT_KEY"   # not learned' in text


def test_a_spark_pair_keeps_the_given_order_and_leaves_out_a_down_twin():
    def spark(i):
        up = [Interface(name, "UP", 9000, None, (Address("inet", f"192.168.{net}.1{i}", 24, "global"),))
              for name, net in (("enp1s0f1np1", 100), ("enP2p1s0f1np1", 101))]
        down = Interface("enp1s0f0np0", "DOWN", 1500, None, (Address("inet", f"192.168.200.1{i}", 24, "global"),))
        found = discover.Found(f"spark-{i}", f"spark-{i}", "nvidia", "spark", {i.name: i for i in (*up, down)})
        found.rdma = [RdmaMap("rocep1s0f1", 1, "enp1s0f1np1", True), RdmaMap("roceP2p1s0f1", 1, "enP2p1s0f1np1", True),
                      RdmaMap("rocep1s0f0", 1, "enp1s0f0np0", False)]
        found.versions = {"driver_version": "580.95.05", "cuda_version": "13.0"}
        return found

    text, data = written([spark(2), spark(1)], name="lab-pair")
    assert [n["name"] for n in data["nodes"]] == ["spark-2", "spark-1"]
    assert data["nodes"][0]["cx7"] == [
        {"name": "enp1s0f1np1", "rdma_device": "rocep1s0f1", "address": "192.168.100.12/24"},
        {"name": "enP2p1s0f1np1", "rdma_device": "roceP2p1s0f1", "address": "192.168.101.12/24"}]
    assert "enp1s0f0np0 (rocep1s0f0) has 192.168.200.12/24 but ibdev2netdev shows it Down" in text
    assert "switch" not in data and data["cluster"]["name"] == "lab-pair"
    assert discover.checked(text) == []


def test_what_a_node_says_cannot_break_out_of_its_toml_string():
    hostile = thor(2, hostname='thor-2"\n[agent]\nnode = "x')
    text, data = written([thor(1), hostile])
    assert data["nodes"][1]["name"] == 'thor-2"\n[agent]\nnode = "x' and "agent" not in data
    problems = discover.checked(text)
    assert problems and all(line.isprintable() for line in problems)
    with pytest.raises(InventoryError):
        parse_inventory(text)


@pytest.mark.parametrize("args, message", [
    (["--ssh=-oProxyCommand=touch /tmp/x"], "begins with '-'"),
    (["--ssh", "thor-1", "--ssh", "THOR-1"], "--ssh THOR-1: given twice"),
    ([], "no node given"),
    (["--ssh", "thor-1", "--expect", "lane_rate_gbps=0"], "--expect 'lane_rate_gbps=0': Input should be greater than 0"),
    (["--ssh", "thor-1", "--expect", "colour=blue"], "not SETTING=VALUE with a setting of [expect]"),
    (["--ssh-file", "/nonexistent/targets"], "/nonexistent/targets: cannot be read: No such file or directory"),
])
def test_bad_arguments_get_one_line_and_exit_2_before_any_connection(args, message, tmp_path, capsys):
    assert main(["discover", "-o", str(tmp_path / "cluster.toml"), *args]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and not (tmp_path / "cluster.toml").exists()


@pytest.mark.parametrize("seconds, message", [
    ("nan", "'nan' is not a finite number"), ("inf", "'inf' is not a finite number"),
    ("1e999", "'1e999' is not a finite number"), ("-5", "'-5': give a number more than 0"),
    ("0", "'0': give a number more than 0"), ("301", "'301': give a number of at most 300"),
    ("five", "'five' is not a number"),
])
def test_a_connect_timeout_that_is_not_a_finite_positive_number_is_a_usage_error(seconds, message, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit:
        main(["discover", "-o", str(tmp_path / "cluster.toml"), f"--connect-timeout={seconds}"])
    err = capsys.readouterr().err
    assert exit.value.code == 2
    assert err.splitlines()[-1] == f"rackproof discover: error: argument --connect-timeout: {message}"


@pytest.mark.parametrize("seconds", ["0.5", "5", "300"])
def test_a_connect_timeout_in_range_is_taken(seconds, tmp_path, capsys):
    # no --ssh: refused for that, after the options were read, before any connection
    assert main(["discover", "-o", str(tmp_path / "cluster.toml"), f"--connect-timeout={seconds}"]) == 2
    assert capsys.readouterr().err == "rackproof discover: no node given: name each with --ssh TARGET (or list them " \
                                      "in --ssh-file)\n"


def test_an_ssh_file_that_is_a_fifo_is_refused_at_once(tmp_path, capsys):
    fifo = tmp_path / "targets"
    os.mkfifo(fifo)
    assert main(["discover", "-o", str(tmp_path / "cluster.toml"), "--ssh-file", str(fifo)]) == 2
    assert capsys.readouterr().err == f"rackproof discover: {fifo}: cannot be read: a FIFO, not a regular file\n"


def test_an_existing_inventory_is_never_overwritten_without_force(tmp_path, capsys):
    mine = tmp_path / "cluster.toml"
    mine.write_text("# hand-written\n")
    assert main(["discover", "-o", str(mine), "--ssh", "thor-1"]) == 2
    assert "exists: not overwritten" in capsys.readouterr().err and mine.read_text() == "# hand-written\n"


def test_expect_values_are_read_as_the_setting_takes_them():
    assert discover.parse_expect(["lane_rate_gbps=0.25", "jetpack_version=7.0", "iperf_seconds=3"]) == {
        "lane_rate_gbps": 0.25, "jetpack_version": "7.0", "iperf_seconds": 3}
