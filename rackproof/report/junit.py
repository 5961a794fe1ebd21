"""junit.xml's rackproof properties: what CI reads of a run without parsing its report.

pytest's junitxml writes the file; the controller then adds, at the run's level (the
testsuite), the verdict, its line, the ticket, operator, cluster, step, the inventory's sha256
and the sha256 of results.json and report.html, and to each test its figures with their unit
and floor. results.json's sha256 ties the three files together: `rackproof bundle` and
`verify` refuse a results.json whose sha256 is not the one junit.xml names (edited after the
run). The bundle's contents digest cannot be here: it covers junit.xml itself.
"""

from __future__ import annotations

import os
import re
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

from . import verdict

PREFIX = "rackproof."
RESULTS_SHA256 = PREFIX + "results_sha256"
# how `rackproof bundle` finds results.json's sha256 in a junit.xml it did not parse (linear, no XML parser)
RESULTS_SHA256_PROPERTY = re.compile(rb'<property name="' + re.escape(RESULTS_SHA256.encode()) +
                                     rb'" value="([0-9a-f]{64})" />')


def run_properties(doc: dict, results_sha256: str) -> list[tuple[str, str]]:
    run = doc["run"]
    return [(PREFIX + name, str(value)) for name, value in (
        ("verdict", doc["verdict"]["decision"]), ("verdict_line", verdict.line(doc["verdict"])),
        ("ticket", run["ticket"] or ""), ("operator", run["operator"] or ""), ("cluster", run["cluster"]),
        ("step", run["step"]), ("replay", run["replay"] or ""), ("inventory_sha256", run["inventory"]["sha256"]),
        ("report_html_sha256", doc["report_html_sha256"]), ("results_sha256", results_sha256))]


def figure(measurement: dict) -> tuple[str, str]:
    """One figure of a test: ("rackproof.figure[lane.rate thor-1 -> thor-2]", "0.239 Gbit/s; floor 0.225 Gbit/s
    (higher is better); passed")."""
    m = measurement
    name = f"{PREFIX}figure[{m['reference'] or m['kind']} {m['subject']}]"
    value = f"{m['value']:g} {m['unit']}"
    expected = m["expectation"]
    if expected is None:
        return name, value + "; no floor (recorded, not judged)"
    bound = "floor" if expected["better"] == "higher" else "ceiling"
    value += f"; {bound} {expected['floor']:g} {m['unit']} ({expected['better']} is better)"
    if expected["target"] is not None:
        value += f"; target {expected['target']:g} {m['unit']}"
    return name, value + f"; {m['verdict']}"


def address(test_id: str) -> tuple[str, str]:
    """(classname, name) by which pytest's junitxml writes a test id (its mangle_test_address)."""
    path, bracket, params = test_id.partition("[")
    names = path.split("::")
    names[0] = re.sub(r"\.py$", "", names[0].replace("/", "."))
    names[-1] += bracket + params
    return ".".join(names[:-1]), names[-1]


def _properties(element: ET.Element) -> ET.Element:
    """The element's <properties>, made as its first child when it has none (JUnit's order)."""
    found = element.find("properties")
    if found is None:
        found = ET.Element("properties")
        element.insert(0, found)
    return found


def add(path: str | Path, doc: dict, results_sha256: str) -> None:
    """Add the run's and each test's properties to the junit.xml pytest wrote at `path`; the file is
    replaced whole (written beside it, then renamed)."""
    path = Path(path)
    tree = ET.parse(path)
    figures = {address(t["id"]): [figure(m) for m in t["measurements"]] for t in doc["tests"]}
    for suite in tree.getroot().iter("testsuite"):
        properties = _properties(suite)
        for name, value in run_properties(doc, results_sha256):
            ET.SubElement(properties, "property", name=name, value=value)
        for case in suite.iter("testcase"):
            if shown := figures.get((case.get("classname", ""), case.get("name", ""))):
                properties = _properties(case)
                for name, value in shown:
                    ET.SubElement(properties, "property", name=name, value=value)
    fd, tmp = tempfile.mkstemp(prefix=".junit-", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write('<?xml version="1.0" encoding="utf-8"?>' + ET.tostring(tree.getroot(), encoding="unicode"))
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def results_sha256(data: bytes) -> str | None:
    """The sha256 of results.json a junit.xml names (None: it names none, or more than one)."""
    found = RESULTS_SHA256_PROPERTY.findall(data)
    return found[0].decode() if len(found) == 1 else None
