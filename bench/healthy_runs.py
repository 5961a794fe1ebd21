"""Benchmark: N whole acceptance runs in a row (default 20) against a healthy simulated thor5
rack with -n 2, each on a rack of its own (`rackproof sim run`: up, the suite, always down).
A healthy rack must pass every time: a failure here is a false alarm of the suite.

Printed per run: exit status, failures (and errors) by name, duration, the bonded -P 4 figures
(lowest, and how many pairs needed their retry with other client ports); then a summary.
Each run takes the simulated racks' lock (RACKPROOF_SIM_LOCK, default /run/rackproof-sim.lock: root's own folder, where
no other user can make or hold the file)
for itself, so racks of others run between two runs and never during one. With --busy, a
process of its own keeps one core busy the whole time (a controller that does other work), and
is stopped at the end.

    sudo .venv/bin/python bench/healthy_runs.py [N] [--profile thor5] [--busy]

Exits 1 when any run did not pass.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LOCK = os.environ.get("RACKPROOF_SIM_LOCK", "/run/rackproof-sim.lock")
JUDGED, RETRIED = "bonded rate", "bonded rate, other attempt"   # test_iperf3_bonded_four_streams' figures
BONDED = (JUDGED, RETRIED)


def one_run(profile: str, k: int, junit: Path) -> dict:
    started = time.monotonic()
    proc = subprocess.run(
        ["flock", LOCK, sys.executable, "-m", "rackproof.cli", "sim", "run", profile, "--name", f"healthy{k}", "--",
         "-n", "2", "-q", "-p", "no:cacheprovider", f"--junitxml={junit}"],
        cwd=REPO, capture_output=True, text=True)
    run = {"exit": proc.returncode, "seconds": time.monotonic() - started, "failed": [], "bonded": []}
    if junit.exists():
        run["failed"] = [f"{case.get('name')} ({tag})" for case in ET.parse(junit).getroot().iter("testcase")
                         for tag in ("failure", "error") if case.find(tag) is not None]
    folder = re.search(r"^report folder: (.+)$", proc.stdout, re.M)
    if folder:
        tests = json.loads((REPO / folder[1] / "results.json").read_text())["tests"]
        run["bonded"] = [m for t in tests for m in t.get("measurements", []) if m["kind"] in BONDED]
    else:
        run["failed"].append(f"no report folder; the run ended with: {(proc.stdout + proc.stderr)[-500:]}")
    return run


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", type=int, nargs="?", default=20)
    ap.add_argument("--profile", default="thor5")
    ap.add_argument("--busy", action="store_true", help="keep one core busy meanwhile")
    a = ap.parse_args()
    runs = []
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if a.busy else None
    try:
        return _runs(a, runs)
    finally:
        if busy is not None:
            busy.kill()
            busy.wait()


def _runs(a, runs: list) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(1, a.runs + 1):
            run = one_run(a.profile, k, Path(tmp) / f"{k}.xml")
            runs.append(run)
            judged = [m["value"] for m in run["bonded"] if m["kind"] == JUDGED]
            retried = sum(m["kind"] == RETRIED for m in run["bonded"])
            print(f"run {k}/{a.runs}: exit {run['exit']}, {len(run['failed'])} failed, {run['seconds']:.0f} s, "
                  f"bonded -P 4 lowest {min(judged, default=float('nan')):g} Gbit/s of {len(judged)} pairs, "
                  f"{retried} retried" + "".join(f"\n    {name}" for name in run["failed"]), flush=True)
    bad = [k for k, run in enumerate(runs, start=1) if run["exit"] != 0 or run["failed"]]
    seconds = [run["seconds"] for run in runs]
    print(f"{len(runs)} runs, {len(runs) - len(bad)} passed, {len(bad)} with failures"
          + (f" (runs {', '.join(map(str, bad))})" if bad else "")
          + f"; {min(seconds):.0f}-{max(seconds):.0f} s a run, {sum(seconds) / 60:.1f} min in all; "
          f"bonded -P 4 retried {sum(m['kind'] == RETRIED for run in runs for m in run['bonded'])} times "
          f"in {sum(m['kind'] == JUDGED for run in runs for m in run['bonded'])} measurements")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
