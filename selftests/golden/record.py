"""Write replays.json: what the suite concludes from each example recording, at build step 3 and
finished (verdict, failing checks, every figure with its expectation and verdict, what each
check touched: nodes, interfaces, pairs; and what the run left in its temporary folder: nothing). The selftest
test_replay_golden.py compares a run of today's code with it, so a change that is meant to
change no verdict (a refactor) shows that it did not. Re-run only for a change that means to
alter a conclusion, and say so in its commit:

    .venv/bin/python selftests/golden/record.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import rackproof

REPO = Path(rackproof.__file__).resolve().parents[1]
RECORDINGS = ("thor5-healthy", "thor5-lane-down-fec-mismatch", "thor5-ssh-thor2-to-thor4")
STEPS = (3, None)
GOLDEN = Path(__file__).with_name("replays.json")


def conclusions(recording: str, step: int | None) -> dict:
    """The run's verdict, failing checks and figures, from its results.json."""
    with tempfile.TemporaryDirectory() as tmp:
        own_tmp = Path(tmp) / "tmp"   # the run's TMPDIR: what it leaves there (lock folders) is seen
        own_tmp.mkdir()
        subprocess.run([sys.executable, "-m", "pytest", "-c", str(REPO / "pytest.ini"), "--rootdir", str(REPO), "-q",
                        "-p", "no:cacheprovider", f"--html={tmp}/report.html",
                        f"--replay={REPO / 'examples' / 'replay' / recording}",
                        *(["--step", str(step)] if step else [])], cwd=REPO, capture_output=True, timeout=600,
                       env=os.environ | {"TMPDIR": str(own_tmp)})
        results = json.loads((Path(tmp) / "results.json").read_text())
        left = sorted(p.name for p in own_tmp.glob("rackproof-*"))
    return {
        "left_in_tmp": left,
        "verdict": results["verdict"]["decision"],
        "not_passed": sorted(f"{t['id']}: {t['outcome']}" for t in results["tests"] if t["outcome"] != "passed"),
        "figures": sorted(f"{t['id']}: {m['kind']} {m['subject']} {m['value']} {m['unit']} {m['verdict']} "
                          f"{json.dumps(m['expectation'], sort_keys=True)}"
                          for t in results["tests"] for m in t["measurements"]),
        "subjects": sorted(f"{t['id']}: nodes {t['nodes']} interfaces {t['interfaces']} pairs {t['pairs']}"
                           for t in results["tests"]),
    }


def key(recording: str, step: int | None) -> str:
    return f"{recording} --step {step}" if step else recording


if __name__ == "__main__":
    GOLDEN.write_text(json.dumps({key(r, s): conclusions(r, s) for r in RECORDINGS for s in STEPS}, indent=1) + "\n")
    print(f"wrote {GOLDEN}")
