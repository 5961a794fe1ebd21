"""Benchmark: the throughput phase of an acceptance run against a simulated rack, without and
with pytest-xdist, against its bound.

The bound is what the physics allows: a round (every node sends once and receives once) takes
one measurement's length, iperf3's seconds and its warm-up, so the phase takes at least the
rounds of each throughput check x that length. Printed: wall times, the bound, and the ratio
of each run to it (the target: 1.2 at most). Figures are ratios measured in one run, not timed
assertions.

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

from rackproof.exitstatus import INCOMPLETE  # noqa: E402
from rackproof.inventory import FINISHED, load_inventory  # noqa: E402
from rackproof.kinds import rounds  # noqa: E402
from rackproof.probes.iperf import WARM_UP_SECONDS  # noqa: E402
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
    # a run of the throughput checks alone is narrowed by its test path: INCOMPLETE when they pass
    if proc.returncode != INCOMPLETE:
        sys.exit(f"bench: the throughput tests did not pass:\n{proc.stdout[-3000:]}{proc.stderr[-2000:]}")
    return wall


def checks(junit: Path) -> set[str]:
    """The throughput checks that ran (the functions, not their pairs)."""
    return {case.get("name").split("[")[0] for case in ET.parse(junit).getroot().iter("testcase")
            if case.find("skipped") is None}


def bound(inventory_path: Path, ran: set[str]) -> tuple[float, int]:
    """(the phase's bound in seconds, the rounds of one check)."""
    inventory = load_inventory(inventory_path)
    count = len(rounds("link_pair", inventory.at(FINISHED)))
    return len(ran) * count * (inventory.expect.iperf_seconds + WARM_UP_SECONDS), count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="thor5")
    parser.add_argument("--workers", default="2", help="pytest-xdist -n (default 2)")
    args = parser.parse_args()
    rack = Rack.up(args.profile, name=f"bench-{args.profile}")
    try:
        with tempfile.TemporaryDirectory(prefix="rackproof-bench-") as tmp:
            serial_junit, xdist_junit = Path(tmp, "serial.xml"), Path(tmp, "xdist.xml")
            serial = run_suite(rack, serial_junit)
            parallel = run_suite(rack, xdist_junit, "-n", args.workers)
            ran = checks(serial_junit)
            limit, count = bound(rack.inventory, ran)
    finally:
        rack.down()
    print(f"throughput phase of {args.profile}: {len(ran)} checks, each in {count} rounds")
    print(f"  serial wall time      {serial:7.1f} s   ratio to the bound {serial / limit:5.2f}")
    print(f"  xdist -n {args.workers:<3} wall     {parallel:7.1f} s   ratio to the bound {parallel / limit:5.2f}")
    print(f"  bound                 {limit:7.1f} s   (rounds x (iperf3 seconds + warm-up) per check)")


if __name__ == "__main__":
    main()
