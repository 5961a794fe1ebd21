"""What a test leaves behind for the report: every command it ran (evidence), every figure it
measured, the capability it guards. All of it travels in user_properties, so it reaches the
controller from xdist workers too. A failure is its record (rackproof.failure), not a traceback."""

from __future__ import annotations

import dataclasses
import re

import pytest

from .options import INVENTORY, in_suite, run_step
from .params import EVIDENCE_LOG
from rackproof import addressing
from rackproof.failure import Failure
from rackproof.host import ProbeFailed
from rackproof.measure import Measurement, NotAFigure
from rackproof.references import measured
from rackproof.remote import CommandTimeout, Evidence, EvidenceLog, NodeUnreachable
from rackproof.report.html import evidence_html
from rackproof.replay import ReplayError
from rackproof.safetext import shown
from rackproof.serving import AccessKeyError

EVIDENCE = pytest.StashKey[list[Evidence]]()
MEASUREMENTS = pytest.StashKey[list[Measurement]]()
CAPABILITY = pytest.StashKey[dict]()
CLASHES = pytest.StashKey[list]()   # address clashes, read once per process at the first failure they could explain

# exceptions whose message is the whole story: show it instead of a traceback
CHECK_ERRORS = (AssertionError, ProbeFailed, NodeUnreachable, CommandTimeout, ReplayError, AccessKeyError, NotAFigure)
# the check could not reach a verdict: reported as an error (unconfirmed), never as passed
UNCONFIRMED = (CommandTimeout, ReplayError, AccessKeyError, NotAFigure)


@pytest.fixture(autouse=True)
def _collect_evidence(request: pytest.FixtureRequest):
    log: EvidenceLog = request.config.stash.setdefault(EVIDENCE_LOG, EvidenceLog())
    records: list[Evidence] = []
    request.node.stash[EVIDENCE] = records
    log.sink = records
    yield
    log.sink = None


@pytest.fixture
def measure(request: pytest.FixtureRequest, inventory):
    """measure(reference, subject, value, unit, **counts) -> the Measurement, recorded for the
    report: converted into the reference's unit and judged against its bound
    (rackproof.references: "bond.rate" with lanes=4, ...)."""
    recorded = request.node.stash.setdefault(MEASUREMENTS, [])

    def record(name: str, subject: str, value: float, unit: str, **counts) -> Measurement:
        m = measured(name, subject, value, unit, inventory.expect, **counts)
        recorded.append(m)
        return m

    return record


@pytest.fixture
def guards(request: pytest.FixtureRequest):
    """guards(name, blocks): the capability this check guards, when it depends on the cluster
    (a lane of a bond limits bandwidth; a node's only lane cuts it off). Overrides the marker."""

    def declare(name: str, blocks: bool = False) -> None:
        request.node.stash[CAPABILITY] = {"name": name, "blocks": blocks}

    return declare


def _capability(item: pytest.Item) -> dict | None:
    if CAPABILITY in item.stash:
        return item.stash[CAPABILITY]
    marker = item.get_closest_marker("capability")
    return {"name": marker.args[0], "blocks": marker.kwargs.get("blocks", False)} if marker else None


def _clashes(item: pytest.Item) -> list[addressing.Clash]:
    """Cluster addresses held by two nodes, read from every node (its commands join the failing
    check's evidence): a failure that may follow from a clash says so instead of guessing."""
    config = item.config
    hosts = getattr(item, "funcargs", {}).get("hosts")
    if CLASHES not in config.stash and hosts is not None:
        nodes = [n for n in config.stash[INVENTORY].at(run_step(config)).nodes if n.address or n.cx7]
        interfaces = {}
        for node in nodes:
            try:
                interfaces[node.name] = hosts[node.name].interfaces()
            except CHECK_ERRORS:
                pass   # a node that cannot be read holds nothing we know of
        config.stash[CLASHES] = addressing.clashes(nodes, interfaces)
    return config.stash.get(CLASHES, [])


def _clashes_behind(item: pytest.Item, text: str) -> list[addressing.Clash]:
    """The clashes a failure may follow from: those whose address or holders its message names
    (a lane's speed or a version has nothing to do with who answers an address)."""
    if item.path.parent.name not in ("tests_network", "tests_ssh", "tests_serving") or \
            getattr(item, "originalname", "") == addressing.CHECK:
        return []
    return [c for c in _clashes(item)
            if any(re.search(rf"(?<![\w.-]){re.escape(name)}(?!\w|-(?!>)|\.\d)", text)
                   for name in (c.address, *(node for node, _ in c.holders)))]


def _failure(excinfo: pytest.ExceptionInfo, item: pytest.Item) -> Failure:
    """The check's failure as a record; an error that is not one (a node that cannot be read,
    a timeout) becomes one whose text is its message."""
    failure = excinfo.value
    if not isinstance(failure, Failure):
        text = str(failure).strip()
        if isinstance(failure, AssertionError):
            # a plain assert: keep its message, drop pytest's "assert False" rewrite tail
            text = text.split("\nassert ", 1)[0].strip() or "assertion failed"
        failure = Failure("", text)
    if clashes := _clashes_behind(item, str(failure)):
        # the usual cause the check would guess is not the likely one
        failure = dataclasses.replace(failure, cause="; ".join(map(str, clashes)) + f": see {addressing.CHECK}",
                                      seen=True)
    # what a node printed reaches the terminal and the report: no raw control characters
    return Failure(**{k: shown(v) if isinstance(v, str) else v for k, v in failure.as_dict().items()})


def annotate(item: pytest.Item, call: pytest.CallInfo, report: pytest.TestReport) -> None:
    """The check's evidence, figures and capability into the report; its failure as its record."""
    failure = None
    if call.excinfo is not None and isinstance(call.excinfo.value, CHECK_ERRORS) and in_suite(item):
        failure = _failure(call.excinfo, item)   # first: a clash lookup adds its commands to the evidence
    records = item.stash.get(EVIDENCE, [])
    if call.when == "call" or (call.when == "setup" and report.failed):
        report.user_properties.append(("rackproof_evidence", [r.as_dict() for r in records]))
        report.user_properties.append(
            ("rackproof_measurements", [m.as_dict() for m in item.stash.get(MEASUREMENTS, [])]))
        capability = _capability(item)
        if capability:
            report.user_properties.append(("rackproof_capability", capability))
        if records:
            extras = getattr(report, "extras", [])
            extras.append(_html_extra(records, item.nodeid))
            report.extras = extras
    if failure is not None:
        report.user_properties.append(("rackproof_failure", failure.as_dict()))
        report.longrepr = f"{failure}\n\n({shown(item.nodeid)})"
        if isinstance(call.excinfo.value, UNCONFIRMED):
            report.user_properties.append(("rackproof_outcome", "error"))


def _html_extra(records: list[Evidence], test_id: str):
    import pytest_html

    return pytest_html.extras.html(evidence_html([r.as_dict() for r in records], test_id))
