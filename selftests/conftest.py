"""Selftests: the suite's own tests. Shared helpers live in selftests/suite.py.

scripts/selftest.sh runs them on three xdist workers, `--dist loadscope` with the scheduler
below. Every module that brings up simulated racks (named test_sim_*.py or *_sim.py) is one
scope, so that its racks stay on one worker; any other test is a scope of its own. Two workers
take rack modules first and the third the other tests first; each takes what is left after.
So two racks run beside the other tests, which are mostly computing, and three once those are
done: a rack's run waits mostly on its own bounds and shaped lanes (more than a core of the two
idle while one runs). The loads of two racks of one profile take turns by the product's own
cluster locks. (pytest-xdist's `loadgroup` would say the scopes with a marker, but it does not
group under pytest 9.)"""

import re

pytest_plugins = ["pytester"]

RACK_MODULE = re.compile(r"(?:^|/)(?:test_sim_\w+|\w+_sim)\.py::")
RACKS_FIRST = 2            # workers that take rack modules first
MODULE_SECONDS: dict[str, float] = {}


def pytest_runtest_logreport(report):
    module = report.nodeid.split("::", 1)[0]
    MODULE_SECONDS[module] = MODULE_SECONDS.get(module, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter, config):
    """With --durations N, the N slowest modules too (their tests' set-up, call and tear-down):
    a rack module's is its time on its one worker, so CI's log says which modules its minutes go to."""
    count = config.getoption("durations")
    if not count or hasattr(config, "workerinput"):
        return
    terminalreporter.write_sep("=", f"slowest {count} modules")
    for module, seconds in sorted(MODULE_SECONDS.items(), key=lambda kv: -kv[1])[:count]:
        terminalreporter.write_line(f"{seconds:8.2f}s {module}")


def pytest_collection_modifyitems(items):
    items.sort(key=lambda item: not RACK_MODULE.search(item.nodeid))     # stable: rack modules first


def pytest_xdist_make_scheduler(config, log):
    if config.getoption("dist") != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class RackModules(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return nodeid.split("::", 1)[0] if RACK_MODULE.search(nodeid) else nodeid

        def _assign_work_unit(self, node) -> None:
            """The queue holds the rack modules first (collected first, and xdist keeps that
            order among scopes of one size, after the bigger ones): the first RACKS_FIRST
            workers take from its front, the others from its back."""
            if self.nodes.index(node) >= RACKS_FIRST:
                self.workqueue.move_to_end(next(reversed(self.workqueue)), last=False)
            super()._assign_work_unit(node)

    return RackModules(config, log)
