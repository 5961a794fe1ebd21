"""The run's measurement plan (rackproof.measuring.plan), run by the controller before the first check:
the pytest process itself, or pytest-xdist's controller, never a worker. xdist's controller
collects nothing of its own; for an acceptance run it collects the checks itself while its
workers start (collects_for_workers), so that the plan starts without waiting for a worker's
collection. It measures the entries of rackproof.measurements that the selected checks name
(read from their source); the results stay in this process for a serial run, and go to the
workers as JSON in the run's private folder.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from .options import INVENTORY, RECORDING, run_step
from .params import RUN_FOLDER, evidence_log, locks_of
from . import recording, workers
from rackproof.measuring import plan
from rackproof.nodes import portable
from rackproof.checks import entries_named
from rackproof.nodes.host import Host, connect
from rackproof.measuring.linkhealth import LoadLedger
from rackproof.measurements import ALL
from rackproof.nodes.ownservers import OwnServers
from rackproof.measuring.serving import read_access_key

RESULTS = pytest.StashKey[plan.Measured]()
HOSTS = pytest.StashKey[dict[str, Host]]()
ACCESS_KEY = pytest.StashKey[str]()
RETRIED = pytest.StashKey[dict[str, list[str]]]()   # of the hosts closed already
RESULTS_FILE = "plan.json"


def hosts(config: pytest.Config) -> dict[str, Host]:
    """The run's hosts in this process: made once, closed when the run ends (close_hosts)."""
    if HOSTS not in config.stash:
        folder = config.stash.get(RUN_FOLDER, None)
        config.stash[HOSTS] = connect(config.stash[INVENTORY], evidence_log(config), replay=config.stash[RECORDING],
                                      record=recording.folder(config),
                                      servers=OwnServers(folder and folder / "servers"), step=run_step(config))
    return config.stash[HOSTS]


def connects_retried(config: pytest.Config) -> dict[str, list[str]]:
    """{node: each fresh connect of this process that needed more than one attempt}: the rack's
    own life the run met (an sshd restarting, a node rebooting), for the node's row in the report
    even when no check's evidence carries the command that connected. With -n the controller's
    hosts, which measured the plan, are closed before the first check: kept as they closed."""
    found = {name: list(tried) for name, tried in config.stash.get(RETRIED, {}).items()}
    for name, host in config.stash.get(HOSTS, {}).items():
        transport = host.remote.transport
        transport = getattr(transport, "inner", transport)     # (a RecordingTransport wraps it)
        if getattr(transport, "retried", None):
            found.setdefault(name, []).extend(transport.retried)
    return found


def access_key(config: pytest.Config) -> str:
    """The agent's key, from where the inventory says; registered as a secret before first use,
    so it is redacted from evidence, recordings and reports. A replay answers without it."""
    if ACCESS_KEY not in config.stash:
        if config.stash[RECORDING] is not None:
            config.stash[ACCESS_KEY] = "replay-needs-no-key"
        else:
            key = read_access_key(config.stash[INVENTORY].agent)
            evidence_log(config).add_secret(key)
            config.stash[ACCESS_KEY] = key
    return config.stash[ACCESS_KEY]


def close_hosts(config: pytest.Config) -> None:
    if HOSTS in config.stash:
        config.stash[RETRIED] = connects_retried(config)
        for host in config.stash[HOSTS].values():
            host.remote.close()
        del config.stash[HOSTS]


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def collects_for_workers(config: pytest.Config) -> bool:
    """pytest-xdist's controller of an acceptance run: it collects the checks for its plan itself."""
    return INVENTORY in config.stash and not _is_worker(config) and _has_workers(config)


def _has_workers(config: pytest.Config) -> bool:
    return config.pluginmanager.getplugin("dsession") is not None


def run_here(session: pytest.Session) -> None:
    """The plan for the run's collected checks, before the first. pytest-xdist's controller writes
    it for its workers before its loop hands out the first check: the workers' collections wait in
    xdist's queue meanwhile (report._Report.worker_collected compares them with the controller's)."""
    config = session.config
    if INVENTORY not in config.stash or _is_worker(config) or config.option.collectonly:
        return
    if _has_workers(config) and session.testsfailed and not config.option.continue_on_collection_errors:
        # the controller's own collection failed: the run stops as a serial run does, before
        # xdist reads its workers' reports of the same errors (each error is reported once)
        raise session.Interrupted(f"{session.testsfailed} error{'s' * (session.testsfailed != 1)} during collection")
    try:
        results = config.stash[RESULTS] = _run(config, [item.nodeid for item in session.items])
        if _has_workers(config):
            close_hosts(config)   # what the workers judge is measured: nothing more goes to the nodes
            path = config.stash[RUN_FOLDER] / RESULTS_FILE
            partial = path.with_suffix(".partial")
            partial.write_text(results.dumps())
            os.replace(partial, path)
    finally:
        workers.back(config)   # (their start-up waited aside while the plan measured)


def _run(config: pytest.Config, test_ids: list[str]) -> plan.Measured:
    cluster = config.stash[INVENTORY].at(run_step(config))
    wanted = plan.wanted(lambda test_id: _named(config.rootpath, test_id), test_ids, cluster)
    if not wanted:
        return plan.Measured({})
    judges_load = any(entry.phase is plan.Phase.AFTER_LOAD and entry.key in wanted for entry in ALL)
    ledger = LoadLedger() if judges_load else None
    ctx = plan.Context(cluster, hosts(config), evidence_log(config), locks_of(config), ledger,
                       lambda: access_key(config), said=lambda line: _said(config, line))
    return plan.run(ALL, wanted, ctx)


def _named(root: Path, test_id: str) -> tuple[plan.Entry, ...]:
    """The entries a selected check names ("tests_x/test_y.py::test_z[…]", relative to the rootdir)."""
    return entries_named(root / test_id.split("::", 1)[0], plan.selected(test_id)[0])


def _said(config: pytest.Config, line: str) -> None:
    writer = config.get_terminal_writer()
    writer.line(line)
    writer.flush()


def results_of(config: pytest.Config) -> plan.Measured:
    """What the run's plan measured: this process's own, or a worker's copy of the controller's."""
    if RESULTS not in config.stash:
        config.stash[RESULTS] = _read(config.stash[RUN_FOLDER] / RESULTS_FILE)
    return config.stash[RESULTS]


def _read(path: Path) -> plan.Measured:
    try:
        return plan.Measured.loads(path.read_text())
    except FileNotFoundError:
        return plan.Measured({})      # nothing planned: each check that asks is told so
    except portable.Unportable as e:   # the controller's own file in the run's private folder: never expected
        raise plan.NotMeasured(f"{path}: {e}") from None
