"""pytest-xdist's workers while the controller measures: they only judge what its plan measured,
so until the plan is written they start up on CPU nobody else wants. On the simulated rack the
nodes share the controller's cores, and a worker's start-up (Python, pytest, collection) beside
the facts phase made it 1.5 s slower (thor5, 2026-12-07: facts and mesh 7.0-7.8 s with -n 2
against 5.1-6.4 s serially; 5.3-5.7 s against 5.2-5.6 s with the workers idle).

Each worker starts at a lower priority (niceness, xdist's spec: its own start-up included). As
root the controller also puts each into SCHED_IDLE as it starts, and back to SCHED_OTHER once the
plan is written: a worker left idle could wait without bound on a busy machine, so a controller
that could not undo it (not root) does not do it.

Where the kernel groups processes by session (autogroup, on by default in Debian's kernels), CPU
is shared between sessions first, and a policy or a niceness counts only inside its own: each
simulated node's sshd and every login is a session of its own, and idle workers in the
controller's session still took that session's share beside them (thor5, 2026-12-07: 5.44 s
before the first load with -n 2, against 4.11 s serially and 4.23 s with the workers stopped).
So as root each worker starts in a session of its own (setsid), whose group the controller sets
to niceness 19 while it measures, and to the worker's own niceness after: as a group it competes
with every other session, and it should no more than the worker does inside one.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys

import pytest

NICE = 10   # a worker's niceness, unless -n's spec says one
PIDS = pytest.StashKey[list[tuple[int, int]]]()   # (a worker's pid, its niceness)
AUTOGROUP_ASIDE = 19   # the session group's niceness while the plan measures: the lowest


def lower(config: pytest.Config, specs) -> None:
    """pytest_xdist_setupnodes: the workers' niceness, before they are started; as root, a local
    worker starts in a session of its own (util-linux's setsid runs it in the same process)."""
    setsid = shutil.which("setsid") if os.geteuid() == 0 else None
    for spec in specs:
        spec.nice = spec.nice or str(NICE)
        if setsid and spec.popen:
            spec.python = f"{shlex.quote(setsid)} {spec.python or shlex.quote(sys.executable)}"


def aside(config: pytest.Config, node) -> None:
    """pytest_configure_node: a started worker idles until the plan is written (as root)."""
    if os.geteuid() != 0:
        return
    pid = node.gateway._rinfo().pid   # cached by xdist before this hook: no round trip
    try:
        os.sched_setscheduler(pid, os.SCHED_IDLE, os.sched_param(0))
    except OSError:   # gone already, or not ours: it starts as it would have
        return
    config.stash.setdefault(PIDS, []).append((pid, int(node.gateway.spec.nice)))   # lower() set it
    _session_niceness(pid, AUTOGROUP_ASIDE)


def back(config: pytest.Config) -> None:
    """Once the plan is written: the workers judge at their niceness, as any process."""
    for pid, nice in config.stash.get(PIDS, []):
        try:
            os.sched_setscheduler(pid, os.SCHED_OTHER, os.sched_param(0))
        except OSError:   # gone meanwhile: nothing to undo
            continue
        _session_niceness(pid, nice)
    config.stash[PIDS] = []


def _session_niceness(pid: int, nice: int) -> None:
    """The niceness of the worker's session group; only a worker that leads its own session (a
    group of the controller's would slow the controller too), and nothing where the kernel has
    no such groups."""
    try:
        if os.getsid(pid) != pid:
            return
        with open(f"/proc/{pid}/autogroup", "w") as group:
            group.write(str(nice))
    except OSError:
        pass
