"""Benchmark: the throughput phase of an acceptance run against the simulated thor5 rack,
serially and with pytest-xdist, against its lower bound.

The lower bound is what perfect scheduling could reach: the pair tests run in rounds of
disjoint pairs, so no schedule beats (sum over rounds of the longest test in the round),
taken from the serial run's own per-test durations. Printed: wall times, the lower bound,
and the ratio of each run to it. Figures are ratios measured in one run, not timed assertions.

    sudo .venv/bin/python bench/throughput.py [--workers 2] [--profile thor5]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from rackproof.inventory import load_inventory  # noqa: E402
from rackproof.schedule import round_robin  # noqa: E402
from rackproof.sim.rack import Rack  # noqa: E402

TESTS = "tests_network/test_throughput.py"


def run_suite(rack: Rack, junit: Path, *extra: str) -> float:
    """Wall time of the throughput tests run in the bench namespace."""
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "rackproof.cli", "sim", "exec", "--name", rack.name, "--",
         sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--inventory", str(rack.inventory),
         f"--junitxml={junit}", f"--html={junit.with_suffix('.html')}", TESTS, *extra],
        cwd=REPO, capture_output=True, text=True)
    wall = time.monotonic() - started
    if proc.returncode != 0:
        sys.exit(f"bench: the throughput tests did not pass:\n{proc.stdout[-3000:]}{proc.stderr[-2000:]}")
    return wall


def durations(junit: Path) -> dict[str, float]:
    return {case.get("name"): float(case.get("time")) for case in ET.parse(junit).getroot().iter("testcase")}


def lower_bound(inventory_path: Path, per_test: dict[str, float]) -> tuple[float, int]:
    inventory = load_inventory(inventory_path)
    names = [n.name for n in inventory.nodes if n.address]
    rounds = round_robin(names)
    bound, count = 0.0, 0
    for test in sorted({name.split("[")[0] for name in per_test}):
        for rnd in rounds:
            times = [per_test.get(f"{test}[{a}->{b}]") for a, b in rnd]
            times = [t for t in times if t is not None]
            if times:
                bound += max(times)
                count += 1
    return bound, count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="thor5")
    parser.add_argument("--workers", default="2", help="pytest-xdist -n (default 2: a thor5 round has two pairs)")
    args = parser.parse_args()
    rack = Rack.up(args.profile, name=f"bench-{args.profile}")
    try:
        with tempfile.TemporaryDirectory(prefix="rackproof-bench-") as tmp:
            serial_junit, xdist_junit = Path(tmp, "serial.xml"), Path(tmp, "xdist.xml")
            serial = run_suite(rack, serial_junit)
            parallel = run_suite(rack, xdist_junit, "-n", args.workers)
            per_test = durations(serial_junit)
            bound, rounds = lower_bound(rack.inventory, per_test)
    finally:
        rack.down()
    print(f"throughput phase of {args.profile}: {len(per_test)} pair tests in {rounds} rounds of disjoint pairs")
    print(f"  serial wall time      {serial:7.1f} s   ratio to lower bound {serial / bound:5.2f}")
    print(f"  xdist -n {args.workers:<3} wall     {parallel:7.1f} s   ratio to lower bound {parallel / bound:5.2f}")
    print(f"  lower bound           {bound:7.1f} s   (sum over rounds of the longest test, from the serial run)")


if __name__ == "__main__":
    main()
