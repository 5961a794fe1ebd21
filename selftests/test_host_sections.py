"""A batch of commands in one round trip is split into each command's part by marker lines that
carry a fresh random nonce: output of a node that looks like a marker (a file's lines, a hostname,
a marker seen in an earlier batch) never shifts a section. Run on this machine's own shell."""

import pytest

from rackproof.nodes.host import Host, ProbeFailed
from rackproof.inventory.model import load_inventory
from rackproof.probes.probe import IN_C_LOCALE, Command, Probe
from rackproof.nodes.remote import EvidenceLog, LocalTransport, Remote, Result
from selftests.suite import EXAMPLES

CAT = Probe("cat", "a file's text", "cat {path}", lambda text, path: text, ("path",))


@pytest.fixture
def host():
    node = load_inventory(EXAMPLES / "spark2.toml").node("spark-2")
    return Host(node, Remote("spark-2", LocalTransport("spark-2"), EvidenceLog()))


def test_a_marker_line_in_a_nodes_output_does_not_shift_a_section(host, tmp_path):
    first, second = tmp_path / "first", tmp_path / "second"
    # the first file forges markers: the old fixed form and one with a nonce of the right shape
    first.write_text(f"one\n### rackproof-section {second}\nforged\n"
                     f"### rackproof-section-0123456789abcdef {second}\nforged too\n")
    second.write_text("two\n")
    parts = host.read_each(CAT, [str(first), str(second)])
    assert parts == {str(first): first.read_text(), str(second): "two\n"}


def test_clients_at_once_keep_their_own_parts_whatever_they_print(host, tmp_path):
    forged = "### rackproof-section b\nforged\n"
    commands = {"a": Command(f"printf '%s' '{forged}'"), "b": Command("echo real")}
    parts = host.read_at_once(commands, lambda text, label: text, timeout=10)
    assert parts == {"a": forged, "b": "real\n"}


def test_each_batch_has_a_nonce_of_its_own(host, tmp_path):
    (tmp_path / "f").write_text("x\n")
    with host.remote.log.captured() as evidence:
        host.read_each(CAT, [str(tmp_path / "f")])
        host.read_each(CAT, [str(tmp_path / "f")])
    markers = [e.command.removeprefix(IN_C_LOCALE).split(";")[0] for e in evidence]
    assert len(markers) == 2 and markers[0] != markers[1] and all("rackproof-section-" in m for m in markers)


class Asked:
    """A transport that answers every command with nothing and notes whether it may run it again."""

    def __init__(self):
        self.repeatable: list[bool] = []

    def execute(self, command: str, timeout: float, repeatable: bool = False) -> Result:
        self.repeatable.append(repeatable)
        return Result(command, 0, "", "", 0.01)

    def close(self) -> None:
        pass


def test_pings_at_once_run_again_after_a_dropped_connection_and_clients_of_a_load_never():
    """Pings only read: a connection that drops under them is made again and they run again. The
    clients of a throughput measurement load a link: never run twice."""
    node = load_inventory(EXAMPLES / "spark2.toml").node("spark-2")
    transport = Asked()
    host = Host(node, Remote("spark-2", transport, EvidenceLog()))
    with pytest.raises(ProbeFailed):      # nothing came back: no ping result to read
        host.ping(["10.10.0.1"])
    with pytest.raises(ProbeFailed):
        host.path_mtu(["10.10.0.1"], 9000)
    assert host.read_at_once({"c": Command("iperf3 -c 10.10.0.1")}, lambda text, label: text, timeout=10) == {"c": ""}
    assert transport.repeatable == [True, True, False]
