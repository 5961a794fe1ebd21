"""rackproof's pytest plugin: every hook, once, in the order a run needs them.

Registered by the `pytest11` entry point `rackproof.plugin` (pyproject.toml), so pytest knows
`--inventory` before it reads the command line, from any folder; the repo's conftest.py names
the same module for a checkout that is not installed (pytest loads a plugin once by its name).
The fixtures checks ask for (node, lane, pair, engine, measure, ...) are the suite's, in
fixtures/, which conftest.py loads.

    options    command-line options, markers, the inventory, which checks are in scope
    params     the checks' parameters (one item per node, lane, pair, ...), the run's folder and locks
    planning   the measurement plan: run by the controller before the first check, its results
    recording  where --record writes the run's answers, and --anonymise's masked copy
    evidence   what a check leaves: commands run, figures, capability, its message
    report     the acceptance report (one folder per run) and the verdict's coverage
    workers    pytest-xdist's workers start aside while the controller measures
"""

from __future__ import annotations

import gc

# what a run's start makes (the imports, the collection) lives as long as the run: the garbage
# collector's passes over it meanwhile are pure cost (a tenth of a two-node run's second). It
# collects again once the collection is done (pytest_collection_finish), or the run ends.
gc.disable()

import pytest  # noqa: E402

from . import evidence, options, ownfaults, params, planning, recording, workers  # noqa: E402
from . import report as reporting  # noqa: E402
# every test's own evidence: an autouse fixture, found on this module
from .evidence import _collect_evidence  # noqa: F401,E402
from .options import INVENTORY, RECORDING  # noqa: E402
from rackproof.nodes.host import begin_surveys  # noqa: E402


# the configs of the runs under way in this process, the innermost last (a pytest run inside a
# test, as the selftests start them, ends before the run around it): hooks that pytest calls
# without one act for the innermost
_CONFIGS: list[pytest.Config] = []
# a signal while pytest still loads ends the process in one line (ownfaults), not a traceback
ownfaults.guard_the_start()


def _running():
    return reporting.running(_CONFIGS[-1]) if _CONFIGS else None


def pytest_addoption(parser: pytest.Parser) -> None:
    options.add_options(parser)
    reporting.add_options(parser)


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser) -> None:
    options.restart_in_a_form_pytest_reads(early_config, parser)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    # first: pytest-html and junitxml read htmlpath and xmlpath in their own pytest_configure
    ownfaults.run_begins()
    _CONFIGS.append(config)
    options.load(config)
    recording.check(config)
    params.make_run_folder(config)
    try:
        reporting.start(config)
        if run := reporting.running(config):   # made here, before pytest-html makes it with a traceback
            run.folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:    # the report's folder cannot be made (read-only, disk full)
        ownfaults.folder_not_made(e)
    # the nodes' surveys (a connect and a round trip each, the first thing every node is asked)
    # are taken while pytest starts its session and collects, or while xdist's workers start:
    # the plan finds them done
    if INVENTORY in config.stash and config.stash[RECORDING] is None and not hasattr(config, "workerinput") \
            and not config.option.collectonly:
        begin_surveys(planning.hosts(config))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_setupnodes(config: pytest.Config, specs) -> None:   # pytest-xdist, on the controller
    if INVENTORY in config.stash:
        workers.lower(config, specs)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:   # pytest-xdist, on the controller: a worker starts
    params.hand_run_folder(node)
    if INVENTORY in node.config.stash:
        workers.aside(node.config, node)


def pytest_unconfigure(config: pytest.Config) -> None:
    gc.enable()   # (a run that ended before its collection did)
    if config in _CONFIGS:
        _CONFIGS.remove(config)
    try:
        planning.close_hosts(config)
        reporting.finish(config)
        recording.write_anonymised(config)
        params.remove_locks(config)       # raises UsageError when the cluster's lock folder is refused
    finally:
        params.remove_run_folder(config)  # whatever stopped the run: the private folder never stays


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    params.parametrize(metafunc)


# the innermost wrapper: inside the warnings' and logging's, around xdist's controller's refusal
@pytest.hookimpl(wrapper=True, trylast=True)
def pytest_collection(session: pytest.Session):
    config = session.config
    refused = yield
    if planning.collects_for_workers(config):
        # xdist's controller collects nothing of its own (DSession's pytest_collection): it collects
        # here, while its workers start, so that its plan need not wait for a worker's collection
        session.perform_collect()
    return refused


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    options.keep_in_scope(config, items)
    params.drop_empty(config, items)


def pytest_deselected(items: list[pytest.Item]) -> None:
    reporting.note_left_out(items)


def pytest_collection_finish(session: pytest.Session) -> None:
    if INVENTORY in session.config.stash:
        # what the imports and the collection made lives as long as the suite's run: the garbage
        # collector's full passes (pytest ends with two) no longer walk it
        gc.freeze()
    gc.enable()
    if run := reporting.running(session.config):
        run.collected([item.nodeid for item in session.items])


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> None:
    planning.run_here(session)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node, ids) -> None:   # pytest-xdist, on the controller
    if run := reporting.running(node.config):
        run.worker_collected(node, ids)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error) -> None:   # pytest-xdist, on the controller: a worker ended
    if run := reporting.running(node.config):
        run.worker_down(node, error)


def pytest_keyboard_interrupt(excinfo) -> None:
    if run := _running():
        run.keyboard_interrupt(excinfo)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if run := _running():
        run.logreport(report)


# the innermost wrapper: after junitxml's and pytest-html's files, before the terminal's summary;
# a file of the run that cannot be written (disk full, read-only) ends the run in one line
@pytest.hookimpl(wrapper=True, trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int):
    run = reporting.running(session.config)
    try:
        yield
        if run:
            run.sessionfinish(session, exitstatus)
    except OSError as e:
        if run is None:
            raise
        ownfaults.not_written(session, run, e)
        return
    if run:
        ownfaults.written(session, run, session.config.stash.get(params.RUN_FOLDER, None))


def pytest_terminal_summary(terminalreporter) -> None:
    if run := reporting.running(terminalreporter.config):
        run.terminal_summary(terminalreporter)
    ownfaults.summary(terminalreporter.config, terminalreporter)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    made = yield
    if options.in_suite(item):   # the plugin is loaded in every pytest session: others' tests are left alone
        evidence.annotate(item, call, made)
        reporting.annotate(item, call, made)
    return made


@pytest.hookimpl(optionalhook=True)
def pytest_html_report_title(report) -> None:
    report.title = "rackproof checks (pytest-html view; the acceptance report is report.html)"
