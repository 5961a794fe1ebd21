"""pytest-xdist's workers while the controller measures: they only judge what its plan measured,
so until the plan is written they start up on CPU nobody else wants. On the simulated rack the
nodes share the controller's cores, and a worker's start-up (Python, pytest, collection) beside
the facts phase made it 1.5 s slower (thor5, 2026-12-07: facts and mesh 7.0-7.8 s with -n 2
against 5.1-6.4 s serially; 5.3-5.7 s against 5.2-5.6 s with the workers idle).

Each worker starts at a lower priority (niceness, xdist's spec: its own start-up included). As
root the controller also puts each into SCHED_IDLE as it starts, and back to SCHED_OTHER once the
plan is written: a worker left idle could wait without bound on a busy machine, so a controller
that could not undo it (not root) does not do it.
"""

from __future__ import annotations

import os

import pytest

NICE = 10   # a worker's niceness, unless -n's spec says one
PIDS = pytest.StashKey[list[int]]()


def lower(config: pytest.Config, specs) -> None:
    """pytest_xdist_setupnodes: the workers' niceness, before they are started."""
    for spec in specs:
        spec.nice = spec.nice or str(NICE)


def aside(config: pytest.Config, node) -> None:
    """pytest_configure_node: a started worker idles until the plan is written (as root)."""
    if os.geteuid() != 0:
        return
    pid = node.gateway._rinfo().pid   # cached by xdist before this hook: no round trip
    try:
        os.sched_setscheduler(pid, os.SCHED_IDLE, os.sched_param(0))
    except OSError:   # gone already, or not ours: it starts as it would have
        return
    config.stash.setdefault(PIDS, []).append(pid)


def back(config: pytest.Config) -> None:
    """Once the plan is written: the workers judge at their niceness, as any process."""
    for pid in config.stash.get(PIDS, []):
        try:
            os.sched_setscheduler(pid, os.SCHED_OTHER, os.sched_param(0))
        except OSError:   # gone meanwhile: nothing to undo
            pass
    config.stash[PIDS] = []
