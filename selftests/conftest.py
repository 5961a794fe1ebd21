"""Selftests: the suite's own tests. Shared helpers live in selftests/suite.py.

scripts/selftest.sh runs them on five xdist workers, `--dist loadscope` with the scheduler
below. Every module that brings up simulated racks (named test_sim_*.py or *_sim.py) is one
scope, so that its racks stay on one worker; any other test is a scope of its own. Three workers
take rack modules first and the other two the other tests first; each takes what is left after.
So three racks run beside the other tests, which are mostly computing, and more once those are
done: a rack's run waits mostly on its own bounds and shaped lanes, and while three racks waited
at once beside one worker of the other tests the two cores were still idle for a tenth of CI
(/proc/stat at 83644bd: 118 of 1,232 core-seconds with four workers; with three, at 018741b,
305 of 1,454). The loads of two racks of one profile take turns by the product's own cluster
locks. (pytest-xdist's `loadgroup` would say the scopes with a marker, but it does not group
under pytest 9.)"""

import re

from hypothesis import settings

pytest_plugins = ["pytester"]

# no hypothesis deadline: a deadline is a timed assertion, and on two cores beside the simulated
# racks one example of test_probe_lldp took 354 ms once (0.15 ms when asked again) and failed CI
settings.register_profile("selftests", deadline=None)
settings.load_profile("selftests")

RACK_MODULE = re.compile(r"(?:^|/)(?:(?P<module>test_sim_\w+|\w+_sim))\.py::")
RACKS_FIRST = 3            # workers that take rack modules first
# Each rack module's seconds on its worker (the CI log's slowest modules, two runs on 2026-12-07,
# after the kernel log and diagnosis modules got shorter). The longest go first: a long module
# handed out last would run alone at the end, with the other workers done and the cores idle
# (xdist's own order, by number of tests, handed out the 108 s diagnosis module as nearly the last).
# A module not named here is taken for a middling one. The acceptance module, 360-410 s on its
# worker and two thirds of CI's wall time, is two since: thor5's, and the two-node racks'.
RACK_MODULE_SECONDS = {
    "test_acceptance_sim": 200, "test_acceptance_two_nodes_sim": 100, "test_rack_life_sim": 144,
    "test_scale_sim": 110, "test_sparkrun_sim": 120, "test_kernel_log_sim": 100, "test_diagnosis_sim": 78, "test_causes_sim": 65, "test_rack_life_faults_sim": 61,
    "test_path_causes_sim": 52, "test_ci_examples_sim": 51, "test_sim_thor5": 49, "test_history_sim": 41,
    "test_sim_spark2": 40, "test_bond_hashing_sim": 38, "test_step9_sim": 35, "test_hostile_user_sim": 32,
    "test_sim_lifecycle": 32, "test_spark_links_sim": 31, "test_cx7_hardware_sim": 31, "test_doctor_sim": 29,
    "test_verdict_sim": 28, "test_transient_sim": 26, "test_changes_sim": 25, "test_rollback_ready_sim": 18,
    "test_nccl_setup_sim": 17, "test_gpus_sim": 11, "test_sim_help": 1,
}
MIDDLING_SECONDS = 40
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


def _order(item) -> tuple[bool, float]:
    """Rack modules first, the longest first; the other tests after them, as collected (stable)."""
    rack = RACK_MODULE.search(item.nodeid)
    if rack is None:
        return True, 0.0
    return False, -RACK_MODULE_SECONDS.get(rack["module"], MIDDLING_SECONDS)


def pytest_collection_modifyitems(items):
    items.sort(key=_order)


def pytest_xdist_make_scheduler(config, log):
    if config.getoption("dist") != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling

    config.option.loadscopereorder = False    # the order above, not xdist's (by number of tests)

    class RackModules(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return nodeid.split("::", 1)[0] if RACK_MODULE.search(nodeid) else nodeid

        def _assign_work_unit(self, node) -> None:
            """The queue holds the rack modules first, the longest first (as collected): the
            first RACKS_FIRST workers take from its front, the others from its back."""
            if self.nodes.index(node) >= RACKS_FIRST:
                self.workqueue.move_to_end(next(reversed(self.workqueue)), last=False)
            super()._assign_work_unit(node)

    return RackModules(config, log)
