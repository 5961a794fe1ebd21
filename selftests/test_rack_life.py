"""The rack's own life (rackproof.nodes.racklife): a node that answers late is measured then, what was
measured before a node rebooted is never judged, the mesh asks a refusing peer again, and the
suite's own short-lived listeners (srun's) are never an open service."""

from __future__ import annotations

import re
import time

import pytest

from rackproof.judging import sharing

from rackproof.measuring import plan

from rackproof.nodes import portable, racklife
from rackproof.nodes.host import Host
from rackproof.inventory.model import FINISHED, load_inventory
from rackproof.probes import ParseError
from rackproof.probes.boot import BOOT_ID, parse_boot_id
from rackproof.probes.sockets import parse_ss_listen
from rackproof.nodes.remote import ConnectionLost, EvidenceLog, NodeUnreachable, Rebooted, Remote, Result
from rackproof.nodes.together import Part
from selftests.suite import EXAMPLES

THOR5 = load_inventory(EXAMPLES / "thor5.toml").at(FINISHED)
BOOT = BOOT_ID.command().line
OLD, NEW = "60d82e05-81bd-4432-b217-b88201f355e6", "0b7e2c44-9a5f-4d1e-8c3a-2f6d7e8a9b10"


def test_the_boot_id_parser_reads_the_kernels_line_and_nothing_else():
    from selftests.test_formats import SAMPLES
    text = (SAMPLES / "boot_id_local_debian12.txt").read_text()
    assert parse_boot_id(text) == text.strip()
    for garbage in ("", "thor-3\n", OLD + "\n" + NEW + "\n", OLD.upper()):
        with pytest.raises(ParseError):
            parse_boot_id(garbage)


class Node:
    """A node's transport: each fresh connection counted (as SshTransport's), its boot id and
    whether it answers set by the test."""

    def __init__(self, name: str):
        self.name, self.boot, self.down, self.fresh = name, OLD, False, True
        self.connects, self.connected_at = 0, 0.0

    def execute(self, command: str, timeout: float, repeatable: bool = False) -> Result:
        if self.down:
            raise NodeUnreachable(self.name, f"ssh to {self.name}: 1 connect attempt failed: refused")
        if self.fresh:
            self.fresh, self.connects, self.connected_at = False, self.connects + 1, time.time()
        return Result(command, 0, (self.boot if command == BOOT else self.name) + "\n", "", 0.01)

    def reboot(self) -> None:
        self.boot, self.fresh = NEW, True

    def close(self) -> None:
        pass


def hosts(log: EvidenceLog) -> tuple[dict[str, Host], dict[str, Node]]:
    nodes = {n.name: Node(n.name) for n in THOR5.nodes}
    return {n.name: Host(n, Remote(n.name, nodes[n.name], log, 5.0, boot_command=BOOT)) for n in THOR5.nodes}, nodes


def test_each_fresh_connection_reads_the_boot_id_and_a_new_one_is_a_reboot():
    log = EvidenceLog()
    log.sink = []
    host = hosts(log)[0]["thor-3"]
    node = host.remote.transport
    host.remote.run("hostname")
    host.remote.run("hostname")          # the same connection: not read again
    time.sleep(0.01)
    node.reboot()
    host.remote.run("hostname")
    assert [boot for boot, _ in host.remote.boots] == [OLD, NEW]
    assert [ev.command for ev in log.sink] == ["hostname", BOOT, "hostname", "hostname", BOOT]
    (reboot,) = racklife.reboots(host)
    assert (reboot.old, reboot.new) == (OLD, NEW) and reboot.after < reboot.at
    assert re.fullmatch(r"thor-3 rebooted between \d\d:\d\d:\d\d and \d\d:\d\d:\d\d \(boot id 60d82e05… then "
                        r"0b7e2c44…\)", reboot.describe())


def _reads(seen: list | None = None):
    def read(node, ctx):
        if seen is not None:
            seen.append(node.name)
        return node.remote.run("hostname").stdout.strip()
    return read


def _run(entries, wanted, hosts_, tmp_path, log):
    said = []
    ctx = plan.Context(THOR5, hosts_, log, tmp_path / "locks", said=said.append)
    return plan.run(entries, wanted, ctx), said


def test_a_node_unreachable_through_the_run_that_answers_before_the_verdict_is_measured_then(tmp_path):
    log = EvidenceLog()
    hosts_, nodes = hosts(log)
    nodes["thor-3"].down = True
    seen = []

    def pair(sender, receiver, ctx):
        nodes["thor-3"].down = False      # thor-3's sshd is back once the load began
        return f"{sender.name}->{receiver.name}"
    entries = [plan.each("node.hostname", plan.Phase.FACTS, "node", _reads(seen)),
               plan.in_rounds("lane.one_stream", "link_pair", pair)]
    everyone = [(n.name,) for n in THOR5.nodes]
    results, said = _run(entries, {"node.hostname": everyone, "lane.one_stream": [("thor-1", "thor-2")]},
                         hosts_, tmp_path, log)
    late = results.part("node.hostname", "thor-3")
    assert late.error is None and late.value == "thor-3", late.error
    assert seen.count("thor-3") == 2 and seen.count("thor-1") == 1    # only the late node's is measured again
    assert any("a late node" in ev.note for ev in late.evidence)
    assert said == ["rackproof: measuring facts (1 measurement, 5 targets)",
                    "rackproof: measuring load (1 measurement, 1 target)",
                    "rackproof: thor-3 answers now (a late node): what it was to measure is measured now"]


def test_a_node_that_never_answers_stays_unreachable_tried_once_more(tmp_path):
    log = EvidenceLog()
    hosts_, nodes = hosts(log)
    nodes["thor-3"].down = True
    results, said = _run([plan.each("node.hostname", plan.Phase.FACTS, "node", _reads())],
                         {"node.hostname": [("thor-3",)]}, hosts_, tmp_path, log)
    assert isinstance(results.part("node.hostname", "thor-3").error, NodeUnreachable)
    assert not any("late node" in line for line in said)


def test_what_was_measured_before_a_reboot_is_marked_and_never_judged(tmp_path):
    log = EvidenceLog()
    hosts_, nodes = hosts(log)

    def reboots_after_the_facts(sender, receiver, ctx):
        time.sleep(0.01)
        nodes["thor-3"].reboot()          # the connection it measured on is gone: a new one reads a new boot id
        return _reads()(receiver, ctx)
    entries = [plan.each("node.hostname", plan.Phase.FACTS, "node", _reads()),
               plan.in_rounds("lane.one_stream", "link_pair", reboots_after_the_facts)]
    results, said = _run(entries, {"node.hostname": [("thor-1",), ("thor-3",)],
                                   "lane.one_stream": [("thor-2", "thor-3")]}, hosts_, tmp_path, log)
    before = results.part("node.hostname", "thor-3").error
    assert isinstance(before, Rebooted) and isinstance(before, ConnectionLost)   # cut short, never a verdict
    assert re.fullmatch(r"thor-3: node.hostname of thor-3 was measured before thor-3 rebooted at "
                        r"\d\d:\d\d:\d\d–\d\d:\d\d:\d\d \(its boot id changed in between\): not judged on facts from "
                        r"before a reboot; run the check again", str(before)), str(before)
    assert results.part("lane.one_stream", "thor-2->thor-3").value == "thor-3"    # measured after it: kept
    assert results.part("node.hostname", "thor-1").value == "thor-1"
    assert any(re.fullmatch(r"rackproof: thor-3 rebooted between .*: what was measured of it before is not judged",
                            line) for line in said), said
    again = plan.Measured.loads(results.dumps()).part("node.hostname", "thor-3").error
    assert str(again) == str(before) and isinstance(again, Rebooted)


def test_a_mesh_row_refused_while_its_peers_sshd_restarts_is_asked_again_within_the_budget():
    refused = Result("ssh thor-3 hostname", 255, "", "ssh: connect to host thor-3 port 22: Connection refused\n", 0.0)
    denied = Result("ssh thor-4 hostname", 255, "", "nvidia@thor-4: Permission denied (publickey).\n", 0.0)
    rows = {("thor-1", "thor-3"): Part(refused, None, []), ("thor-1", "thor-4"): Part(denied, None, [])}
    answers = {("thor-1", "thor-3"): [refused, Result("ssh thor-3 hostname", 0, "thor-3\n", "", 0.1)]}
    asked = []

    def ask(pair):
        asked.append(pair)
        return answers[pair].pop(0)
    found = racklife.mesh_again(rows, ask, budget=5.0, log=EvidenceLog(), waits=(0.01,))
    assert found[("thor-1", "thor-3")].value.stdout == "thor-3\n"
    assert asked == [("thor-1", "thor-3")] * 2          # a refused key is no restart: never asked again
    assert found[("thor-1", "thor-4")].value is denied
    still = racklife.mesh_again({("thor-1", "thor-3"): Part(refused, None, [])}, lambda pair: refused, budget=0.05,
                                log=EvidenceLog(), waits=(0.02,))
    assert still[("thor-1", "thor-3")].value is refused      # the budget ran out: its last answer is the row
    asked.clear()
    found = racklife.mesh_again({("thor-1", "thor-3"): Part(refused, None, [])}, ask, budget=5.0, log=EvidenceLog(),
                                waits=(0.01,), gone=lambda node: node == "thor-3")
    assert asked == [] and found[("thor-1", "thor-3")].value is refused   # the controller spent its budget on it


def test_rebooted_is_cut_short_in_the_report_and_crosses_to_the_workers():
    error = Rebooted("thor-3", "lane.link of thor-3:mgbe0_0", ("10:00:01", "10:00:09"))
    assert str(portable.loads(portable.dumps(error))) == str(error)


def test_a_late_nodes_lanes_are_noted_before_its_own_load_so_their_counters_are_judged(tmp_path, monkeypatch):
    """Its lanes could not be read before the run's first load (it was away): noted again before
    the load it is measured under (rackproof.measuring.linkhealth.LoadLedger.note), the others' never."""
    from rackproof.measuring import linkhealth
    from rackproof.judging.linkhealth import Counters
    from rackproof.measuring.linkhealth import LoadLedger

    log = EvidenceLog()
    hosts_, nodes = hosts(log)
    nodes["thor-3"].down = True
    read_on = []

    def read(host, lanes):
        read_on.append(host.name)
        host.remote.run("hostname")      # as the real read: an unreachable node's read fails
        return {lane: Counters(0, 0, 0, None, 0, 0, 0, 0, "nvethernet") for lane in lanes}
    monkeypatch.setattr(linkhealth, "read", read)

    def pair(sender, receiver, ctx):
        nodes["thor-3"].down = False
        return f"{sender.name}->{receiver.name}"
    entries = [plan.in_rounds("lane.one_stream", "link_pair", pair),
               plan.after_load("lane.counters", "lane",
                               lambda lane, ctx: ctx.ledger.before(lane.host.name, lane.name))]
    thor3 = [lane.name for node, lane in THOR5.lanes if node.name == "thor-3"]
    ctx = plan.Context(THOR5, hosts_, log, tmp_path / "locks", LoadLedger())
    results = plan.run(entries, {"lane.one_stream": [("thor-2", "thor-3")],
                                 "lane.counters": [("thor-3", lane) for lane in thor3]}, ctx)
    assert sorted(read_on) == ["thor-2", "thor-3", "thor-3"]     # thor-3 again as a late node, thor-2 once
    for lane in thor3:
        assert isinstance(results.part("lane.counters", f"thor-3:{lane}").value, Counters), \
            results.part("lane.counters", f"thor-3:{lane}")


# `sudo ss -Hltnup` rows as ss prints them: a socket opened between its look at /proc and its look
# at the sockets has no process (the suite's own srun on the Slurm controller opens four at once)
UNNAMED = "tcp LISTEN 0      128    0.0.0.0:{port} 0.0.0.0:*"
NAMED = 'tcp LISTEN 0      128    0.0.0.0:{port} 0.0.0.0:*    users:(("{name}",pid={pid},fd=5))'
SRUN_PORTS = (57531, 54139, 54519, 56501)
GETENT = 'udp UNCONN 0      0      0.0.0.0:33158 0.0.0.0:*    users:(("getent",pid=524,fd=3))'


@pytest.mark.parametrize("first, second, flagged", [
    # srun's ports listed before its process, srun ended at the second look
    ([UNNAMED.format(port=p) for p in SRUN_PORTS], [], []),
    # srun's ports listed before its process, srun still running (named) at the second look
    ([UNNAMED.format(port=p) for p in SRUN_PORTS],
     [NAMED.format(port=p, name="srun", pid=812) for p in SRUN_PORTS], []),
    # someone's listener that had just started: named at the second look, and judged
    ([UNNAMED.format(port=9000)], [NAMED.format(port=9000, name="nc", pid=77)], [(9000, "nc")]),
    # a listener no process holds (a kernel service's, as nfsd's): still there, judged as it is
    ([UNNAMED.format(port=2049)], [UNNAMED.format(port=2049)], [(2049, None)]),
    # someone's listener with its process: still there at the second look, judged
    ([NAMED.format(port=9000, name="nc", pid=77)], [NAMED.format(port=9000, name="nc", pid=77)], [(9000, "nc")]),
    # the suite's own getent asking DNS: a socket on every address for a moment, gone at the second look
    ([GETENT], [], []),
    # nothing unexpected: no second look
    ([], None, []),
], ids=["srun ended", "srun named", "someone's, just started", "no process at all", "someone's", "getent's query",
        "nothing"])
def test_a_listener_is_judged_by_a_second_look(monkeypatch, first, second, flagged):
    monkeypatch.setattr(sharing, "SETTLE_S", 0)
    reads = iter([first, second])

    def read():
        rows = next(reads)
        assert rows is not None, "a second look only when the first found something unexpected"
        return parse_ss_listen("\n".join(rows))
    found = sharing.listening_openly(read, frozenset, {"10.10.0.11"}, set(), sharing.allowed_programs(THOR5))
    assert [(listener.port, listener.process) for listener in found] == flagged
