"""Run the acceptance suite (the repo's tests_* folders) as a user would, and read its verdicts."""

from __future__ import annotations

import signal
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"
REPLAYS = EXAMPLES / "replay"


@dataclass
class SuiteRun:
    exit_status: int
    output: str
    outcomes: dict[str, str]   # test id (file::name[param]) -> passed/failed/skipped/error
    messages: dict[str, str]   # test id -> failure message
    run_dir: Path

    def with_outcome(self, outcome: str) -> set[str]:
        return {t for t, o in self.outcomes.items() if o == outcome}

    @property
    def failed(self) -> set[str]:
        return self.with_outcome("failed")


def ctrl_c_reaches_it() -> None:
    """For a process a selftest will interrupt with SIGINT (Popen's preexec_fn): SIGINT as at a
    terminal. A shell starts its background jobs with SIGINT ignored, and a Python started so
    keeps ignoring it: the selftests run from such a job would see no Ctrl-C at all."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _test_id(case: ET.Element) -> str:
    return f"{case.get('classname').rsplit('.', 1)[-1]}::{case.get('name')}"


def run_suite(pytester, *args: str, timeout: float = 600, netns: str | None = None) -> SuiteRun:
    """The suite in a child pytest (pytester), with the repo's pytest.ini and tests_* folders;
    its report and junit.xml go under the pytester's temp dir. Test paths given in args are
    taken relative to the repo; without any, the suite's testpaths."""
    tmp_path = Path(pytester.path)
    junit = tmp_path / "junit.xml"
    paths = [str(REPO / a) for a in args if a.startswith("tests_")] or [
        str(REPO / p) for p in ("tests_physical", "tests_network", "tests_ssh", "tests_serving")]
    options = [a for a in args if not a.startswith("tests_")]
    # in `netns` (a simulated rack's bench namespace) when given: the controller's side of the rack
    prefix = ("ip", "netns", "exec", netns) if netns else ()
    result = pytester.run(
        *prefix, sys.executable, "-m", "pytest", "-c", str(REPO / "pytest.ini"), "--rootdir", str(REPO), "-q",
        "-p", "no:cacheprovider", f"--junitxml={junit}", f"--html={tmp_path / 'report.html'}", *options, *paths,
        timeout=timeout)
    outcomes, messages = {}, {}
    if junit.exists():
        for case in ET.parse(junit).getroot().iter("testcase"):
            tid = _test_id(case)
            outcome = "passed"
            for tag in ("failure", "error", "skipped"):
                el = case.find(tag)
                if el is not None:
                    outcome = {"failure": "failed"}.get(tag, tag)
                    messages[tid] = (el.get("message") or "") + "\n" + (el.text or "")
                    break
            outcomes[tid] = outcome
    output = "\n".join(result.outlines + result.errlines)
    return SuiteRun(int(result.ret), output, outcomes, messages, tmp_path)
