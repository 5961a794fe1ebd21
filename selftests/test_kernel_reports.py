"""rackproof.judging.kernelreports: a node's kernel log as the plan reads it (the window, its cluster
interfaces, the inventory's allowlist) and as the check test_kernel_log_clean judges it (each line
quoted, safely).

The journals are the simulator's (rackproof_sim: a node's boot noise and the lines its faults
plant, in the drivers' words of the real samples; selftests/test_probe_kernellog.py holds the
parser to those samples)."""

from types import SimpleNamespace

import pytest

from rackproof.judging import kernelreports
from rackproof.judging.failure import Failure
from rackproof.inventory.model import Expect, InventoryError, Node
from rackproof.probes.kernellog import MAX_LINES, parse_kernel_log
from rackproof_sim.formats.kernellog import render_journal
from rackproof_sim.standins.kernellog import entries
from selftests.test_references import with_expect

NOW = 1765100000.0
THOR = {"node": "thor-1", "platform": "thor", "interfaces": {"mgbe0_0": {"kind": "lane"}, "enP7s7": {"kind": "mgmt"}}}
SPARK = {"node": "spark-1", "platform": "spark", "interfaces": {
    "enp1s0f0np0": {"kind": "cx7", "rdma_device": "rocep1s0f0"}, "enP2p1s0f0np0": {"kind": "cx7",
                                                                                 "rdma_device": "roceP2p1s0f0"}}}
THOR_NODE = Node(name="thor-1", lanes=[{"name": "mgbe0_0", "switch_port": 1}])
SPARK_NODE = Node(name="spark-1", cx7=[{"name": "enp1s0f0np0", "rdma_device": "rocep1s0f0", "address": "10.0.0.1/24"},
                                       {"name": "enP2p1s0f0np0", "rdma_device": "roceP2p1s0f0",
                                        "address": "10.0.1.1/24"}])


class FakeNode:
    """What the plan's reading asks of a node: its spec, and the probe's answer."""

    def __init__(self, spec: Node, text: str):
        self.spec, self.text = spec, text

    def read(self, probe):
        return probe.parse(self.text, {})


def read(model: dict, spec: Node, planted=(), *, booted: float = NOW - 600, **expect) -> kernelreports.KernelReports:
    journal = render_journal(NOW, model["node"], entries({**model, "kernel_log": list(planted)}, booted))
    ctx = SimpleNamespace(cluster=SimpleNamespace(expect=Expect(**expect)))
    return kernelreports.read(FakeNode(spec, journal), ctx)


def planted(*texts: str, at: float = NOW - 60) -> list[dict]:
    return [{"at": at + k, "source": "kernel", "text": text} for k, text in enumerate(texts)]


@pytest.mark.parametrize("model, spec", [(THOR, THOR_NODE), (SPARK, SPARK_NODE)], ids=["thor", "spark"])
def test_a_healthy_boot_in_the_window_passes(model, spec):
    found = read(model, spec)
    assert found.reported == () and found.whole and found.lines_read >= 6
    kernelreports.judge(spec.name, found)


def test_an_xid_fails_quoting_the_line_with_its_meaning():
    xid = "NVRM: Xid (PCI:000f:01:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."
    with pytest.raises(Failure) as e:
        kernelreports.judge("spark-1", read(SPARK, SPARK_NODE, planted(xid)))
    text = str(e.value)
    assert "spark-1" in text and "1 line(s): Xid" in text and "GPU has fallen off the bus." in text
    assert "[Xid] Xid 79 (GPU has fallen off the bus) on 000f:01:00: 2025-12-07T09:32:20+00:00 kernel: " \
           + xid in text
    assert "power, heat or the PCIe link" in text


def test_a_link_flap_counts_on_a_cluster_interface_only():
    flap = ["mlx5_core 0000:01:00.0 enp1s0f0np0: Link down", "mlx5_core 0000:01:00.0 enp1s0f0np0: Link up"]
    assert [r.meaning for r in read(SPARK, SPARK_NODE, planted(*flap)).reported] == ["enp1s0f0np0 went down"]
    other = [line.replace("enp1s0f0np0", "enP7s7") for line in flap]
    assert read(SPARK, SPARK_NODE, planted(*other)).reported == ()


def test_the_window_leaves_out_what_came_before_it():
    aer = "pcieport 0000:00:00.0: AER: Uncorrectable (Fatal) error message received from 0000:01:00.0"
    old = planted(aer, at=NOW - 3 * 3600)
    assert [r.kind for r in read(SPARK, SPARK_NODE, old).reported] == ["AER fatal"]
    assert read(SPARK, SPARK_NODE, old, kernel_log_window_hours=2.0).reported == ()


def test_the_allowlist_takes_out_what_it_matches():
    aer = "pcieport 0000:00:01.0: AER: Corrected error received: 0000:01:00.0"
    assert read(THOR, THOR_NODE, planted(aer), kernel_log_allow=[r"AER: Corrected error received"]).reported == ()
    assert len(read(THOR, THOR_NODE, planted(aer), kernel_log_allow=[r"AER: Uncorrect"]).reported) == 1


def test_the_allowlist_is_checked_when_the_inventory_loads():
    assert with_expect("kernel_log_allow = ['AER: Corrected']").kernel_log_allow == ["AER: Corrected"]
    with pytest.raises(InventoryError) as e:
        with_expect("kernel_log_allow = ['AER: (unclosed']")
    assert "not a regular expression" in str(e.value)


def test_node_text_is_quoted_safely():
    hostile = "NVRM: Xid (PCI:0000:01:00): 13, \x1b[2J\x1b[31mforged\u202e" + "x" * 5000
    with pytest.raises(Failure) as e:
        kernelreports.judge("thor-1", read(THOR, THOR_NODE, planted(hostile)))
    text = str(e.value)
    assert "\x1b" not in text and "\u202e" not in text and "\\x1b[2J" in text and "x" * 400 not in text


def test_a_window_not_read_whole_is_never_a_pass():
    flood = planted(*["usb 1-1: reset high-speed USB device number 2 using xhci_hcd"] * MAX_LINES, at=NOW - 1800)
    found = read(THOR, THOR_NODE, flood)
    assert not found.whole and found.reported == ()
    with pytest.raises(Failure, match=f"the newest {MAX_LINES} do not reach back"):
        kernelreports.judge("thor-1", found)


def test_the_probe_reads_through_sudo_only_where_the_login_cannot_read_the_journal():
    from rackproof.probes.kernellog import KERNEL_LOG
    assert KERNEL_LOG.root == "where the login cannot read"
    assert parse_kernel_log(render_journal(NOW, "thor-1", [])).lines == ()


def test_rackproof_sudoers_writes_one_exact_line_for_a_login_outside_the_journal_s_groups():
    from pathlib import Path

    from rackproof.inventory.model import FINISHED, ClusterAtStep, load_inventory
    from rackproof.nodes.prerequisites import root_commands, sudoers_line
    from rackproof.subcommands.sudoers import visudo_problem
    inventory = load_inventory(Path(__file__).parents[1] / "examples" / "spark2.toml")
    cluster = ClusterAtStep(inventory, FINISHED)
    (root,) = [r for r in root_commands(cluster, inventory.nodes[0], False) if r.probe == "kernel log"]
    line = sudoers_line("nvidia", root, "/usr/bin/journalctl")
    assert not root.required and line == (
        r"nvidia ALL=(root) NOPASSWD: /usr/bin/journalctl --no-pager --output\=short-iso --lines\=20000 "
        r"_TRANSPORT\=kernel + SYSLOG_IDENTIFIER\=systemd-journald")
    assert visudo_problem(line + "\n") is None
