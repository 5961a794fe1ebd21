"""Helpers for selftests that need a simulated rack (rackproof_sim): bring one up under a name
of its own, run commands on the controller (bench namespace) and on nodes over real SSH, plant
faults, and take snapshots of what a rack must leave untouched.

    with SimRack("thor5") as r:
        r.ssh("thor-2", "hostname").stdout   # "thor-2\\n"

Racks need root; `skip_reason()` says why a machine cannot run them.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

from rackproof_sim import faults
from rackproof_sim.netns import list_netns
from rackproof_sim.rack import Rack
from rackproof_sim.state import RackState
from selftests.suite import run_suite

TOOLS = ("ip", "tc", "iperf3", "ssh", "ssh-keygen", "unshare", "nsenter", "setpriv", "curl", "sudo")


def skip_reason() -> str | None:
    """Only a machine without root may skip the rack's tests; as root (CI, the README's
    command) a missing tool is a failure, said by `missing_tools` when a rack comes up."""
    if os.geteuid() != 0:
        return "the simulated rack needs root (namespaces, mounts, sshd)"
    return None


def rack_marks() -> list:
    """The marks of a module whose tests bring up racks (named test_sim_*.py or *_sim.py, so
    that selftests/conftest.py keeps each on one xdist worker): skipped only without root."""
    return [pytest.mark.skipif(skip_reason() is not None, reason=skip_reason() or "")]


def missing_tools() -> list[str]:
    missing = [t for t in TOOLS if shutil.which(t) is None]
    missing += [p for p in ("/usr/sbin/sshd", "/usr/bin/python3") if not Path(p).exists()]
    return missing


def with_connect_budget(inventory: Path, seconds: float, folder: Path) -> Path:
    """A copy of a rack's inventory with [ssh] connect_budget set: a test of a node out of reach
    waits out the budget it states, not the default's 20 s."""
    text = inventory.read_text()
    assert "\n[ssh]\n" in text and "connect_budget" not in text
    copy = folder / f"budget-{seconds:g}-{inventory.name}"
    copy.write_text(text.replace("\n[ssh]\n", f"\n[ssh]\nconnect_budget = {seconds:g}\n", 1))
    return copy


def unique_name(tag: str) -> str:
    """A rack name no other run uses at the same time (CI and developers may run racks)."""
    return f"st{os.getpid() % 100000}{tag}"[:24]


def rack_fixture(profile: str):
    """A module's rack of `profile` (a fixture of that name): up for the module's tests, down after."""
    @pytest.fixture(scope="module", name=profile)
    def rack() -> Iterator[SimRack]:
        with SimRack(profile) as up:
            yield up
    return rack


class SimRack:
    def __init__(self, profile: str, name: str | None = None):
        self.profile = profile
        self.name = name or unique_name(profile)
        self.rack: Rack | None = None

    def __enter__(self) -> "SimRack":
        missing = missing_tools()
        assert not missing, f"missing for the simulated rack (scripts/setup.sh installs them): {', '.join(missing)}"
        self.rack = Rack.up(self.profile, self.name)
        return self

    def __exit__(self, *exc) -> None:
        self.down()

    def down(self) -> None:
        Rack(RackState(self.name)).down()

    # running things ---------------------------------------------------------------------
    @property
    def state(self) -> RackState:
        return self.rack.state

    @property
    def inventory(self) -> Path:
        return self.rack.inventory

    def suite(self, pytester, *args: str):
        """The suite run from the controller (the bench namespace) against this rack's inventory."""
        return run_suite(pytester, f"--inventory={self.inventory}", *args, netns=self.rack.topo.bench)

    def bench(self, command: str, timeout: float = 30) -> subprocess.CompletedProcess:
        """A shell command on the controller (the bench namespace)."""
        return subprocess.run(["ip", "netns", "exec", self.rack.topo.bench, "sh", "-c", command],
                              capture_output=True, text=True, timeout=timeout)

    def rackproof(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
        """The rackproof CLI as a user runs it on the controller (the bench namespace)."""
        return self.bench(" ".join(map(shlex.quote, [sys.executable, "-m", "rackproof.cli", *args])), timeout=timeout)

    def ssh(self, node: str, command: str, timeout: float = 30, connect_timeout: float = 5) -> subprocess.CompletedProcess:
        """`command` on `node` as the login user, over real SSH from the bench."""
        return self.bench(f"ssh -F {shlex.quote(str(self.state.ssh_config))} -o ConnectTimeout={connect_timeout:g} "
                          f"{shlex.quote(node)} {shlex.quote(command)}", timeout=timeout)

    def out(self, node: str, command: str, **kw) -> str:
        result = self.ssh(node, command, **kw)
        assert result.returncode == 0, f"{node}: {command!r} exited {result.returncode}: {result.stderr}"
        return result.stdout

    def as_root(self, node: str, script: str) -> subprocess.CompletedProcess:
        """A shell script as root inside the node (what an admin with sudo would do)."""
        return self.rack.node(node).sh(script, check=False)

    def fault(self, node: str, kind: str, *args: str) -> str:
        return faults.plant(self.rack, node, kind, list(args))

    def heal(self, node: str, kind: str, *args: str) -> str:
        return faults.heal(self.rack, node, kind, list(args))

    @contextmanager
    def planted(self, node: str, kind: str, *args: str) -> Iterator[None]:
        """A fault for the duration of a with-block, healed whatever happens."""
        self.fault(node, kind, *args)
        try:
            yield
        finally:
            self.heal(node, kind, *args)

    def one_second_runs(self, folder: Path) -> Path:
        """The rack's inventory with one-second iperf3 runs, for a test that shows which checks a
        fault fails (a rate well under its floor stays under it), not the rates themselves."""
        inventory = folder / "cluster.toml"
        inventory.write_text(self.inventory.read_text().replace("iperf_seconds = 3", "iperf_seconds = 1"))
        assert "iperf_seconds = 1" in inventory.read_text()
        return inventory

    @property
    def agent_key(self) -> str:
        return self.state.agent_key.read_text().strip()

    def chat(self, model: str, tokens: int = 8, key: str | None = None) -> tuple[str, float]:
        """Stream a chat completion through the agent on its node: (HTTP status, seconds)."""
        node = self.rack.profile.agent_node
        key = self.agent_key if key is None else key
        body = '{"model": "%s", "stream": true, "max_tokens": %d, "messages": [{"role": "user", "content": "hi"}]}' % (
            model, tokens)
        out = self.out(node, f"curl -s -o /dev/null -w '%{{http_code}} %{{time_total}}' "
                             f"-H 'Authorization: Bearer {key}' -H 'content-type: application/json' "
                             f"-d '{body}' http://{self.rack.profile.agent_listen}/v1/chat/completions")
        status, seconds = out.split()
        return status, float(seconds)

    def iperf(self, client: str, server: str, server_ip: str | None = None, streams: int = 1,
              seconds: int = 4) -> float:
        """iperf3 between two nodes over the cluster network: received Mbit/s (first second
        omitted). Without server_ip the server listens on every address (a dual-stack socket)."""
        self.out(server, "iperf3 -s -D -1" + (f" -B {server_ip}" if server_ip else ""))
        time.sleep(0.2)
        out = self.out(client, f"iperf3 -c {server} -t {seconds} -O 1 -P {streams} -J", timeout=seconds + 30)
        import json
        return json.loads(out)["end"]["sum_received"]["bits_per_second"] / 1e6


# --- what a rack must leave as it found it ----------------------------------------------------

def tree_digest(root: str) -> dict[str, tuple]:
    """path -> (type, mode, uid, gid, size, mtime_ns, content hash or link target) of a tree."""
    out: dict[str, tuple] = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for name in sorted(dirnames + filenames):
            path = os.path.join(dirpath, name)
            try:
                st = os.lstat(path)
            except OSError:
                continue
            if os.path.islink(path):
                detail = os.readlink(path)
            elif os.path.isfile(path):
                try:
                    with open(path, "rb") as f:
                        detail = hashlib.sha256(f.read()).hexdigest()
                except OSError:
                    detail = "unreadable"
            else:
                detail = ""
            out[path] = (st.st_mode, st.st_uid, st.st_gid, st.st_size, st.st_mtime_ns, detail)
    return out


def rack_processes(name: str) -> set[tuple[int, str]]:
    """Processes that belong to rack `name`: in one of its namespaces, or naming its state dir."""
    state = str(RackState(name).root)
    prefix = RackState(name).ns_prefix
    ours = set()
    inodes = set()
    for ns in list_netns():
        if ns.startswith(prefix):
            try:
                inodes.add(os.stat(f"/run/netns/{ns}").st_ino)
            except OSError:
                pass
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            args = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
            net = os.stat(entry / "ns" / "net").st_ino
        except OSError:
            continue
        if state in args or f"--name {name}" in args or net in inodes:
            ours.add((int(entry.name), args))
    return ours


def rack_namespaces(name: str) -> list[str]:
    prefix = RackState(name).ns_prefix
    return sorted(ns for ns in list_netns() if ns.startswith(prefix))


def snapshot(name: str) -> dict:
    return {"etc": tree_digest("/etc"), "home": tree_digest("/home"), "netns": rack_namespaces(name),
            "processes": rack_processes(name), "state": RackState(name).root.exists(),
            "all_netns": set(list_netns())}


def compare(before: dict, after: dict) -> list[str]:
    """What differs between two snapshots, one line each (empty: nothing)."""
    problems = []
    for tree in ("etc", "home"):
        b, a = before[tree], after[tree]
        changed = sorted(p for p in set(a) | set(b) if a.get(p) != b.get(p))
        problems += [f"/{tree} changed: {p}" for p in changed[:20]]
    for key in ("netns", "processes", "state"):
        if before[key] != after[key]:
            problems.append(f"{key}: before {before[key]!r}, after {after[key]!r}")
    return problems
