"""Selftests: the suite's own tests. Shared helpers live in selftests/suite.py.

scripts/selftest.sh runs them on two xdist workers, `--dist loadscope` with the scheduler below:
every test of a module that brings up simulated racks (named test_sim_*.py or *_sim.py) goes to
one worker, in turn, so racks never run side by side and their figures are the rack's alone;
any other test is a scope of its own and goes to whichever worker is free. (pytest-xdist's
`loadgroup` would say this with a marker, but it does not group under pytest 9.)"""

import re

pytest_plugins = ["pytester"]

RACK_MODULE = re.compile(r"(?:^|/)(?:test_sim_\w+|\w+_sim)\.py::")


def pytest_xdist_make_scheduler(config, log):
    if config.getoption("dist") != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class RacksInTurn(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return "simulated racks" if RACK_MODULE.search(nodeid) else nodeid

    return RacksInTurn(config, log)
