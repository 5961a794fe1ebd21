"""What a change did, in words (rackproof.ticket.changes), from two snapshots built here: each kind of
difference said once, moves and edits paired, a fact not read never taken for a removal."""

import copy
import json
import os
import subprocess
import sys

import pytest
from hypothesis import given, settings, strategies as st

from rackproof.ticket import snapshot
from rackproof.ticket.changes import compare
from rackproof.probes.safetext import one_line
from selftests.suite import REPLAYS, REPO

NETPLAN = "/etc/netplan/40-cx7.yaml"
SHA = "a" * 64

NODE = {
    "hostname": "thor-2",
    "interfaces": {
        "mgbe0_0": {"state": "UP", "mtu": 1500, "master": None, "addresses": ["10.10.0.12/24"]},
        "mgbe1_0": {"state": "UP", "mtu": 1500, "master": None, "addresses": []},
    },
    "links": {"mgbe0_0": {"link": True, "speed_mbps": 25000}},
    "routes": ["default via 192.168.55.1 dev eth0"],
    "hosts": ["127.0.0.1 localhost", "10.10.0.11 thor-1", "10.10.0.13 thor-3"],
    "files": {NETPLAN: {"mode": "600", "owner": "root", "group": "root", "sha256": SHA}},
    "bonds": {},
    "sysctl": {"net.ipv4.ip_forward": "0"},
    "listening": ["0.0.0.0:22"],
    "packages": {"nvidia-jetpack": "7.0-b128"},
    "authorized_keys": ["SHA256:x (ED25519) nvidia@thor-1"],
    "unread": {},
}


def snap(**nodes):
    return {"snapshot_version": snapshot.SNAPSHOT_VERSION, "taken": "2026-12-03T19:00:00+00:00",
            "cluster": "thor-shelf", "nodes": nodes}


def changed(edit):
    after = copy.deepcopy(NODE)
    edit(after)
    return [str(c) for c in compare(snap(**{"thor-2": NODE}), snap(**{"thor-2": after}))]


def test_no_change():
    assert compare(snap(**{"thor-2": NODE}), snap(**{"thor-2": copy.deepcopy(NODE)})) == []


def test_the_three_changes_of_a_planted_change_each_once():
    def edit(n):
        n["interfaces"]["mgbe0_0"]["addresses"] = []
        n["interfaces"]["mgbe1_0"]["addresses"] = ["10.10.0.12/24"]
        n["files"][NETPLAN]["mode"] = "644"
        n["hosts"][2] = "10.10.0.99 thor-3"
    assert changed(edit) == ["thor-2: 10.10.0.12/24 moved from mgbe0_0 to mgbe1_0",
                             "thor-2: /etc/hosts: 10.10.0.13 thor-3 became 10.10.0.99 thor-3",
                             f"thor-2: {NETPLAN} mode 600 -> 644"]


def test_a_bond_built():
    def edit(n):
        n["interfaces"]["mgbe0_0"].update(master="bond0", addresses=[])
        n["interfaces"]["mgbe1_0"]["master"] = "bond0"
        n["interfaces"]["bond0"] = {"state": "UP", "mtu": 1500, "master": None, "addresses": ["10.10.0.12/24"]}
        n["bonds"]["bond0"] = {"mode": "IEEE 802.3ad Dynamic link aggregation", "members": ["mgbe0_0", "mgbe1_0"]}
    assert changed(edit) == [
        "thor-2: mgbe0_0 bond/bridge None -> bond0", "thor-2: mgbe1_0 bond/bridge None -> bond0",
        "thor-2: interface bond0 added with mgbe0_0, mgbe1_0", "thor-2: 10.10.0.12/24 moved from mgbe0_0 to bond0",
        "thor-2: bond bond0 added"]


@pytest.mark.parametrize("edit, words", [
    (lambda n: n["files"][NETPLAN].update(sha256="b" * 64), f"{NETPLAN} content changed (sha256 aaaaaaaaaaaa -> bbbbbbbbbbbb)"),
    (lambda n: n["files"].pop(NETPLAN), f"{NETPLAN} removed (mode 600, root:root, sha256 aaaaaaaaaaaa)"),
    (lambda n: n["hosts"].append("10.10.0.14 thor-4"), "/etc/hosts: 10.10.0.14 thor-4 added"),
    (lambda n: n["routes"].clear(), "route: default via 192.168.55.1 dev eth0 removed"),
    (lambda n: n["sysctl"].update({"net.ipv4.ip_forward": "1"}), "sysctl net.ipv4.ip_forward: 0 -> 1"),
    (lambda n: n["listening"].append("0.0.0.0:8000"), "listening socket: 0.0.0.0:8000 added"),
    (lambda n: n["packages"].update({"nvidia-jetpack": "7.1"}), "version of nvidia-jetpack: 7.0-b128 -> 7.1"),
    (lambda n: n["authorized_keys"].clear(), "authorized key: SHA256:x (ED25519) nvidia@thor-1 removed"),
    (lambda n: n["interfaces"]["mgbe0_0"].update(mtu=9000), "mgbe0_0 MTU 1500 -> 9000"),
    (lambda n: n["links"]["mgbe0_0"].update(speed_mbps=10000), "lane mgbe0_0 link yes, 25000Mb/s -> link yes, 10000Mb/s"),
    (lambda n: n.update(hostname="thor-9"), "hostname thor-2 -> thor-9"),
])
def test_each_kind_of_change_in_words(edit, words):
    assert changed(edit) == [f"thor-2: {words}"]


def test_a_fact_not_read_is_not_a_removal():
    def edit(n):
        n.pop("files")
        n["unread"]["files"] = "`for f in ...` exited with status 255"
    assert changed(edit) == ["thor-2: files could not be read after: `for f in ...` exited with status 255"]


def test_an_unreachable_node_is_said_once():
    after = snap(**{"thor-2": {"unreachable": "Connection refused"}})
    assert [str(c) for c in compare(snap(**{"thor-2": NODE}), after)] == [
        "thor-2: reachability: reachable -> unreachable (Connection refused)"]


def test_a_value_from_a_node_cannot_forge_a_line():
    assert changed(lambda n: n.update(hostname="thor-2\nthor-1: all good")) == [
        "thor-2: hostname thor-2 -> thor-2\\x0athor-1: all good"]


@pytest.mark.parametrize("text, says", [
    ("", "not JSON"), ("[]", "no nodes"), ('{"nodes": {}}', "snapshot version None"),
    ('{"nodes": {}, "snapshot_version": "2.0"}', "reads 1.x"), ("\xff", "not JSON"),
    ('{"nodes": {"a": 1}, "snapshot_version": "1.0"}', "nodes.a: should be an object, not an integer"),
])
def test_a_file_that_is_not_a_snapshot(tmp_path, text, says):
    path = tmp_path / "before.json"
    path.write_text(text, encoding="latin-1")
    with pytest.raises(snapshot.SnapshotError, match=says):
        snapshot.read(path)


def one_wrong(where: tuple, value) -> dict:
    """The snapshot of NODE with the value at the key path `where` replaced."""
    doc = copy.deepcopy(snap(**{"thor-2": NODE}))
    put(doc, where, value)
    return doc


def put(doc, where: tuple, value) -> None:
    *parents, last = where
    for key in parents:
        doc = doc[key]
    doc[last] = value


@pytest.mark.parametrize("where, value, says", [
    (("sysctl",), 0, "nodes.thor-2.sysctl: should be an object, not an integer"),
    (("routes",), {"a": "b"}, "nodes.thor-2.routes: should be an array, not an object"),
    (("interfaces", "mgbe0_0", "mtu"), "1500",
     "nodes.thor-2.interfaces.mgbe0_0.mtu: should be an integer, not a string"),
    (("interfaces", "mgbe0_0", "addresses"), [1],
     "nodes.thor-2.interfaces.mgbe0_0.addresses[0]: should be a string, not an integer"),
    (("links", "mgbe0_0", "speed_mbps"), 2.5e4, "nodes.thor-2.links.mgbe0_0.speed_mbps: should be an integer"),
    (("files", NETPLAN), {"mode": "600"}, f"nodes.thor-2.files['{NETPLAN}'].owner: required field is missing"),
    (("hostname",), None, None),   # null where a name was: said as a change, not a crash
    (("unread",), [], "nodes.thor-2.unread: should be an object, not an array"),
    ((), "unreachable", "nodes.thor-2: should be an object, not a string"),
])
def test_a_value_of_another_type_is_named_by_its_path(tmp_path, where, value, says):
    path = tmp_path / "after.json"
    path.write_text(json.dumps(one_wrong(("nodes", "thor-2", *where), value)))
    if says is None:
        assert compare(snap(**{"thor-2": NODE}), snapshot.read(path))
        return
    with pytest.raises(snapshot.SnapshotError) as raised:
        snapshot.read(path)
    assert str(raised.value).startswith(f"{path}: not a rackproof snapshot: {says}"), raised.value


json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                                      max_size=3), max_leaves=6)


def places(doc) -> list[tuple]:
    """Every key path in a snapshot (list items by their index)."""
    out, todo = [], [((), doc)]
    while todo:
        prefix, value = todo.pop()
        for key, child in (value.items() if isinstance(value, dict) else enumerate(value)):
            out.append((*prefix, key))
            if isinstance(child, (dict, list)):
                todo.append(((*prefix, key), child))
    return out


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_any_value_anywhere_is_read_or_refused_and_compared_without_a_crash(tmp_path_factory, data):
    doc = copy.deepcopy(snap(**{"thor-2": NODE}))
    for _ in range(data.draw(st.integers(1, 3))):
        put(doc, data.draw(st.sampled_from(places(doc))), data.draw(json_values))
    path = tmp_path_factory.mktemp("snapshot") / "after.json"
    path.write_text(json.dumps(doc))
    try:
        after = snapshot.read(path)
    except snapshot.SnapshotError as e:
        assert one_line(str(e)) == str(e) and str(e).startswith(f"{path}: "), e
        return
    for change in compare(snap(**{"thor-2": NODE}), after) + compare(after, snap(**{"thor-2": NODE})):
        assert one_line(str(change)) == str(change)


def rackproof(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rackproof.cli", *args], capture_output=True, text=True, timeout=60)


def test_diff_of_a_snapshot_with_a_value_of_another_type_exits_2_in_one_line(tmp_path):
    good, bad = tmp_path / "before.json", tmp_path / "after.json"
    snapshot.write(snap(**{"thor-2": NODE}), good)
    snapshot.write(one_wrong(("nodes", "thor-2", "sysctl"), 0), bad)
    proc = rackproof("diff", str(good), str(bad))
    assert (proc.returncode, proc.stdout) == (2, ""), proc.stdout + proc.stderr
    assert proc.stderr == f"{bad}: not a rackproof snapshot: nodes.thor-2.sysctl: should be an object, not an integer\n"
    changed_after = copy.deepcopy(NODE)
    changed_after["sysctl"] = {"net.ipv4.ip_forward": "1"}
    snapshot.write(snap(**{"thor-2": changed_after}), bad)
    proc = rackproof("diff", str(good), str(bad))
    assert (proc.returncode, proc.stdout, proc.stderr) == (1, "thor-2: sysctl net.ipv4.ip_forward: 0 -> 1\n", "")


def test_diff_refuses_a_fifo_at_once(tmp_path):
    fifo = tmp_path / "before.json"
    os.mkfifo(fifo)
    proc = rackproof("diff", str(fifo), str(fifo))
    assert (proc.returncode, proc.stderr) == (2, f"{fifo}: cannot be read: a FIFO, not a regular file\n")


def test_a_snapshot_written_reads_back(tmp_path):
    snapshot.write(snap(**{"thor-2": NODE}), tmp_path / "s.json")
    assert snapshot.read(tmp_path / "s.json") == json.loads(json.dumps(snap(**{"thor-2": NODE})))


def pytest_run(*args: str, cwd):
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("option", ["--before", "--expect-unchanged"])
def test_a_snapshot_option_naming_no_snapshot_stops_the_run_in_one_line(tmp_path, option):
    (tmp_path / "before.json").write_text("{not json")
    proc = pytest_run(f"--inventory={REPLAYS / 'thor5-healthy' / 'cluster.toml'}", f"{option}={tmp_path / 'before.json'}",
                      cwd=REPO)
    assert proc.returncode == 4, proc.stdout + proc.stderr
    line = next(line for line in proc.stderr.splitlines() if option in line)
    assert "not a rackproof snapshot (not JSON" in line and "Traceback" not in proc.stderr


def test_before_needs_the_nodes_not_a_recording(tmp_path):
    snapshot.write(snap(**{"thor-2": NODE}), tmp_path / "before.json")
    proc = pytest_run("--replay", str(REPLAYS / "thor5-healthy"), f"--before={tmp_path / 'before.json'}", cwd=REPO)
    assert proc.returncode == 4 and "a --replay has no nodes to read" in proc.stderr, proc.stdout + proc.stderr


def test_a_file_fact_with_a_control_character_is_shown_escaped():
    doc = copy.deepcopy(snap(**{"thor-2": NODE}))
    put(doc, ("nodes", "thor-2", "files", "/etc/netplan/40-cx7.yaml", "sha256"), "\x1f")
    texts = [str(c) for c in compare(snap(**{"thor-2": NODE}), doc)]
    assert texts and all("\x1f" not in t for t in texts) and any("\\x1f" in t for t in texts), texts
