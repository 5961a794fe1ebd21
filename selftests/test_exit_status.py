"""Exit status = verdict, always (README's table): every verdict reached by every route a check can
take to it, through the plugin, with the exact exit status. The routes are planted in checks of
their own (tests_routes/, the stand-in suite of each run) on the healthy recording's nodes:

    ACCEPTED              passed; a figure under its target (warned); a failure under a waiver   0
    ACCEPTED WITH LIMITS  a non-blocking check failed; could not be confirmed (an error); only
                          "not verified" (the case that exited 0)                                1
    REJECTED              a blocking check failed; could not be confirmed                       1
    INCOMPLETE            narrowed (-k); cut short by a transient fault; narrowed and a
                          non-blocking check failed (1); stopped by Ctrl-C (2)                  6/1/2
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rackproof.ticket import exitstatus
from selftests.suite import REPLAYS, REPO

ROUTES = '''
import pytest

from rackproof.judging.failure import Failure, NotVerified, judge
from rackproof.probes.system import HOSTNAME
from rackproof.inventory.references import REFERENCES, Reference
from rackproof.nodes.remote import NoAnswer
from rackproof.measuring.schedule import LockBusy

ROUTE = None   # the route this run plants on thor-2
REFERENCES["routes.rate"] = Reference("routes.rate", "lane rate", "Gbit/s", lambda e: 22.5, "22.5", target=23.5)


def _planted(kind):
    if ROUTE == kind + " failed":
        raise Failure("thor-2", f"{kind} check", "ok", "broken", "planted")
    if ROUTE == kind + " unconfirmed":
        raise NoAnswer("thor-2: planted: no whole answer")
    if ROUTE == kind + " cut short":
        raise LockBusy("thor-2: planted: a lock not free")


@pytest.mark.capability("routes: the cluster", blocks=True)
def test_blocking(node):
    node.read(HOSTNAME)
    if node.name == "thor-2":
        _planted("blocking")


@pytest.mark.capability("routes: a lane")
def test_limiting(node, measure):
    node.read(HOSTNAME)
    rate = 24.0
    if node.name == "thor-2":
        _planted("limiting")
        if ROUTE == "not verified":
            raise NotVerified("thor-2", "the lane's rate", "planted: no iperf3", "install iperf3")
        if ROUTE == "interrupted":
            raise KeyboardInterrupt   # as Ctrl-C does, in the middle of the run
        rate = {"warned": 23.0, "waived": 20.0}.get(ROUTE, rate)
    judge(measure("routes.rate", node.name, rate, "Gbit/s"), node.name, "planted")
'''

WAIVER = '''[[waiver]]
check = "test_limiting"
node = "thor-2"
justification = "planted"
approved_by = "selftest"
expires = 2099-01-31
'''


def run_routes(pytester, route: str | None, *args: str) -> tuple[int, dict, str]:
    """The stand-in suite (tests_routes/ only) with `route` planted, on the healthy recording:
    (exit status, results.json, output)."""
    root = Path(pytester.path)
    (root / "conftest.py").write_text(f"import sys\nsys.path.insert(0, {str(REPO)!r})\n" + (REPO / "conftest.py").read_text())
    (root / "tests_routes").mkdir()
    (root / "tests_routes" / "test_routes.py").write_text(ROUTES.replace("ROUTE = None", f"ROUTE = {route!r}"))
    ini = "\n".join("testpaths = tests_routes" if line.startswith("testpaths") else line
                    for line in (REPO / "pytest.ini").read_text().splitlines())
    (root / "pytest.ini").write_text(ini + "\n")
    (root / "waivers.toml").write_text(WAIVER)
    waivers = ["--waivers", str(root / "waivers.toml")] if route == "waived" else []
    result = pytester.runpytest_subprocess("-c", str(root / "pytest.ini"), "--rootdir", str(root), "-q",
                                           f"--html={root / 'out' / 'report.html'}", "--replay",
                                           str(REPLAYS / "thor5-healthy"), *waivers, *args, timeout=300)
    output = "\n".join(result.outlines + result.errlines)
    return int(result.ret), json.loads((root / "out" / "results.json").read_text()), output


# (route planted, extra arguments, the verdict, its exit status, the outcome thor-2's check reached)
CASES = [
    (None, (), "ACCEPTED", 0, "passed"),
    ("warned", (), "ACCEPTED", 0, "warned"),
    ("waived", (), "ACCEPTED", 0, "waived"),
    ("limiting failed", (), "ACCEPTED WITH LIMITS", 1, "failed"),
    ("limiting unconfirmed", (), "ACCEPTED WITH LIMITS", 1, "error"),
    ("not verified", (), "ACCEPTED WITH LIMITS", 1, "not verified"),
    ("blocking failed", (), "REJECTED", 1, "failed"),
    ("blocking unconfirmed", (), "REJECTED", 1, "error"),
    (None, ("-k", "limiting"), "INCOMPLETE", exitstatus.INCOMPLETE, "passed"),
    ("limiting cut short", (), "INCOMPLETE", exitstatus.INCOMPLETE, "error"),
    ("limiting failed", ("-k", "limiting"), "INCOMPLETE", 1, "failed"),
    ("interrupted", (), "INCOMPLETE", 2, None),
]


@pytest.mark.parametrize("route, args, decision, status, outcome", CASES,
                         ids=[f"{c[2]}: {c[0] or 'passed'}{' ' + ' '.join(c[1]) if c[1] else ''}" for c in CASES])
def test_every_verdict_by_every_route_exits_as_the_table_says(pytester, route, args, decision, status, outcome):
    exit_status, results, output = run_routes(pytester, route, *args)
    check = "blocking" if route and route.startswith("blocking") else "limiting"
    planted = [t["outcome"] for t in results["tests"] if t["id"].endswith(f"::test_{check}[thor-2]")]
    assert planted == ([outcome] if outcome else []), output
    assert results["verdict"]["decision"] == decision, output
    assert exit_status == status, output
    assert results["run"]["exit_status"] == status
    assert f"verdict: {decision}" in output


def test_every_exit_status_of_a_verdict_is_the_tables():
    """of_run over every verdict and every status pytest can end with."""
    table = dict(exitstatus.TABLE)
    cut_short = {"capabilities": [{"status": "available"}]}       # pytest counted the cut-short check as failed
    failed = {"capabilities": [{"status": "limited"}]}
    for pytest_status in range(6):
        expected = {
            "ACCEPTED": pytest_status,       # 0; never a 0 over a test pytest saw fail
            "ACCEPTED WITH LIMITS": 1, "REJECTED": 1,
            "INCOMPLETE": exitstatus.INCOMPLETE,
        }
        for decision, status in expected.items():
            for caps in (cut_short, failed):
                got = exitstatus.of_run({"decision": decision, **caps}, pytest_status)
                if pytest_status > 1:
                    assert got == pytest_status      # interrupted, internal error, usage: pytest's own
                elif decision == "INCOMPLETE" and caps is failed:
                    assert got == 1 and "INCOMPLETE when a check failed" in table["1"]
                else:
                    assert got == status and (decision in table[str(status)] or status == pytest_status == 0)
