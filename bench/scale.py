"""Benchmark: how the suite's time grows with the number of nodes, beside two peers that run the
same checks on the same simulated rack.

For each N (default 2, 5, 8, 16, 32), on `rackproof sim up thor --nodes N` (one lane per node),
in one run:
  suite     the whole suite without its throughput and after-load checks, as a person runs it
            (no -n)
  mesh      the SSH mesh alone: n*(n-1) ordered pairs, every node fanning out at once
            (rackproof.measuring.sshmesh, as test_passwordless_ssh measures it)
  fixed     the fixed cost of one check: checks whose command does nothing (`true`), the run's
            wall time per check minus that command's own time (from the evidence)
  same      the same checks three ways: lane speed (ethtool), hostname, and the SSH mesh, by
            rackproof; by pytest-testinfra (paramiko backend, parametrised by host as its docs
            show); by a plain loop of `ssh NODE CMD`, one per check
  phase     the throughput checks without and with -n 2, from their first command to their last
            (the nodes' surveys are the run's start, as in bench/throughput.py), against their
            bound: the rounds (each node sends once and receives once) x the length of one
            measurement

It prints a table, the targets met or not (and why), and writes a plot of time against N.
Figures are wall times and ratios measured in one run; nothing here is a timed assertion.

    sudo .venv/bin/python bench/scale.py [--nodes 2,5,8,16,32] [--plot bench/scale.png]
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.throughput import TESTS, bound, load_phase, with_bytecode  # noqa: E402
from conftest import pytest_plugins as SUITE_PLUGINS  # noqa: E402  (the plugin and the suite's fixtures)
from rackproof_sim.profiles import generated_name  # noqa: E402
from rackproof_sim.rack import Rack  # noqa: E402

PEERS = Path("/opt/rackproof/bench-peers")          # scripts/setup.sh: pytest-testinfra with paramiko
SAME_CHECKS = "test_lane_speed or test_hostname_is_the_inventory_name or test_passwordless_ssh"
NOT_THROUGHPUT = "not iperf3 and not under_load"
NOTHING_CHECKS = (30, 330)                          # two runs: the difference is per check

NOTHING = '''
import pytest
from rackproof.probes.probe import Probe

NOTHING = Probe("nothing", "does nothing: the fixed cost of a check around its command", "true")


@pytest.mark.parametrize("k", range({count}))
def test_nothing(node, k):
    assert node.run(NOTHING).ok
'''

TESTINFRA = '''
import json
import os

import pytest

NODES = json.loads(os.environ["SCALE_NODES"])


def test_lane_speed(host):
    assert "Speed: 25000Mb/s" in host.check_output("ethtool mgbe0_0")


def test_hostname(host):
    assert host.check_output("hostname") == host.backend.hostname


@pytest.mark.parametrize("peer", NODES)
def test_passwordless_ssh(host, peer):
    if peer == host.backend.hostname:
        pytest.skip("itself")
    assert host.check_output(f"ssh -o BatchMode=yes -o ConnectTimeout=5 {peer} hostname") == peer
'''

SSH_LOOP = '''
fail=0
for n in {nodes}; do
  ssh -F "$CFG" "$n" ethtool mgbe0_0 | grep -q "Speed: 25000Mb/s" || fail=$((fail+1))
  [ "$(ssh -F "$CFG" "$n" hostname)" = "$n" ] || fail=$((fail+1))
  for p in {nodes}; do
    [ "$p" = "$n" ] && continue
    [ "$(ssh -F "$CFG" "$n" ssh -o BatchMode=yes -o ConnectTimeout=5 "$p" hostname)" = "$p" ] || fail=$((fail+1))
  done
done
echo "failed $fail"
'''


def timed(rack: Rack, argv: list[str], **kw) -> tuple[float, subprocess.CompletedProcess]:
    """Wall time of a command on the controller (the rack's bench namespace), Python writing its
    bytecode as on any machine (bench.throughput.with_bytecode)."""
    started = time.monotonic()
    proc = subprocess.run(["ip", "netns", "exec", rack.topo.bench, *argv], capture_output=True, text=True,
                          env=with_bytecode(), **kw)
    return time.monotonic() - started, proc


def pytest_run(rack: Rack, folder: Path, *args: str) -> tuple[float, dict]:
    """The suite (or a file of checks) against the rack: wall time and results.json."""
    folder.mkdir(parents=True)
    # the run's history goes beside its report: by default it is reports/history.sqlite of the checkout
    wall, proc = timed(rack, [sys.executable, "-m", "pytest", "-c", str(REPO / "pytest.ini"), "--rootdir", str(REPO),
                              "-q", f"--inventory={rack.inventory}", f"--html={folder / 'report.html'}",
                              f"--history={folder / 'history.sqlite'}", *args],
                       cwd=REPO)
    results = folder / "results.json"
    if not results.exists():
        sys.exit(f"bench: the run wrote no results:\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    return wall, json.loads(results.read_text())


def failed(doc: dict) -> list[str]:
    return [t["id"] for t in doc["tests"] if t["outcome"] not in ("passed", "skipped")]


def said(doc: dict) -> str:
    """The first failed checks with their messages: a healthy rack's failure is a suite's bug to find."""
    return "\n".join(f"  {t['id']}: {t['message'].splitlines()[0] if t['message'] else t['outcome']}"
                     for t in doc["tests"] if t["outcome"] not in ("passed", "skipped"))[:3000]


def mesh_alone(rack: Rack) -> tuple[float, float]:
    """(the mesh's wall time, what opening one node's SSH connection costs: each xdist worker
    opens its own, paramiko's connections cannot be handed between processes)."""
    script = (
        "import sys, time\n"
        "from rackproof.nodes.host import connect\n"
        "from rackproof.inventory.model import load_inventory\n"
        "from rackproof.nodes.remote import EvidenceLog\n"
        "from rackproof.measuring import sshmesh\n"
        "inv = load_inventory(sys.argv[1]); log = EvidenceLog(); hosts = connect(inv, log)\n"
        "t = time.monotonic()\n"
        "for h in hosts.values(): h.remote.run('true')\n"
        "first = time.monotonic() - t; t = time.monotonic()\n"
        "for h in hosts.values(): h.remote.run('true')\n"
        "connect = (first - (time.monotonic() - t)) / len(hosts)\n"
        "t = time.monotonic()\n"
        "parts = sshmesh.tried(hosts, {n.name: n.ssh_name for n in inv.nodes}, inv.ssh.connect_timeout, "
        "inv.ssh.fanout, log)\n"
        "wall = time.monotonic() - t\n"
        "bad = [(s, p) for s, part in parts.items() for p, row in part.get(log).items() if row.exit_status]\n"
        "print(wall, len(bad), connect)\n")
    _, proc = timed(rack, [sys.executable, "-c", script, str(rack.inventory)], cwd=REPO)
    wall, bad, connect = proc.stdout.split()
    if int(bad):
        sys.exit(f"bench: {bad} pairs of the mesh failed on a healthy rack")
    return float(wall), float(connect)


def fixed_cost(rack: Rack, tmp: Path) -> float:
    """Seconds of one check on top of its command."""
    walls, commands = [], []
    for count in NOTHING_CHECKS:
        module = tmp / f"nothing{count}" / "tests_nothing" / "test_nothing.py"   # a tests_ folder: a check
        module.parent.mkdir(parents=True)
        module.write_text(NOTHING.format(count=count))
        # outside the checkout no conftest.py loads the suite's fixtures: named as plugins instead
        wall, doc = pytest_run(rack, tmp / f"nothing{count}-report", str(module), "--node", "thor-1",
                               *(f"-p{name}" for name in SUITE_PLUGINS))
        if failed(doc):
            sys.exit(f"bench: {failed(doc)[:3]} failed")
        walls.append(wall)
        commands.append(sum(e["duration"] for t in doc["tests"] for e in t["evidence"]))
    extra = NOTHING_CHECKS[1] - NOTHING_CHECKS[0]
    return (walls[1] - walls[0] - (commands[1] - commands[0])) / extra


def testinfra(rack: Rack, tmp: Path, nodes: list[str]) -> float:
    python = PEERS / "bin" / "python"
    if not python.exists():
        sys.exit(f"bench: {python} is missing: run scripts/setup.sh --bench (it installs pytest-testinfra there)")
    folder = tmp / "testinfra"
    folder.mkdir()
    (folder / "test_peer.py").write_text(TESTINFRA)
    (folder / "pytest.ini").write_text("[pytest]\n")
    hosts = ",".join(f"paramiko://{n}" for n in nodes)
    wall, proc = timed(rack, ["env", f"SCALE_NODES={json.dumps(nodes)}", str(python), "-m", "pytest", "-q", "-p",
                              "no:cacheprovider", "-c", str(folder / "pytest.ini"), f"--hosts={hosts}",
                              f"--ssh-config={rack.state.ssh_config}",
                              f"--ssh-identity-file={rack.state.bench_key}", str(folder / "test_peer.py")],
                       cwd=folder)
    if proc.returncode != 0:
        sys.exit(f"bench: testinfra's checks failed:\n{proc.stdout[-3000:]}{proc.stderr[-1000:]}")
    return wall


def ssh_loop(rack: Rack, nodes: list[str]) -> float:
    script = SSH_LOOP.format(nodes=" ".join(map(shlex.quote, nodes)))
    wall, proc = timed(rack, ["env", f"CFG={rack.state.ssh_config}", "bash", "-c", script])
    if proc.stdout.split() != ["failed", "0"]:
        sys.exit(f"bench: the ssh loop's checks failed: {proc.stdout}{proc.stderr[-1000:]}")
    return wall


def throughput_phase(rack: Rack, tmp: Path, *extra: str) -> tuple[float, set[str]]:
    """The throughput phase, from its first command to the end of its last (pytest's start, the
    nodes' surveys and the report are not part of it: bench.throughput.load_phase), and which
    checks ran (the functions)."""
    _, doc = pytest_run(rack, tmp / f"phase{'-'.join(extra) or '-serial'}", TESTS, *extra)
    if failed(doc):
        sys.exit(f"bench: throughput checks failed on a healthy rack:\n{said(doc)}")
    return load_phase(doc["tests"]), {t["check"] for t in doc["tests"] if t["outcome"] == "passed"}


def measure_one(count: int, tmp: Path) -> dict:
    rack = Rack.up(generated_name("thor", count), name=f"scale{count}")
    try:
        nodes = [n.name for n in rack.profile.nodes]
        row = {"nodes": count, "up": rack.record["up_seconds"]}
        row["suite"], doc = pytest_run(rack, tmp / "suite", "-k", NOT_THROUGHPUT)
        if failed(doc):
            sys.exit(f"bench: the suite failed on a healthy {count}-node rack:\n{said(doc)}")
        row["checks"] = len(doc["tests"])
        row["mesh"], row["connect_ms"] = mesh_alone(rack)
        row["connect_ms"] *= 1000
        row["fixed_ms"] = fixed_cost(rack, tmp) * 1000
        row["same"], doc = pytest_run(rack, tmp / "same", "-k", SAME_CHECKS)
        row["same_checks"] = len(doc["tests"])
        row["testinfra"] = testinfra(rack, tmp, nodes)
        row["ssh_loop"] = ssh_loop(rack, nodes)
        row["phase"], ran = throughput_phase(rack, tmp)
        row["phase_n2"], _ = throughput_phase(rack, tmp, "-n", "2")
        row["bound"], row["rounds"] = bound(rack.inventory, ran)
        return row
    finally:
        rack.down()


def targets(rows: list[dict]) -> list[str]:
    """Each target of the scale issue: met, or not and why."""
    by_n = {r["nodes"]: r for r in rows}
    out = []

    def say(ok: bool, text: str, why: str = "") -> None:
        out.append(f"  [{'met' if ok else 'NOT met'}] {text}" + ("" if ok or not why else f": {why}"))

    for n, limit in ((32, 10.0), (5, 1.5)):
        if n in by_n:
            m = by_n[n]["mesh"]
            say(m < limit, f"SSH mesh of {n} nodes in {m:.1f} s (target under {limit:g} s)",
                f"each login costs the client and sshd about 45 ms of CPU here, all {n} nodes on these two "
                f"cores: {n * (n - 1)} logins are about {n * (n - 1) * 0.045 / 2:.0f} s of both cores "
                "(a real rack spreads them over its nodes)")
    small = min(by_n, key=lambda n: abs(n - 4))     # the yardstick: the 4-node run
    big = max(by_n)
    if big != small:
        growth = by_n[big]["suite"] / by_n[small]["suite"]
        say(growth <= big / small, f"suite without throughput, {big} against {small} nodes: x{growth:.1f} "
            f"(linear: at most x{big / small:.1f})",
            "the mesh's logins grow as n*(n-1), all on the same two cores")
    for r in rows:
        # issue 45's targets, with a margin that holds on an ordinary machine: at least 1.2x faster
        # than both peers on a pair of nodes, and at 8 nodes and more 6x testinfra and 12x the loop
        for peer, key, at_eight in (("testinfra", "testinfra", 6), ("ssh loop", "ssh_loop", 12)):
            target = 1.2 if r["nodes"] <= 2 else at_eight if r["nodes"] >= 8 else None
            seconds = r[key]
            if target is not None:
                say(r["same"] * target < seconds, f"{r['nodes']} nodes, same checks: rackproof {r['same']:.2f} s, "
                    f"{peer} {seconds:.2f} s (x{seconds / r['same']:.2f}; target: more than x{target})")
        say(r["fixed_ms"] <= 1.5, f"{r['nodes']} nodes: fixed cost of a check {r['fixed_ms']:.1f} ms (target 1.5 ms)")
        for key, how in (("phase", "without -n"), ("phase_n2", "with -n 2")):
            say(r[key] <= 1.2 * r["bound"], f"{r['nodes']} nodes: throughput phase {how} {r[key]:.1f} s, bound "
                f"{r['bound']:g} s ({r['rounds']} rounds; x{r[key] / r['bound']:.2f}, target x1.2)")
    return out


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = [r["nodes"] for r in rows]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for key, label in (("same", "rackproof"), ("testinfra", "pytest-testinfra (paramiko)"),
                       ("ssh_loop", "ssh NODE CMD loop"), ("suite", "rackproof, whole suite w/o throughput")):
        ax.plot(n, [r[key] for r in rows], marker="o", label=label)
    ax.set_xlabel("nodes")
    ax.set_ylabel("wall time (s)")
    ax.set_title("lane speed, hostname and SSH mesh checks on the simulated rack (2 cores)")
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", default="2,5,8,16,32", help="node counts, comma-separated")
    parser.add_argument("--plot", default=str(REPO / "bench" / "scale.png"), help="where the PNG goes")
    args = parser.parse_args()
    rows = []
    for count in (int(x) for x in args.nodes.split(",")):
        with tempfile.TemporaryDirectory(prefix="rackproof-scale-") as tmp:
            rows.append(measure_one(count, Path(tmp)))
        print(f"measured {count} nodes", file=sys.stderr)
    print(f"{'nodes':>5} {'checks':>6} {'suite':>7} {'mesh':>6} {'fixed':>7} | {'same':>6} {'testinfra':>9} "
          f"{'ssh loop':>8} {'xTI':>5} {'xloop':>6} | {'rounds':>6} {'bound':>6} {'phase':>6} {'-n 2':>6} | {'connect':>7}")
    for r in rows:
        print(f"{r['nodes']:>5} {r['checks']:>6} {r['suite']:>6.1f}s {r['mesh']:>5.1f}s {r['fixed_ms']:>5.1f}ms | "
              f"{r['same']:>5.1f}s {r['testinfra']:>8.1f}s {r['ssh_loop']:>7.1f}s {r['testinfra'] / r['same']:>5.1f} "
              f"{r['ssh_loop'] / r['same']:>6.1f} | {r['rounds']:>6} {r['bound']:>5.0f}s {r['phase']:>5.1f}s "
              f"{r['phase_n2']:>5.1f}s | {r['connect_ms']:>5.0f}ms")
    print("targets:")
    print("\n".join(targets(rows)))
    plot(rows, Path(args.plot))
    print(f"plot: {args.plot}")


if __name__ == "__main__":
    main()
