"""README is the user's path in at most 150 lines (the rest is in docs/): both set-up commands
are in it, and every file it names exists."""

from __future__ import annotations

import re

from selftests.suite import REPO

README = (REPO / "README.md").read_text()


def test_readme_is_at_most_150_lines_and_keeps_both_set_up_commands():
    assert len(README.splitlines()) <= 150
    for command in ("    bash scripts/demo.sh\n", "    bash scripts/selftest.sh\n"):
        assert command in README


def test_every_file_readme_names_exists():
    named = set(re.findall(r"`((?:docs|examples|scripts|selftests)/[\w./-]+)", README))
    # the list at the end names docs/ files by their bare names after the first
    named |= {f"docs/{name}" for name in re.findall(r"`(\w+\.md)`", README)}
    assert len(named) > 10
    missing = sorted(path for path in named if not (REPO / path.rstrip("/")).exists())
    assert missing == [], missing
