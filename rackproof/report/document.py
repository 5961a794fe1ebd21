"""results.json: the whole report as data, and the one source report.html is drawn from.

Its shape is results.schema.json (next to this file) and docs/results.md. SCHEMA_VERSION is
MAJOR.MINOR: a reader of 1.x reads every 1.y (minor versions only add fields); a new major
version changes or removes fields.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from dataclasses import dataclass, replace
from pathlib import Path

import rackproof
from rackproof.inventory import kinds
from rackproof.judging.failure import Failure
from rackproof.inventory.model import ClusterAtStep
from rackproof.inventory.userinput import read_regular_file

from . import baseline as baseline_diff
from . import configuration, facts, spark_acceptance, topology, verdict, waivers as waiver_rules
from .outcomes import OUTCOMES, PROBLEMS, PytestReport, merged_properties, outcome_of

SCHEMA_VERSION = "2.10"   # 2.0: the verdict INCOMPLETE and the run's coverage; 2.1: run.expectations_changed;
#   2.2: a problem's failure record (tests[].failure); 2.3: what_changed (--before); 2.4: spark_acceptance;
#   2.5: the outcome "not verified" (a check that could not be made, listed in the scope);
#   2.6: coverage.cut_short (checks a transient fault stopped: the run is incomplete); nodes[].reach.since;
#   2.7: the run history: measurements[].reference, tests[].drift, verdict.drift, history;
#   2.8: evidence[].probe and evidence[].values (what made each command; facts are read from them);
#        tests[].warnings (failure records) and tests[].not_verified (where, what, why, how);
#   2.9: nodes[].reach.connects (each connect the rack's own life made take more than one attempt);
#   2.10: configuration (the golden-configuration table: node x setting, the odd cell marked)
SCHEMA_PATH = Path(__file__).with_name("results.schema.json")

_EVIDENCE_KEYS = ("node", "command", "exit_status", "stdout", "stderr", "duration", "started", "note", "probe", "values")
_MEASUREMENT_KEYS = ("kind", "subject", "value", "unit", "expectation", "verdict", "reference")


class ResultsError(Exception):
    """A results.json that cannot be read as one (its one-line reason)."""


@dataclass(frozen=True)
class RunInfo:
    """The header: what the plugin knows about the run besides its tests."""

    ticket: str
    operator: str
    started: float                 # epoch seconds
    finished: float
    inventory_path: str
    command_line: str
    replay: str | None = None
    xdist_workers: int = 0         # 0: a serial run
    exit_status: int | None = None


@dataclass(frozen=True)
class Recorded:
    id: str                        # pytest's node id
    phases: tuple[PytestReport, ...]


def _iso(epoch: float) -> str:
    return dt.datetime.fromtimestamp(epoch).astimezone().isoformat(timespec="seconds")


def sha256_of(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def entry_for(record: Recorded, cluster: ClusterAtStep, waivers: list, today: dt.date) -> dict:
    props = merged_properties(list(record.phases))
    outcome, text = outcome_of(list(record.phases))
    failure = props.get("rackproof_failure") if outcome in (*PROBLEMS, "waived") else None
    if failure:
        told = Failure(**failure)
        message, hint = "\n".join(filter(None, (told.statement, told.details))), told.hint
    else:
        message, hint = text.strip(), ""
    params = props.get("rackproof_subject", {})
    touched = kinds.subjects(params, cluster)
    waiver = props.get("rackproof_waiver")
    if waiver:
        waiver = {**waiver, "status": "applied"}
    elif outcome == "failed":
        expired = next((w for w in waiver_rules.matching(waivers, record.id, touched["nodes"]) if w.expired(today)), None)
        waiver = expired and {**expired.as_dict(), "status": "expired"}
    return {
        "id": record.id,
        "check": record.id.rpartition("::")[2].partition("[")[0],
        "outcome": outcome,
        "message": message,
        "hint": hint,
        "failure": failure,
        "warnings": props.get("rackproof_warnings", []),
        "not_verified": props.get("rackproof_not_verified") if outcome == "not verified" else None,
        "capability": props.get("rackproof_capability"),
        "params": params,
        **touched,
        "duration": round(sum(p.duration for p in record.phases), 3),
        "measurements": [{k: m.get(k) for k in _MEASUREMENT_KEYS} for m in props.get("rackproof_measurements", [])],
        "evidence": [{k: e.get(k) for k in _EVIDENCE_KEYS} for e in props.get("rackproof_evidence", [])],
        "facts": props.get("rackproof_facts", {}),
        "waiver": waiver or None,
        "drift": props.get("rackproof_drift", []),
    }


def _scope(pairs: list[tuple[str, str]]) -> list[dict]:
    """What was not checked, one entry per check (a check is dropped once per node or lane)."""
    out: dict[str, dict] = {}
    for check, reason in pairs:
        entry = out.setdefault(check, {"check": check, "reasons": [], "count": 0})
        entry["count"] += 1
        if reason not in entry["reasons"]:
            entry["reasons"].append(reason)
    return list(out.values())


def _counts(tests: list[dict]) -> dict[str, int]:
    return {o: sum(t["outcome"] == o for t in tests) for o in OUTCOMES}


def finished(record: Recorded) -> bool:
    """A test reached its outcome once pytest reported its teardown; a run stopped in the middle
    of a test (Ctrl-C, a killed worker) leaves it without one, and it is not judged."""
    return any(p.when == "teardown" for p in record.phases)


def build(run: RunInfo, cluster: ClusterAtStep, records: list[Recorded],
          scope: list[tuple[str, str]], waivers: list, today: dt.date,
          baseline: tuple[dict, str, float] | None = None,
          coverage: verdict.Coverage = verdict.Coverage(), planned: list[str] = (),
          what_changed: dict | None = None, connects: dict[str, list[str]] | None = None) -> dict:
    """The results document; `baseline` is (earlier document, its path, tolerance); `planned`
    the test ids the run set out to run, `coverage` what the plugin knows of its scope;
    `what_changed` the comparison with --before's snapshot; `connects` each node's connects that
    took more than one attempt."""
    done = [r for r in records if finished(r)]
    reached = {r.id for r in done}
    not_run = [*coverage.not_run, *(i for i in planned if i not in reached),
               *(r.id for r in records if r.id not in reached and r.id not in planned)]
    cut_short = tuple(r.id for r in done if merged_properties(list(r.phases)).get("rackproof_cut_short"))
    coverage = replace(coverage, not_run=tuple(dict.fromkeys(not_run)), cut_short=cut_short)
    inventory = cluster.inventory
    tests = [entry_for(r, cluster, waivers, today) for r in done]
    node_facts, interface_facts = facts.collect(tests)
    reach = facts.reachability(tests)
    for node, retried in (connects or {}).items():
        reach.setdefault(node, {"status": facts.REACHED, "reason": ""})["connects"] = retried
    nodes = [{
        "name": n.name, "role": "head" if i == 0 else "worker", "address": n.address,
        "joins_at_step": n.joins_at_step, "joined": cluster.joined(n),
        "reach": reach.get(n.name, {"status": facts.NOT_CONTACTED, "reason": ""}),
        "facts": node_facts.get(n.name, {}),
        "counts": _counts([t for t in tests if n.name in t["nodes"]]),
    } for i, n in enumerate(inventory.nodes)]
    doc = {
        "schema_version": SCHEMA_VERSION,
        "run": {
            "cluster": inventory.cluster.name, "platform": inventory.cluster.platform, "step": cluster.step,
            "ticket": run.ticket, "operator": run.operator,
            "started": _iso(run.started), "finished": _iso(run.finished),
            "duration_s": round(run.finished - run.started, 3),
            "inventory": {"path": run.inventory_path, "sha256": sha256_of(run.inventory_path)},
            "rackproof_version": rackproof.__version__, "command_line": run.command_line,
            "replay": run.replay, "xdist_workers": run.xdist_workers, "exit_status": run.exit_status,
            "expectations_changed": inventory.expectations_changed(),
        },
        "verdict": verdict.decide(tests, coverage, {n: r for n, r in reach.items() if r["status"] == facts.UNREACHABLE}),
        "counts": _counts(tests),
        "tests": tests,
        "nodes": nodes,
        "topology": topology.build(cluster, tests, interface_facts, reach),
        "scope": _scope([*scope, *((t["check"], t["message"]) for t in tests if t["outcome"] == "not verified")]),
        "waivers": waiver_rules.statuses(waivers, tests, today),
        "baseline": None,
        "what_changed": what_changed,
        "spark_acceptance": spark_acceptance.build(inventory.cluster.platform, tests, _scope(scope)),
        "configuration": configuration.build([n.name for n in inventory.nodes], tests, inventory.expect),
        "history": None,
        "report_html_sha256": None,
    }
    if baseline:
        earlier, path, tolerance = baseline
        doc["baseline"] = baseline_diff.compare(doc, earlier, tolerance, path)
    return doc


def schema() -> dict:
    return json.loads(SCHEMA_PATH.read_text())


def problems(doc: dict, newer_fields_ok: bool = False) -> list[str]:
    """Where a document departs from the schema, one line each (empty: it validates).
    newer_fields_ok: fields a later minor version added are not problems for this reader."""
    # imported here: only reading an earlier results.json validates, and jsonschema's import was
    # 0.14-0.27 s of every run's start (and every xdist worker's), -X importtime on this machine
    import jsonschema
    validator = jsonschema.Draft202012Validator(schema())
    errors = [e for e in validator.iter_errors(doc) if not (newer_fields_ok and e.validator == "additionalProperties")]
    return [f"{'/'.join(map(str, e.absolute_path)) or '(top level)'}: {e.message}"
            for e in sorted(errors, key=lambda e: list(map(str, e.absolute_path)))]


MAX_RESULTS_BYTES = 256 << 20   # a 32-node run's results with all its evidence is a few tens of MiB


def load(path: str | Path) -> dict:
    """An earlier results.json, checked: same major schema version, valid."""
    try:
        raw = read_regular_file(path, MAX_RESULTS_BYTES)
        if len(raw) > MAX_RESULTS_BYTES:
            raise ResultsError(f"{path}: larger than {MAX_RESULTS_BYTES >> 20} MiB: not a results.json of one run")
        doc = json.loads(raw)
    except OSError as e:
        raise ResultsError(f"{path}: cannot read it: {e.strerror}") from None
    except ValueError as e:   # not JSON, or not UTF-8
        raise ResultsError(f"{path}: not JSON ({e})") from None
    version = str(doc.get("schema_version", "")) if isinstance(doc, dict) else ""
    if version.partition(".")[0] != SCHEMA_VERSION.partition(".")[0]:
        raise ResultsError(f"{path}: not a rackproof results.json of schema {SCHEMA_VERSION.partition('.')[0]}.x "
                           f"(schema_version {version or 'missing'})")
    found = problems(doc, newer_fields_ok=True)
    if found:
        raise ResultsError(f"{path}: does not match results.schema.json: {found[0]}")
    return doc


def write(doc: dict, path: str | Path) -> None:
    Path(path).write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
