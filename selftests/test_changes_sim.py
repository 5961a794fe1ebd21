"""Change control on a simulated thor5 rack: `rackproof snapshot` before, three planted changes
(thor-2's cluster address moved off bond0, a netplan file's mode, an /etc/hosts line), another
snapshot, and `rackproof diff` says exactly those three, in words; `--expect-unchanged` fails
thor-2's check naming them. Healed, nothing differs and `--expect-unchanged` is green. No
snapshot holds a secret."""

from __future__ import annotations

import json

from selftests.simrack import SimRack, rack_marks, unique_name
from selftests.suite import run_suite

pytestmark = rack_marks()

NETPLAN = "/etc/netplan/01-network-manager-all.yaml"


def taken(rack: SimRack, path) -> dict:
    result = rack.rackproof("snapshot", "--inventory", str(rack.inventory), "-o", str(path))
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads(path.read_text())


def rollback_checks(pytester, rack: SimRack, before):
    """The rollback checks, and the report's account of what changed (--before)."""
    run = run_suite(pytester, f"--inventory={rack.inventory}", f"--expect-unchanged={before}", f"--before={before}",
                    "tests_network/test_rollback.py", netns=rack.rack.topo.bench)
    return run, json.loads((run.run_dir / "results.json").read_text())


def test_a_planted_change_is_exactly_its_three_differences_and_healing_leaves_none(pytester, tmp_path):
    with SimRack("thor5", unique_name("chg")) as rack:
        before = taken(rack, tmp_path / "before.json")
        rack.fault("thor-2", "address-moved", "mgbe1_0")
        rack.fault("thor-2", "netplan-mode")
        rack.fault("thor-2", "hosts-edited", "thor-3", "10.10.0.99")
        taken(rack, tmp_path / "after.json")
        diff = rack.rackproof("diff", str(tmp_path / "before.json"), str(tmp_path / "after.json"))
        as_json = rack.rackproof("diff", "--json", str(tmp_path / "before.json"), str(tmp_path / "after.json"))
        not_rolled_back, reported = rollback_checks(pytester, rack, tmp_path / "before.json")
        for kind in ("hosts-edited", "netplan-mode", "address-moved"):
            rack.heal("thor-2", kind)
        taken(rack, tmp_path / "healed.json")
        healed = rack.rackproof("diff", str(tmp_path / "before.json"), str(tmp_path / "healed.json"))
        rolled_back, reported_after_rollback = rollback_checks(pytester, rack, tmp_path / "before.json")
        secret = rack.agent_key
    assert diff.returncode == 1, diff.stdout + diff.stderr
    assert diff.stdout.splitlines() == [
        "thor-2: 10.10.0.12/24 moved from bond0 to mgbe1_0",
        "thor-2: /etc/hosts: 10.10.0.13 thor-3 became 10.10.0.99 thor-3",
        f"thor-2: {NETPLAN} mode 600 -> 644"], diff.stdout
    records = json.loads(as_json.stdout)
    assert [(r["node"], r["fact"], r["before"], r["after"]) for r in records] == [
        ("thor-2", "interfaces", "bond0", "mgbe1_0"), ("thor-2", "hosts", "10.10.0.13 thor-3",
                                                        "10.10.0.99 thor-3"),
        ("thor-2", "files", "600", "644")]
    assert (healed.returncode, healed.stdout.strip()) == (0, "no change"), healed.stdout
    check = "test_rollback::test_nothing_changed_since_the_snapshot"
    assert not_rolled_back.failed == {f"{check}[thor-2]"}, not_rolled_back.output
    message = not_rolled_back.messages[f"{check}[thor-2]"]
    assert "thor-2: 3 differences from the snapshot taken" in message
    for words in ("10.10.0.12/24 moved from bond0 to mgbe1_0", f"{NETPLAN} mode 600 -> 644",
                  "/etc/hosts: 10.10.0.13 thor-3 became 10.10.0.99 thor-3"):
        assert words in message, message
    assert rolled_back.outcomes == {f"{check}[thor-{i}]": "passed" for i in range(1, 6)}, rolled_back.output
    # the report of each run says what the change did (--before), the same as the diff
    assert [c["words"] for c in reported["what_changed"]["changes"]] == [
        line.partition(": ")[2] for line in diff.stdout.splitlines()]
    assert reported_after_rollback["what_changed"]["changes"] == []
    assert "What this change did" in (rolled_back.run_dir / "report.html").read_text()
    # what a snapshot holds: every node, each fact read, hashes where the login may read the file
    assert set(before["nodes"]) == {f"thor-{i}" for i in range(1, 6)}
    assert all(facts["unread"] == {} for facts in before["nodes"].values()), before["nodes"]
    assert before["nodes"]["thor-2"]["files"][NETPLAN]["sha256"]
    for name in ("before.json", "after.json", "healed.json"):
        text = (tmp_path / name).read_text()
        assert secret not in text and "PRIVATE KEY" not in text and "ssh-ed25519 AAAA" not in text
