"""Benchmark: an acceptance run against a simulated rack, without and with pytest-xdist, against
its load bound: the throughput phase alone, and the whole suite.

The bound is what the physics allows: a round (every node sends once and receives once) takes
one measurement's length, iperf3's seconds and its warm-up, so the phase takes at least the
rounds of each throughput check x that length. The whole suite's bound adds the lanes' counters,
read before the first load and after the last (the slowest node's reads, from the run's own
evidence, twice). Printed: wall times, the bounds, and the ratio of each run to its bound (the
targets: the phase 1.2x at most; the whole suite 1.15x + 5 s at most), and whether -n was
slower than the serial run (the target: never). Serial runs of one suite differ by a second or
more from run to run, so one run against one run cannot say "never slower": each is run --rounds
times (default 3), serial and -n alternating which goes first, and the medians are compared
(each round's difference is printed too). Figures are measured in one bench run, not timed
assertions.

    sudo .venv/bin/python bench/throughput.py [--workers 2] [--profile thor5] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from rackproof.ticket.exitstatus import INCOMPLETE  # noqa: E402
from rackproof.inventory.model import FINISHED, load_inventory  # noqa: E402
from rackproof.inventory.kinds import rounds  # noqa: E402
from rackproof.nodes.host import BATCH  # noqa: E402
from rackproof.probes.boot import BOOT_ID  # noqa: E402
from rackproof.probes.iperf import WARM_UP_SECONDS  # noqa: E402
from rackproof.probes.survey import SURVEY  # noqa: E402
from rackproof_sim.rack import Rack  # noqa: E402

TESTS = "tests_network/test_throughput.py"
THROUGHPUT_CHECKS = ("test_iperf3_one_stream", "test_iperf3_bonded_four_streams")
# the counters are read as batches (linkhealth.read: Host.read_each), and judged by this check
COUNTER_PROBES = (BATCH.name,)
COUNTERS_CHECK = "test_lane_error_counters_under_load"
RUN_START_AND_END = (SURVEY.name, BOOT_ID.name)


def run_suite(rack: Rack, junit: Path, *extra: str, whole: bool = False) -> tuple[float, Path]:
    """Wall time of the throughput tests (or the whole suite) run in the bench namespace, and
    the run's report folder."""
    started = time.monotonic()
    # `--inventory=PATH` as the README writes it: the space form makes the plugin start pytest
    # again (rackproof.plugin.options), a second start-up a person running the README's command
    # does not pay
    proc = subprocess.run(
        [sys.executable, "-m", "rackproof.cli", "sim", "exec", "--name", rack.name, "--",
         sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--inventory={rack.inventory}",
         f"--junitxml={junit}", f"--html={junit.with_suffix('.html')}",
         # the run's history beside its report: by default it is reports/history.sqlite of the checkout
         f"--history={junit.with_suffix('.sqlite')}", *(() if whole else (TESTS,)), *extra],
        cwd=REPO, capture_output=True, text=True, env=with_bytecode())
    wall = time.monotonic() - started
    # a run of the throughput checks alone is narrowed by its test path: INCOMPLETE when they pass
    if proc.returncode != (0 if whole else INCOMPLETE):
        sys.exit(f"bench: the {'suite' if whole else 'throughput tests'} did not pass:\n"
                 f"{proc.stdout[-3000:]}{proc.stderr[-2000:]}")
    folder = next(line.split(": ", 1)[1] for line in proc.stdout.splitlines() if line.startswith("report folder: "))
    return wall, Path(folder)


def with_bytecode() -> dict[str, str]:
    """The bench's environment, in which Python writes its bytecode as on any machine: a
    PYTHONDONTWRITEBYTECODE of the bench's own environment would make each run (and each xdist
    worker) compile rackproof's source again, while the peers' pip-installed packages come
    compiled."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def counters(report: Path) -> float:
    """Seconds the lanes' counters take once: the slowest node's counter reads after the last
    load (first start to last end: its lanes are read at once), from the run's results.json (the plan gives each lane's link-health check its node's
    reads). Those after the load run alone; the ones before run beside the other facts, so their
    durations say what the facts cost them, not what reading counters costs."""
    tests = json.loads((report / "results.json").read_text())["tests"]
    load_ended = max((ev["started"] + ev["duration"] for t in tests if t["check"] in THROUGHPUT_CHECKS
                      for ev in t["evidence"]), default=0.0)
    spans: dict[str, tuple[float, float]] = {}     # node -> (first read's start, last read's end)
    for t in tests:
        for ev in t["evidence"] if t["check"] == COUNTERS_CHECK else ():
            if ev["probe"] in COUNTER_PROBES and ev["started"] >= load_ended:
                first, last = spans.get(ev["node"], (ev["started"], 0.0))
                spans[ev["node"]] = (min(first, ev["started"]), max(last, ev["started"] + ev["duration"]))
    return max((last - first for first, last in spans.values()), default=0.0)


def load_phase(tests: list[dict]) -> float:
    """Seconds the load phase took in a run (its first server's start to its last stop, from the
    run's results.json "tests"): the part of the whole suite the bound is about. The nodes' surveys
    and boot ids are the run's start and end, not the load's, though the first check that needs a
    node carries them: in a run of the throughput checks alone, they are theirs."""
    spans = [(ev["started"], ev["started"] + ev["duration"]) for t in tests if t["check"] in THROUGHPUT_CHECKS
             for ev in t["evidence"] if ev["probe"] not in RUN_START_AND_END]
    return max(end for _, end in spans) - min(start for start, _ in spans) if spans else 0.0


def checks(junit: Path) -> set[str]:
    """The throughput checks that ran (the functions, not their pairs)."""
    return {case.get("name").split("[")[0] for case in ET.parse(junit).getroot().iter("testcase")
            if case.find("skipped") is None}


def bound(inventory_path: Path, ran: set[str]) -> tuple[float, int]:
    """(the phase's bound in seconds, the rounds of one check)."""
    inventory = load_inventory(inventory_path)
    count = len(rounds("link_pair", inventory.at(FINISHED)))
    return len(ran) * count * (inventory.expect.iperf_seconds + WARM_UP_SECONDS), count


def against_serial(workers: str, serial: list[float], parallel: list[float]) -> str:
    """Whether -n was slower than the serial run on the medians (the target: never), by how much,
    and each round's difference."""
    s, p = statistics.median(serial), statistics.median(parallel)
    verdict = "slower than serial: target not met" if p > s else "not slower than serial: target met"
    rounds = " ".join(f"{b - a:+.1f}" for a, b in zip(serial, parallel))
    return f"  xdist -n {workers} against serial {p - s:+6.1f} s   (x{p / s:.2f}, medians) {verdict}; each round {rounds} s"


def alternating(rounds: int, serial, parallel) -> tuple[list[float], list[float]]:
    """Each run `rounds` times, serial first in even rounds and -n first in odd ones: a machine that
    slows or speeds up during the bench weighs on both alike."""
    walls: tuple[list[float], list[float]] = ([], [])
    for k in range(rounds):
        order = ((0, serial), (1, parallel)) if k % 2 == 0 else ((1, parallel), (0, serial))
        for which, run in order:
            walls[which].append(run(k))
    return walls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="thor5")
    parser.add_argument("--workers", default="2", help="pytest-xdist -n (default 2)")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each, alternating (default 3)")
    args = parser.parse_args()
    rack = Rack.up(args.profile, name=f"bench-{args.profile}")
    try:
        with tempfile.TemporaryDirectory(prefix="rackproof-bench-") as tmp:
            reports: dict[str, Path] = {}     # each kind of run's last report folder

            def run(name: str, *extra: str, whole: bool = False):
                def once(k: int) -> float:
                    wall, reports[name] = run_suite(rack, Path(tmp, f"{name}-{k}.xml"), *extra, whole=whole)
                    return wall
                return once
            serial, parallel = alternating(args.rounds, run("serial"), run("xdist", "-n", args.workers))
            ran = checks(Path(tmp, "serial-0.xml"))
            limit, count = bound(rack.inventory, ran)
            whole_serial, whole_parallel = alternating(args.rounds, run("whole-serial", whole=True),
                                                       run("whole-xdist", "-n", args.workers, whole=True))
            read_once = counters(reports["whole-serial"])
            loaded = load_phase(json.loads((reports["whole-serial"] / "results.json").read_text())["tests"])
            whole_limit, _ = bound(rack.inventory, checks(Path(tmp, "whole-serial-0.xml")) & set(THROUGHPUT_CHECKS))
    finally:
        rack.down()
    whole_limit += 2 * read_once
    target = 1.15 * whole_limit + 5
    print(f"throughput phase of {args.profile}: {len(ran)} checks, each in {count} rounds; medians of {args.rounds} runs")
    for name, walls in (("serial", serial), (f"xdist -n {args.workers}", parallel)):
        print(f"  {name:<12} wall time {statistics.median(walls):7.1f} s   ratio to the bound "
              f"{statistics.median(walls) / limit:5.2f}   (runs {' '.join(f'{w:.1f}' for w in walls)})")
    print(f"  bound                 {limit:7.1f} s   (rounds x (iperf3 seconds + warm-up) per check)")
    print(against_serial(args.workers, serial, parallel))
    print(f"whole suite of {args.profile}, against its load bound (target: 1.15 x bound + 5 s = {target:.1f} s)")
    for name, walls in (("serial", whole_serial), (f"xdist -n {args.workers}", whole_parallel)):
        wall = statistics.median(walls)
        print(f"  {name:<12} wall time {wall:7.1f} s   ratio to the bound {wall / whole_limit:5.2f}   "
              f"target {'met' if max(walls) <= target else 'not met'} by every run (runs {' '.join(f'{w:.1f}' for w in walls)})")
    print(against_serial(args.workers, whole_serial, whole_parallel))
    print(f"  load bound            {whole_limit:7.1f} s   (the phase's bound + the counters read twice, "
          f"{read_once:.1f} s each)")
    print(f"  the serial run's load phase {loaded:5.1f} s   ratio to the phase's bound {loaded / limit:5.2f}")


if __name__ == "__main__":
    main()
