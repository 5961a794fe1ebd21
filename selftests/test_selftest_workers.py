"""How scripts/selftest.sh spreads the selftests over its five xdist workers (selftests/conftest.py):
each rack module stays on one worker; three workers take rack modules first and the other two the
other tests, then rack modules once the other tests are all taken."""

from __future__ import annotations

import json
from pathlib import Path

CONFTEST = (Path(__file__).parent / "conftest.py").read_text()

# each test records its module, worker and when it ran
TESTS = '''
import json, os, time
import pytest

@pytest.mark.parametrize("k", range({tests}))
def test_recorded(k):
    start = time.monotonic()
    time.sleep({seconds})
    with open({log!r}, "a") as log:
        log.write(json.dumps([__name__, os.environ["PYTEST_XDIST_WORKER"], start, time.monotonic()]) + "\\n")
'''


def ran_by_worker(pytester, modules: dict[str, int], passed: int) -> dict[str, list[str]]:
    """The modules (name: how many tests of 0.3 s) and ten quick other tests run as
    scripts/selftest.sh runs the selftests: each worker's modules in the order it ran them."""
    log = pytester.path / "log.jsonl"
    pytester.makeconftest(CONFTEST)
    for name, tests in modules.items():
        pytester.makepyfile(**{name: TESTS.format(tests=tests, seconds=0.3, log=str(log))})
    pytester.makepyfile(test_other=TESTS.format(tests=10, seconds=0.05, log=str(log)))
    result = pytester.runpytest_subprocess("-p", "xdist", "-n", "5", "--dist", "loadscope", "-q",
                                           "-p", "no:cacheprovider", timeout=120)
    result.assert_outcomes(passed=passed)
    by_worker: dict[str, list[tuple[float, str]]] = {}
    for module, worker, start, _ in map(json.loads, log.read_text().splitlines()):
        by_worker.setdefault(worker, []).append((start, module))
    return {worker: [module for _, module in sorted(records)] for worker, records in by_worker.items()}


def test_three_workers_start_with_rack_modules_the_other_two_with_the_other_tests_then_racks(pytester):
    racks = [f"test_rack{i}_sim" for i in range(8)]
    ran = ran_by_worker(pytester, dict.fromkeys(racks, 3), passed=34)
    assert all(len({w for w, modules in ran.items() if name in modules}) == 1 for name in racks), ran
    firsts = sorted(modules[0] in racks for modules in ran.values())
    assert firsts == [False, False, True, True, True], ran
    others = [modules for modules in ran.values() if modules[0] not in racks]
    assert sum(modules.count("test_other") for modules in others) == 10, ran   # all of them, by those two
    for modules in others:   # the other tests first, then rack modules
        k = modules.count("test_other")
        assert modules[:k] == ["test_other"] * k and set(modules[k:]) <= set(racks), ran
    assert any(len(modules) > modules.count("test_other") for modules in others), ran


def test_the_longest_rack_modules_are_handed_out_first_and_the_shortest_last(pytester):
    """By the seconds measured for each (conftest.RACK_MODULE_SECONDS), not by xdist's own order
    (the most tests first), which handed out a long module of one test nearly last."""
    # named longest and named shortest, one test each; not named (middling): one of six tests, eight of one
    ran = ran_by_worker(pytester, {"test_acceptance_sim": 1, "test_gpus_sim": 1, "test_many_sim": 6,
                                   **{f"test_unnamed{i}_sim": 1 for i in range(8)}}, passed=26)
    assert "test_acceptance_sim" in {modules[0] for modules in ran.values()}, ran
    # taken from the back of the queue, by a worker of the other tests
    assert any("test_gpus_sim" in modules for modules in ran.values() if modules[0] == "test_other"), ran
