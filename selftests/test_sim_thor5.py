"""The simulated thor5 rack (rackproof_sim): it comes up fast, the controller reaches every node
over real SSH, names resolve, lanes are shaped, the agent routes, and
every fault kind changes what the real tools show on the node, and heal restores it.

Needs root (namespaces, mounts, sshd); one rack for the whole module, always taken down.
"""

from __future__ import annotations

import json
import shlex

import pytest

from rackproof.inventory.model import load_inventory
from rackproof_sim.netns import has_default_route
from rackproof_sim.profiles import thor5

from selftests.simrack import SimRack, rack_marks

pytestmark = rack_marks()

NODES = [f"thor-{i}" for i in range(1, 6)]
LANE_MBIT = 25000 * thor5().scale


@pytest.fixture(scope="module")
def rack():
    with SimRack("thor5") as r:
        yield r


def test_up_in_under_15_seconds(rack):
    assert rack.rack.record["up_seconds"] < 15


def test_generated_inventory_validates_and_states_the_scale(rack):
    inv = load_inventory(rack.inventory)
    assert inv.expect.lane_rate_gbps == 25 * thor5().scale
    assert [n.name for n in inv.nodes] == NODES
    assert inv.ssh.config == str(rack.state.ssh_config)
    assert inv.agent.key_file == str(rack.state.agent_key)
    assert [(e.model, e.node) for e in inv.engines] == [
        ("qwen3-8b", "thor-1"), ("llama-3.1-8b", "thor-2"), ("gemma-3-12b", "thor-3")]
    assert {n.lane("mgbe3_0").switch_port for n in inv.nodes} == {4, 8, 12, 16, 20}


def test_no_namespace_of_the_rack_has_a_way_out(rack):
    for ns in rack.rack.topo.namespaces():
        assert not has_default_route(ns), ns
    assert rack.bench("ip route show default").stdout == ""


@pytest.mark.parametrize("node", NODES)
def test_controller_logs_in_with_the_generated_key_and_hostname_answers(rack, node):
    assert rack.out(node, "hostname; id -un").split() == [node, "nvidia"]


@pytest.mark.parametrize("node", NODES)
def test_every_node_resolves_thor4_to_its_cluster_address(rack, node):
    assert rack.out(node, "getent hosts thor-4").split() == ["10.10.0.14", "thor-4"]


def test_nodes_reach_each_other_by_name_without_a_password(rack):
    assert rack.out("thor-1", "ssh -o BatchMode=yes thor-2 hostname").strip() == "thor-2"
    assert rack.out("thor-5", "ssh -o BatchMode=yes thor-3 hostname").strip() == "thor-3"


def test_a_node_sees_its_own_processes_and_release(rack):
    ps1 = rack.out("thor-1", "ps -eo args")
    ps2 = rack.out("thor-2", "ps -eo args")
    assert "thor-tigress-agent --listen 127.0.0.1:8080 --engine qwen3-8b=127.0.0.1:8081 " \
           "--engine llama-3.1-8b=thor-2:8081 --engine gemma-3-12b=thor-3:8081" in ps1
    assert "thor-tigress-agent" not in ps2
    assert rack.out("thor-3", "head -1 /etc/nv_tegra_release").startswith("# R38 (release), REVISION: 2.0,")
    assert rack.out("thor-3", "nvpmodel -q") == "NV Power Mode: MAXN\n0\n"
    assert "NVIDIA Thor" in rack.out("thor-3", "nvidia-smi")


def test_a_served_tool_answers_as_its_own_process_would(rack):
    """The read-only tools answer from the node's stand-in server: output on the caller's own
    stdout (a pipe here), errors on its stderr, the tool's exit status; under sudo too."""
    assert rack.out("thor-2", "ethtool mgbe1_0 | head -1") == "Settings for mgbe1_0:\n"
    missing = rack.ssh("thor-2", "ethtool nosuch0")
    assert (missing.returncode, missing.stdout) == (1, "")
    assert missing.stderr.startswith("netlink error: no device matches name")
    assert rack.out("thor-2", "LC_ALL=C ethtool --show-fec mgbe0_0").splitlines()[-1] == "Active FEC encoding: RS"
    # a Thor (JetPack 7) starts with its SOC family, as the real capture in samples/ does
    assert rack.out("thor-2", "sudo -n jetson_clocks --show | head -1").startswith(
        "SOC family:tegra264  Machine:NVIDIA Jetson AGX Thor")


def test_the_stand_in_server_runs_nothing_but_the_served_tools_for_another_account(rack):
    """A local account that talks to the server itself gets nothing more than the tools: a
    request without its descriptors, or for a tool the server does not serve, has no answer or
    status 127; the server goes on answering."""
    hostile = ("import _socket, sys\n"
               "def ask(payload, fds):\n"
               "    s = _socket.socket(_socket.AF_UNIX, _socket.SOCK_SEQPACKET)\n"
               "    s.connect('/run/rackproof-standins.sock')\n"
               "    anc = [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, b''.join(f.to_bytes(4, sys.byteorder) for f in fds))]\n"
               "    s.sendmsg([payload], anc if fds else [])\n"
               "    print(list(s.recv(1)))\n"
               "ask(b'sh\\0-c\\0id', (0, 1, 2))\n"
               "ask(b'ethtool\\0mgbe0_0', ())\n"
               "ask(b'ethtool\\0mgbe0_0', (0,))\n")
    result = rack.ssh("thor-3", f"python3 -c {shlex.quote(hostile)}")
    assert result.stdout.splitlines() == ["[127]", "[]", "[]"], result
    assert "'sh' is not a tool this node's stand-in server answers" in result.stderr
    assert rack.out("thor-3", "ethtool mgbe0_0 | head -1") == "Settings for mgbe0_0:\n"


def test_one_stream_runs_at_the_scaled_lane_rate(rack):
    mbit = rack.iperf("thor-1", "thor-2", "10.10.0.12")
    assert 0.9 * LANE_MBIT <= mbit <= 1.1 * LANE_MBIT, mbit


def test_the_bond_view_follows_an_admin_taking_a_lane_down(rack):
    view = "cat /proc/net/bonding/bond0"
    assert "Number of ports: 4" in rack.out("thor-5", view)
    rack.as_root("thor-5", "ip link set dev mgbe2_0 down")
    try:
        import time
        deadline = time.monotonic() + 3
        while "Number of ports: 3" not in rack.out("thor-5", view) and time.monotonic() < deadline:
            time.sleep(0.1)
        text = rack.out("thor-5", view)
        assert "Number of ports: 3" in text
        assert "Slave Interface: mgbe2_0\nMII Status: down\nSpeed: Unknown" in text
        assert "Link detected: no" in rack.out("thor-5", "ethtool mgbe2_0")
        assert rack.out("thor-5", "ping -c 1 -W 2 10.10.0.11").count("1 received") == 1
    finally:
        rack.as_root("thor-5", "ip link set dev mgbe2_0 up")
    deadline = time.monotonic() + 3
    while "Number of ports: 4" not in rack.out("thor-5", view) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert "Number of ports: 4" in rack.out("thor-5", view)


def test_the_agent_enforces_its_key_and_routes_each_model(rack):
    models = json.loads(rack.out("thor-1", f"curl -s -H 'Authorization: Bearer {rack.agent_key}' "
                                           "http://127.0.0.1:8080/v1/models"))
    assert [m["id"] for m in models["data"]] == ["qwen3-8b", "llama-3.1-8b", "gemma-3-12b"]
    assert rack.out("thor-1", "curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:8080/v1/models") == "401"
    assert rack.chat("llama-3.1-8b", key="wrong")[0] == "401"
    for model in ("qwen3-8b", "llama-3.1-8b", "gemma-3-12b"):
        status, seconds = rack.chat(model)
        assert status == "200", model
    stream = rack.out("thor-1", f"curl -sN -H 'Authorization: Bearer {rack.agent_key}' "
                                "-d '{\"model\": \"gemma-3-12b\", \"stream\": true, \"max_tokens\": 3}' "
                                "http://127.0.0.1:8080/v1/chat/completions")
    events = [line for line in stream.splitlines() if line.startswith("data: ")]
    assert events[-1] == "data: [DONE]" and len(events) == 1 + 3 + 1 + 1
    assert rack.out("thor-2", "curl -s -o /dev/null -w '%{http_code}' http://10.10.0.12:8081/health") == "200"


# --- every fault changes what the real tools show, and heal restores it -----------------------

def _ssh_result(rack, src: str, dst: str) -> str:
    r = rack.ssh(src, f"ssh -o BatchMode=yes -o ConnectTimeout=3 {dst} hostname")
    return r.stdout.strip() if r.returncode == 0 else f"exit {r.returncode}: {r.stderr.strip()}"


def _controller(rack, node: str) -> str:
    r = rack.ssh(node, "hostname", timeout=20, connect_timeout=2)
    return r.stdout.strip() if r.returncode == 0 else f"exit {r.returncode}: {r.stderr.strip()}"


FAULTS = {
    # kind: (node, args, probe(rack) -> what the node shows, check(healthy, faulty) -> ok)
    "lane-down": ("thor-2", ["mgbe0_0"], lambda r: r.out("thor-2", "ethtool mgbe0_0"),
                  lambda ok, bad: "Link detected: yes" in ok and "Link detected: no" in bad
                  and "Speed: Unknown!" in bad),
    "port-at-10G": ("thor-3", ["mgbe2_0"], lambda r: r.out("thor-3", "ethtool mgbe2_0 | grep Speed; "
                                                                     "cat /proc/net/bonding/bond0 | grep -A2 'Interface: mgbe2_0'"),
                    lambda ok, bad: "25000Mb/s" in ok and "10000Mb/s" in bad and "Speed: 10000 Mbps" in bad),
    "fec-mismatch": ("thor-4", [], lambda r: r.out("thor-4", "ethtool --show-fec mgbe0_0; ethtool mgbe0_0"),
                     lambda ok, bad: "Active FEC encoding: RS" in ok and "Active FEC encoding: BaseR" in bad
                     and "Link detected: yes" in bad),
    "bond-lane-down": ("thor-5", ["mgbe1_0"], lambda r: r.out("thor-5", "cat /proc/net/bonding/bond0"),
                       lambda ok, bad: "Number of ports: 4" in ok and "Number of ports: 3" in bad
                       and "Slave Interface: mgbe1_0\nMII Status: down" in bad),
    "ssh-key-missing": ("thor-1", ["thor-2"], lambda r: _ssh_result(r, "thor-1", "thor-2"),
                        lambda ok, bad: ok == "thor-2" and "Permission denied (publickey)" in bad),
    "jetpack-mismatch": ("thor-5", [], lambda r: r.out("thor-5", "head -1 /etc/nv_tegra_release; "
                                                                 "dpkg-query -W nvidia-jetpack tensorrt"),
                         lambda ok, bad: "REVISION: 2.0" in ok and "REVISION: 4.0" in bad
                         and "nvidia-jetpack\t7.1" in bad),
    "engine-down": ("thor-2", [], lambda r: r.out("thor-2", "ss -ltn") + r.chat("llama-3.1-8b")[0],
                    lambda ok, bad: "10.10.0.12:8081" in ok and ok.endswith("200")
                    and "8081" not in bad and bad.endswith("502")),
    "engine-on-loopback": ("thor-3", [], lambda r: r.out("thor-3", "ss -ltn") + r.chat("gemma-3-12b")[0],
                           lambda ok, bad: "10.10.0.13:8081" in ok and "127.0.0.1:8081" in bad
                           and "10.10.0.13:8081" not in bad and bad.endswith("502")),
    "slow-engine": ("thor-2", [], lambda r: r.chat("llama-3.1-8b", tokens=8)[1],
                    lambda ok, bad: bad > 2.5 * ok),
    "node-unreachable": ("thor-4", [], lambda r: _controller(r, "thor-4"),
                         lambda ok, bad: ok == "thor-4" and bad.startswith("exit 255")),
    "ssh-hang": ("thor-5", [], lambda r: _controller(r, "thor-5"),
                 lambda ok, bad: ok == "thor-5" and "banner exchange" in bad),
}


@pytest.mark.parametrize("kind", list(FAULTS))
def test_fault_changes_what_the_node_shows_and_heal_restores_it(rack, kind):
    node, args, probe, check = FAULTS[kind]
    healthy = probe(rack)
    rack.fault(node, kind, *args)
    try:
        faulty = probe(rack)
    finally:
        rack.heal(node, kind)
    healed = probe(rack)
    assert check(healthy, faulty), (healthy, faulty)
    if isinstance(healthy, float):
        assert healed < 1.5 * healthy
    else:
        assert check(healed, faulty), (healed, faulty)
    assert rack.rack.state.load()["faults"] == []


def test_a_fault_cannot_be_planted_twice_and_heal_all_heals_everything(rack):
    from rackproof_sim.faults import heal_all
    from rackproof_sim.util import SimError
    rack.fault("thor-2", "fec-mismatch", "mgbe1_0")
    with pytest.raises(SimError, match="already planted"):
        rack.fault("thor-2", "fec-mismatch", "mgbe1_0")
    rack.fault("thor-3", "slow-engine")
    assert len(heal_all(rack.rack)) == 2
    assert "Active FEC encoding: RS" in rack.out("thor-2", "ethtool --show-fec mgbe1_0")
    with pytest.raises(SimError, match="no fault kind"):
        rack.fault("thor-2", "cable-chewed")
