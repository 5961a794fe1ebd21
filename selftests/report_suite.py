"""Runs for the report's selftests: the suite in a child pytest, as selftests/suite.py runs it,
but from a stand-in of the repo (its conftest, links to its tests_* folders) to which the
synthetic checks of report_checks.py can be added as tests_synthetic/."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from selftests.suite import REPO

# the checks whose results the recordings hold; the others grow with other issues
STABLE = ("tests_physical", "tests_ssh")
SYNTHETIC = "tests_synthetic"


@dataclass
class ReportRun:
    exit_status: int
    output: str
    folder: Path        # where report.html, results.json and junit.xml went

    @cached_property
    def results(self) -> dict:
        return json.loads((self.folder / "results.json").read_text())

    @cached_property
    def html(self) -> str:
        return (self.folder / "report.html").read_text()

    @property
    def junit(self) -> ET.Element:
        return ET.parse(self.folder / "junit.xml").getroot()

    def test(self, name: str) -> dict:
        """The results entry of a test, by its name (test_lane_fec[thor-2:mgbe0_0])."""
        return next(t for t in self.results["tests"] if t["id"].endswith("::" + name))


def run_report(pytester, *args: str, name: str = "run", folders=STABLE + (SYNTHETIC,),
               default_folder: bool = False) -> ReportRun:
    """The suite's `folders` run with `args` from <tmp>/<name>; the report goes to <name>/out
    (or, with default_folder, where the plugin puts it: reports/<time>-<cluster>/ under the folder
    pytest was started from)."""
    root = Path(pytester.path) / name
    root.mkdir()
    # the repo's conftest, importable from here
    (root / "conftest.py").write_text(f"import sys\nsys.path.insert(0, {str(REPO)!r})\n" + (REPO / "conftest.py").read_text())
    for folder in folders:
        if folder == SYNTHETIC:
            (root / folder).mkdir()
            (root / folder / "test_synthetic.py").write_text(Path(__file__).with_name("report_checks.py").read_text())
        else:
            (root / folder).symlink_to(REPO / folder)
    # the stand-in's suite is exactly these folders (its testpaths): running them all is not narrowed
    ini = "\n".join(f"testpaths = {' '.join(folders)}" if line.startswith("testpaths") else line
                    for line in (REPO / "pytest.ini").read_text().splitlines())
    (root / "pytest.ini").write_text(ini + "\n")
    html = [] if default_folder else [f"--html={root / 'out' / 'report.html'}"]
    result = pytester.runpytest_subprocess("-c", str(root / "pytest.ini"), "--rootdir", str(root), "-q", *html,
                                           *args, *(str(root / f) for f in folders), timeout=300)
    if default_folder:
        reports = Path(pytester.path) / "reports"
        found = sorted(reports.glob("*/report.html"))
        folder = found[-1].parent if found else reports
    else:
        folder = root / "out"
    return ReportRun(int(result.ret), "\n".join(result.outlines + result.errlines), folder)
