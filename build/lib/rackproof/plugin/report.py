"""The acceptance report of a run: one folder per run under reports/<time>-<cluster>/ holding
report.html, results.json and junit.xml (and pytest-html's own page as pytest-html.html).

Each test's report carries what the report needs (what the test touched, facts, the waiver
that applied) in user_properties, so it reaches the controller from xdist workers; only the
controller writes files, and it writes the same report with and without xdist.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import os
import shlex
import signal
import time
from pathlib import Path

import pytest

from .options import INVENTORY, OUT_OF_SCOPE, SCOPE, in_suite, inventory_file, run_step
from rackproof import kinds
from rackproof.report import document, html, subjects, verdict, waivers as waiver_rules
from rackproof.report.outcomes import Phase
from rackproof.safetext import one_line

RUN = pytest.StashKey["_Report"]()
WAIVERS = pytest.StashKey[list]()
FACTS = pytest.StashKey[dict]()
LEFT_OUT = pytest.StashKey[list]()   # node ids of checks a user's -k, -m or --deselect left out

INCOMPLETE_EXIT = 6   # a run that did not cover its scope and failed nothing (pytest's own codes end at 5)
# options by which a user leaves checks out of a run: (pytest's dest, the flag as typed)
NARROWING = (("keyword", "-k"), ("markexpr", "-m"), ("deselect", "--deselect"), ("ignore", "--ignore"),
             ("ignore_glob", "--ignore-glob"), ("lf", "--lf"), ("stepwise", "--sw"))


def _percent(text: str) -> float:
    try:
        value = float(text.strip().rstrip("%"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a percentage such as 10 or 10%") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: a tolerance cannot be negative")
    return value / 100


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("rackproof")
    group.addoption("--waivers", metavar="FILE",
                    help="TOML of accepted failures ([[waiver]] check, node, justification, approved_by, expires)")
    group.addoption("--baseline", metavar="PATH", help="results.json of an earlier run: the report shows what changed")
    group.addoption("--baseline-tolerance", metavar="PERCENT", type=_percent, default=0.10,
                    help="flag figures that moved by more than this against --baseline (default 10%%)")


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def _new_folder(config: pytest.Config, cluster: str) -> Path:
    """reports/<YYYYmmdd-HHMMSS>-<cluster>/, never one an earlier run of the same second made.
    The inventory admits only folder-safe cluster names; this holds even if it did not."""
    # where pytest was started, not its rootdir: an installed suite's rootdir is inside the package
    reports = Path(config.invocation_params.dir, "reports").resolve()
    base = reports / f"{time.strftime('%Y%m%d-%H%M%S')}-{cluster}"
    if base.resolve().parent != reports or len(base.name.encode()) > 200:
        raise pytest.UsageError(f"cluster.name {one_line(cluster)!r} cannot name a folder inside {reports}")
    folder, n = base, 1
    while True:
        try:
            folder.mkdir(parents=True)
            return folder
        except FileExistsError:
            n += 1
            folder = base.with_name(f"{base.name}-{n}")


def _narrowed_by(config: pytest.Config) -> list[str]:
    """How the user left checks of the suite out of this run (empty: the whole suite)."""
    found = []
    for dest, flag in NARROWING:
        value = getattr(config.option, dest, None)
        if value is True:
            found.append(flag)
        elif value:
            found.append(f"{flag} {' '.join(value) if isinstance(value, list) else value}")
    if config.args_source == pytest.Config.ArgsSource.ARGS:
        suite = [config.rootpath / p for p in config.getini("testpaths")]
        given = [Path(os.path.normpath(Path(config.invocation_params.dir, a))) for a in config.args if "::" not in a]
        if len(given) < len(config.args) or not all(any(g == d or g in d.parents for g in given) for d in suite):
            found.append("test paths " + " ".join(config.args))
    return [one_line(f) for f in found]


def start(config: pytest.Config) -> None:
    """Waivers, baseline and the report's folder; on the controller, the _Report that writes it.
    Called after the inventory is loaded and before pytest-html and junitxml read htmlpath and
    xmlpath (the plugin's pytest_configure runs first)."""
    if config.getoption("waivers"):
        try:
            config.stash[WAIVERS] = waiver_rules.load_waivers(config.getoption("waivers"))
        except waiver_rules.WaiverError as e:
            raise pytest.UsageError(f"--waivers: {e}") from None
    if _is_worker(config) or INVENTORY not in config.stash or config.option.collectonly:
        return
    baseline = None
    if config.getoption("baseline"):
        try:
            baseline = (document.load(config.getoption("baseline")), config.getoption("baseline"),
                        config.getoption("baseline_tolerance"))
        except document.ResultsError as e:
            raise pytest.UsageError(f"--baseline: {e}") from None
    given = config.getoption("htmlpath", None)
    report = Path(given).resolve() if given else _new_folder(config, config.stash[INVENTORY].cluster.name) / "report.html"
    # report.html is ours; pytest-html's page (with the same evidence) is kept beside it
    config.option.htmlpath = str(report.with_name("pytest-html.html"))
    config.option.self_contained_html = True
    if not config.option.xmlpath:
        config.option.xmlpath = str(report.with_name("junit.xml"))
    config.stash[RUN] = _Report(config, report, baseline)
    config.pluginmanager.register(config.stash[RUN], "rackproof-report")
    # SIGTERM (CI cancelling a job, `kill`) ends the run as Ctrl-C does: servers stopped, report
    # written, verdict INCOMPLETE
    config.stash[RUN].sigterm = signal.signal(signal.SIGTERM, config.stash[RUN].stop)


def finish(config: pytest.Config) -> None:
    if RUN in config.stash:
        signal.signal(signal.SIGTERM, config.stash[RUN].sigterm)


def note_left_out(items: list[pytest.Item]) -> None:
    """Checks a user's -k, -m or --deselect took out: the run does not cover its scope."""
    for item in items:
        config = item.config
        if in_suite(item) and item.nodeid not in config.stash.get(OUT_OF_SCOPE, set()):
            config.stash.setdefault(LEFT_OUT, []).append(item.nodeid)


@pytest.fixture
def facts(request: pytest.FixtureRequest):
    """facts(node, key, value): something a node reported (an address, a version), for the
    report's Nodes table."""
    recorded = request.node.stash.setdefault(FACTS, {})

    def record(node: str, key: str, value) -> None:
        recorded.setdefault(node, {})[key] = subjects.plain(value)

    return record


def annotate(item: pytest.Item, call: pytest.CallInfo, report: pytest.TestReport) -> None:
    """What the report needs of a test (its subject, facts, the waiver that applies); after
    evidence.annotate, which has set the message and the error outcome."""
    callspec = getattr(item, "callspec", None)
    params = callspec.params if callspec else {}
    if call.when == "call" or (call.when == "setup" and not report.passed):
        report.user_properties.append(("rackproof_subject", subjects.plain(params)))
        if FACTS in item.stash:
            report.user_properties.append(("rackproof_facts", item.stash[FACTS]))
    unconfirmed = ("rackproof_outcome", "error") in report.user_properties
    if call.when == "call" and report.failed and not unconfirmed and item.config.stash.get(WAIVERS, None):
        nodes = kinds.subjects(params, item.config.stash[INVENTORY].at(run_step(item.config)))["nodes"]
        waiver = waiver_rules.active(item.config.stash[WAIVERS], item.nodeid, nodes, dt.date.today())
        if waiver:
            # reported as pytest's expected failure: it does not fail the run, and junit.xml and
            # the terminal say why; the original message stays in longrepr
            report.outcome = "skipped"
            report.wasxfail = f"waived until {waiver.expires} by {waiver.approved_by}: {waiver.justification}"
            report.user_properties.append(("rackproof_waiver", waiver.as_dict()))


def _phase(report: pytest.TestReport) -> Phase:
    longrepr = report.longrepr
    if isinstance(longrepr, (tuple, list)):   # a skip: (path, line, "Skipped: reason")
        text = str(longrepr[2]).removeprefix("Skipped: ")
    else:
        # not report.longreprtext: under xdist it starts with the worker's name and Python
        text = "" if longrepr is None else str(longrepr)
    properties = {k: v for k, v in report.user_properties if k.startswith("rackproof_")}
    return Phase(report.when, report.outcome, text, report.duration, properties)


def share_collection(session: pytest.Session) -> None:
    config = session.config
    if _is_worker(config):
        # the controller collects nothing under xdist: it learns the order and the scope from
        # the workers (every worker collects the same items)
        config.workeroutput["rackproof_order"] = [item.nodeid for item in session.items]
        config.workeroutput["rackproof_scope"] = list(config.stash.get(SCOPE, []))
        config.workeroutput["rackproof_left_out"] = list(config.stash.get(LEFT_OUT, []))


def _relative(path: str | Path, folder: Path) -> str:
    return os.path.relpath(Path(path).resolve(), folder)


class _Report:
    """The controller's side: gathers every test's phases and writes the run's files."""

    def __init__(self, config: pytest.Config, report: Path, baseline: tuple[dict, str, float] | None):
        self.config = config
        self.report = report                  # report.html; the other files go beside it
        self.baseline = baseline
        self.started = time.time()
        self.order: list[str] = []            # test ids in collection order
        self.scope: list[tuple[str, str]] | None = None   # from a worker; serial runs read the stash
        self.phases: dict[str, list[Phase]] = {}
        self.workers = 0
        self.left_out: list[str] | None = None  # from a worker; serial runs read the stash
        self.interrupted = ""                   # why the run stopped early
        self.sigterm = signal.SIG_DFL           # the handler to put back
        self.written: dict | None = None        # the verdict and the sha256 of report.html

    @property
    def folder(self) -> Path:
        return self.report.parent

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.order = [item.nodeid for item in session.items]

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node, ids) -> None:
        # known as soon as a worker has collected: an interrupted run still knows what it planned
        if not self.order:
            self.order = list(ids)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node, error) -> None:
        self.workers += 1
        output = getattr(node, "workeroutput", {})
        if self.scope is None and "rackproof_order" in output:
            self.order = list(output["rackproof_order"])
            self.scope = [tuple(pair) for pair in output["rackproof_scope"]]
            self.left_out = list(output["rackproof_left_out"])
        if error and not self.interrupted:
            self.interrupted = f"worker {node.gateway.id} went down: {one_line(str(error))}"

    def stop(self, signum, frame) -> None:
        """The SIGTERM handler: noted first, so that the verdict says why whichever code the
        interrupt then passes through."""
        self.interrupted = self.interrupted or f"interrupted (signal {signal.Signals(signum).name})"
        raise KeyboardInterrupt(self.interrupted)

    def pytest_keyboard_interrupt(self, excinfo) -> None:
        reason = one_line(str(excinfo.value))
        self.interrupted = self.interrupted or (f"interrupted ({reason})" if reason else "interrupted (Ctrl-C)")

    def _coverage(self, session: pytest.Session) -> verdict.Coverage:
        config = self.config
        interrupted = self.interrupted
        if not interrupted and session.exitstatus == pytest.ExitCode.INTERRUPTED:
            interrupted = "interrupted (Ctrl-C)"
        if not interrupted and session.exitstatus == pytest.ExitCode.INTERNAL_ERROR:
            interrupted = "stopped by an internal error (see the terminal)"
        if not interrupted and (session.shouldfail or session.shouldstop):
            interrupted = f"stopped early ({one_line(str(session.shouldfail or session.shouldstop))}; -x or --maxfail)"
        left_out = self.left_out if self.left_out is not None else config.stash.get(LEFT_OUT, [])
        return verdict.Coverage(nodes=tuple(config.getoption("node")), narrowed_by=tuple(_narrowed_by(config)),
                                interrupted=interrupted, not_run=tuple(left_out))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.phases.setdefault(report.nodeid, []).append(_phase(report))

    def _document(self, session: pytest.Session, exitstatus: int) -> dict:
        config = self.config
        known = set(self.order)
        # collection order; anything else (never expected) after it, sorted, so that runs compare
        ids = [i for i in self.order if i in self.phases] + sorted(i for i in self.phases if i not in known)
        info = document.RunInfo(
            ticket=config.getoption("ticket"), operator=config.getoption("operator"),
            started=self.started, finished=time.time(), inventory_path=str(inventory_file(config)),
            command_line=shlex.join(["pytest", *config.invocation_params.args]),
            replay=config.getoption("replay"), xdist_workers=self.workers, exit_status=int(exitstatus))
        return document.build(info, config.stash[INVENTORY].at(run_step(config)),
                              [document.Recorded(i, tuple(self.phases[i])) for i in ids],
                              self.scope if self.scope is not None else config.stash.get(SCOPE, []),
                              config.stash.get(WAIVERS, []), dt.date.today(), self.baseline,
                              self._coverage(session), self.order)

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        doc = self._document(session, exitstatus)
        files = [("results.json", "results.json"), ("junit.xml", _relative(self.config.option.xmlpath, self.folder)),
                 ("pytest-html page", "pytest-html.html")]
        self.folder.mkdir(parents=True, exist_ok=True)
        page = html.render(doc, files).encode()
        self.report.write_bytes(page)
        doc["report_html_sha256"] = hashlib.sha256(page).hexdigest()
        document.write(doc, self.folder / "results.json")
        self.written = doc
        if doc["verdict"]["decision"] == verdict.INCOMPLETE and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = INCOMPLETE_EXIT

    def pytest_terminal_summary(self, terminalreporter, shown: int = 20) -> None:
        if self.written is None:
            return
        result = self.written["verdict"]
        terminalreporter.write_sep("-", "rackproof report")
        terminalreporter.write_line(f"verdict: {verdict.line(result)}")
        coverage = result["coverage"]
        if not coverage["complete"]:
            terminalreporter.write_line(f"incomplete: {coverage['reason']}")
            for test in coverage["not_run"][:shown]:
                terminalreporter.write_line(f"  did not run: {test}")
            if len(coverage["not_run"]) > shown:
                terminalreporter.write_line(f"  and {len(coverage['not_run']) - shown} more (results.json lists them all)")
        terminalreporter.write_line(f"report folder: {self.folder}")
        terminalreporter.write_line(f"report.html sha256: {self.written['report_html_sha256']}")
