"""Selftests: the suite's own tests. Shared helpers live in selftests/suite.py.

Under xdist (scripts/selftest.sh runs two workers), every test of a module that brings up a
simulated rack goes to one worker, one after the other (`--dist loadgroup`): racks never run
side by side, so their throughput figures are the rack's alone, while the other worker runs the
tests that need no rack."""

import pytest

from selftests.simrack import SimRack

pytest_plugins = ["pytester"]


@pytest.hookimpl(tryfirst=True)   # before xdist reads the groups from the markers
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if getattr(item.module, "SimRack", None) is SimRack:
            item.add_marker(pytest.mark.xdist_group("simulated-rack"))
