"""A measurement's server that does not start says why: what it printed on stderr and its exit
status are the start's evidence (a broken iperf3 said only "could not start a server listening on
port 5261 (no output)"); and a server whose process is never seen is never noted under the pid of
`timeout` around it. Real servers on this machine's loopback, through the product's start."""

import sys

import pytest

from rackproof.measuring import traffic
from rackproof.nodes.host import Host, ProbeFailed
from rackproof.inventory.model import load_inventory
from rackproof.nodes.ownservers import OwnServers
from rackproof.probes.probe import Command
from rackproof.nodes.remote import EvidenceLog, LocalTransport, Remote, Result
from selftests.suite import EXAMPLES
from selftests.test_causes import Scripted
from selftests.test_traffic_servers import free_ports, listener

# what the loader prints for a broken iperf3 (selftests/samples/survey_local_debian12_broken_iperf3.txt)
LOADER = "iperf3: error while loading shared libraries: /lib/x86_64-linux-gnu/libiperf.so.0: file too short"


def local_host() -> Host:
    node = load_inventory(EXAMPLES / "spark2.toml").node("spark-2")
    return Host(node, Remote("spark-2", LocalTransport("spark-2"), EvidenceLog()))


def test_a_server_that_dies_at_once_is_named_with_its_words_and_exit_status():
    broken = Command(f"sh -c 'echo \"{LOADER}\" >&2; exit 127'")
    with pytest.raises(ProbeFailed) as caught:
        with traffic.server(local_host(), lambda port: broken, lifetime=30, ports=free_ports(1)):
            pass
    assert "could not start a server listening on port" in str(caught.value)
    assert "(exit status 127)" in str(caught.value) and LOADER in str(caught.value)
    assert caught.value.result.exit_status == 127 and LOADER in caught.value.result.stderr


def test_a_server_that_starts_leaves_no_file_behind(tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))      # mktemp's folder: nothing may stay there
    host = local_host()
    with traffic.server(host, listener, lifetime=30, ports=free_ports(1)):
        pass
    with pytest.raises(ProbeFailed):
        with traffic.server(host, lambda port: Command("sh -c 'echo no >&2; exit 3'"), lifetime=30,
                            ports=free_ports(1)):
            pass
    assert list(tmp_path.iterdir()) == []


def test_a_server_whose_process_is_never_seen_is_not_noted_under_timeouts_pid():
    """ss listed the row without a process and timeout had no child to name: the start failed
    (another port is tried), never the pid of `timeout` (4242) noted as the listener."""
    servers = OwnServers(None)

    def answer(command):
        if "setsid timeout" in command:
            return Result(command, 0, "LISTEN 0      4096         *:5201       *:*\n4242\n", "", 0.01)
        return Result(command, 0, "", "", 0.01)
    node = load_inventory(EXAMPLES / "spark2.toml").node("spark-2")
    host = Host(node, Remote("spark-2", Scripted(answer), EvidenceLog()), servers)
    with pytest.raises(ProbeFailed, match="which process is not known"):
        with traffic.server(host, lambda port: f"iperf3 -s -1 -p {port}", lifetime=30, ports=[5201]):
            pass
    assert servers.on("spark-2") == frozenset()
