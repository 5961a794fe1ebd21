"""The same report with and without xdist: evidence, measurements, facts and scope reach the
controller from the workers, and tests keep their collection order."""

import re

from selftests.report_suite import run_report
from selftests.suite import REPLAYS

# what a run found; timings and the run's own header are left out
FOUND = ("id", "check", "outcome", "message", "hint", "capability", "params", "nodes", "interfaces", "pairs",
         "measurements", "facts", "waiver")


# each batch marks its sections with a nonce of its own (rackproof.nodes.host)
NONCE = re.compile(r"rackproof-section-[0-9a-f]{16}")


def _same(text: str) -> str:
    return NONCE.sub("rackproof-section-<nonce>", text)


def found(results: dict) -> dict:
    tests = [{k: t[k] for k in FOUND} | {"commands": [(e["node"], _same(e["command"]), e["exit_status"],
                                                        _same(e["stdout"])) for e in t["evidence"]]}
             for t in results["tests"]]
    return {"verdict": results["verdict"], "counts": results["counts"], "tests": tests, "nodes": results["nodes"],
            "topology": results["topology"], "scope": results["scope"]}


def test_serial_and_two_workers_give_the_same_report(pytester):
    replay = str(REPLAYS / "thor5-lane-down-fec-mismatch")
    serial = run_report(pytester, "--replay", replay, name="serial")
    parallel = run_report(pytester, "--replay", replay, "-n", "2", name="xdist")
    assert (serial.results["run"]["xdist_workers"], parallel.results["run"]["xdist_workers"]) == (0, 2)
    assert serial.results["verdict"]["decision"] == "ACCEPTED WITH LIMITS"
    assert serial.results["scope"] and any(t["measurements"] for t in serial.results["tests"])
    assert any(t["evidence"] for t in parallel.results["tests"])
    a, b = found(serial.results), found(parallel.results)
    for part in a:
        assert a[part] == b[part], part
