"""Benchmark: N healthy simulated thor5 racks in a row (default 20), each with one of the rack's
own life events (rackproof_sim.faults.RACK_LIFE: an sshd restarting, a node rebooting, a
measurement's iperf3 killed, a broken tool, the controller's disk full under the report) planted
on a random node at a random moment. None may make the rack REJECTED, and each run's report
(results.json, and the run's terminal output for what ends it) must name its event.

Each run takes the simulated racks' lock (RACKPROOF_SIM_LOCK, default /run/rackproof-sim.lock: root's own folder, where
no other user can make or hold the file, as
bench/healthy_runs.py) for itself (so do not run it under that lock), brings a rack of its own up, plants, runs the whole suite (-n 2) in the rack's bench
namespace, heals and brings the rack down, whatever happened.

    sudo .venv/bin/python bench/rack_life.py [--runs N] [--seed S] [--step K]

Exits 1 when any run was REJECTED or did not name its event.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rackproof_sim import faults
from rackproof_sim.rack import Rack
from rackproof_sim.state import RackState

REPO = Path(__file__).resolve().parents[1]
LOCK = os.environ.get("RACKPROOF_SIM_LOCK", "/run/rackproof-sim.lock")
NODES = ("thor-1", "thor-2", "thor-3", "thor-4", "thor-5")
# how a run names each event: words of the product's, in its results.json or its terminal output
NAMED = {
    "sshd-restart": r"Connection refused",
    "node-reboot": r"rebooted",
    # a reboot before the run first reached the node left nothing measured before it: what the
    # run met is a node refusing its first connects, and that is what it names
    "node-reboot first-connect": r"refused \(Connection refused\)",
    "measurement-killed": r"mid-measurement",
    "tool-broken": r"does not run: `",
    "controller-disk-full": r"rackproof: the report could not be written in",
}


def planting(kind: str, rng: random.Random, folder: Path) -> tuple[str, list[str]]:
    """(node, fault arguments) for one event at a random moment the run meets."""
    node = rng.choice(NODES)
    # the mesh's moment is its fan-out (xargs) and the load's its clients (iperf3 -c): `ssh` and
    # `iperf3` alone first start when the survey asks each tool its version, before anything is measured
    if kind == "sshd-restart":     # refused for 3 s at the first connect, or when the SSH mesh begins
        return node, ["3", rng.choice(["first-connect", "xargs"])]
    if kind == "node-reboot":      # away 10 s: at the first connect, in the mesh, or in the load
        return node, ["10", rng.choice(["first-connect", "xargs", "iperf3 -c"])]
    if kind == "measurement-killed":
        return node, [rng.choice(["client", "server"])]
    if kind == "tool-broken":
        return node, ["iperf3"]
    if kind == "controller-disk-full":
        (folder / "full").mkdir()
        return "bench", [str(folder / "full")]
    raise SystemExit(f"bench/rack_life.py does not know how to plant {kind!r}: add it to planting()")


def one_run(k: int, kind: str, rng: random.Random, tmp: Path, step: int | None) -> dict:
    folder = tmp / f"run{k}"
    folder.mkdir()
    name = f"life{os.getpid() % 10000}r{k}"
    started = time.monotonic()
    with open(LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        rack = Rack.up("thor5", name)
        try:
            node, args = planting(kind, rng, folder)
            report = Path(args[0]) if kind == "controller-disk-full" else folder
            faults.plant(rack, node, kind, args)
            try:
                proc = subprocess.run(
                    ["ip", "netns", "exec", rack.topo.bench, sys.executable, "-m", "pytest", "-c", str(REPO / "pytest.ini"),
                     "--rootdir", str(REPO), "-q", "-p", "no:cacheprovider", "-n", "2",
                     f"--inventory={rack.inventory}", f"--html={report / 'report.html'}",
                     *(["--step", str(step)] if step else []),
                     *(str(REPO / tests) for tests in ("tests_physical", "tests_network", "tests_ssh", "tests_serving"))],
                    cwd=folder, capture_output=True, text=True, timeout=1800, env=os.environ | {"TMPDIR": str(folder)})
            finally:
                # what the event's watcher said (whether and when it happened), before heal and down
                said = "".join(log.read_text()[-300:] for log in
                               (rack.state.node_dir(node) / "log").glob("*.log")
                               if log.name in ("lifeevents.log", "measurement-killed.log")) if node != "bench" else ""
                faults.heal_all(rack)
        finally:
            Rack(RackState(name)).down()
    output = proc.stdout + proc.stderr
    kept = re.search(r"results\.json kept at (\S+)$", output, re.M)
    results_path = Path(kept[1]) if kept else report / "results.json"
    results = results_path.read_text() if results_path.exists() else ""
    verdict = json.loads(results)["verdict"] if results else {"decision": "no results.json", "summary": ""}
    return {"kind": kind, "node": node, "args": args, "exit": proc.returncode, "verdict": verdict["decision"],
            "why": verdict["summary"],
            "named": bool(re.search(NAMED.get(f"{kind} {args[-1]}", NAMED[kind]), results + output)), "seconds": time.monotonic() - started,
            "tail": f"the event's watcher: {said.strip() or 'nothing'}\n    the run's last words: {output[-600:]}"}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--seed", type=int, default=None, help="the random choices' seed (default: from the time)")
    ap.add_argument("--step", type=int, default=None, help="narrow each run to a build step (shorter, for a try)")
    a = ap.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("bench/rack_life.py brings simulated racks up: run it as root")
    seed = a.seed if a.seed is not None else int(time.time())
    rng = random.Random(seed)
    kinds = [rng.choice(faults.RACK_LIFE) for _ in range(a.runs)]
    print(f"seed {seed}; events from rackproof_sim.faults.RACK_LIFE: {', '.join(faults.RACK_LIFE)}", flush=True)
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        for k, kind in enumerate(kinds, start=1):
            run = one_run(k, kind, rng, Path(tmp), a.step)
            runs.append(run)
            bad = run["verdict"] in ("REJECTED", "no results.json") or not run["named"]
            print(f"run {k}/{a.runs}: {kind} on {run['node']} {' '.join(run['args'][:2]) if kind != 'controller-disk-full' else ''}"
                  f"-> {run['verdict']}, exit {run['exit']}, {'named' if run['named'] else 'NOT NAMED'}, "
                  f"{run['seconds']:.0f} s" + (f"\n    {run['tail']}" if bad else "")
                  + (f"\n    the verdict says: {run['why']}" if run["verdict"] != "ACCEPTED" else ""), flush=True)
    rejected = sum(run["verdict"] in ("REJECTED", "no results.json") for run in runs)
    unnamed = sum(not run["named"] for run in runs)
    print(f"{len(runs)} runs: {rejected} REJECTED (or without results), {unnamed} not naming their event; verdicts "
          + ", ".join(f"{v} {sum(r['verdict'] == v for r in runs)}" for v in sorted({r['verdict'] for r in runs})))
    return 1 if rejected or unnamed else 0


if __name__ == "__main__":
    sys.exit(main())
