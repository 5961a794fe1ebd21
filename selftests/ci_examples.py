"""The CI examples' shell steps as their runners would run them, without the runners: a fresh
checkout (a copy of the repo's files without anything a run leaves: reports, caches, the venv),
the job's environment as GitHub Actions or GitLab resolves it from the example, and each `run:` or
`script:` line in bash. The install step (`pip install .`) needs PyPI and is not run: the
checkout's .venv is the selftests' own."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from ruamel.yaml import YAML

from selftests.suite import REPO

CI = REPO / "examples" / "ci"
VENV = Path(sys.prefix)
INSTALL = "python3 -m venv .venv && .venv/bin/pip install -q ."
# what a clean checkout never holds: the files runs, builds and editors leave
LEFT_BY_RUNS = (".git", ".venv", "__pycache__", ".pytest_cache", "*.egg-info", ".hypothesis", ".import_linter_cache")


def fresh_checkout(dest: Path) -> Path:
    """The repo's files in `dest` as a clean checkout has them: reports/ holds only .gitkeep."""
    shutil.copytree(REPO, dest, ignore=shutil.ignore_patterns(*LEFT_BY_RUNS), symlinks=True)
    for item in (dest / "reports").iterdir():
        if item.name != ".gitkeep":
            shutil.rmtree(item) if item.is_dir() and not item.is_symlink() else item.unlink()
    (dest / ".venv").symlink_to(VENV)
    return dest


def _load(name: str) -> dict:
    return YAML(typ="safe").load((CI / name).read_text())


def github_job() -> dict:
    return _load("github-actions.yml")["jobs"]["acceptance"]


def gitlab_job() -> tuple[dict, dict]:
    """(the job, the file's global variables)."""
    doc = _load("gitlab-ci.yml")
    return doc["rack-acceptance"], doc.get("variables", {})


def github_env(context: dict[str, dict[str, str]]) -> dict[str, str]:
    """The job's env: as Actions evaluates `${{ a.b || 'literal' }}` against `context`
    ({"github": {...}, "inputs": {...}}); an expression of another shape is refused."""

    def term(text: str) -> str:
        text = text.strip()
        if re.fullmatch(r"'[^']*'", text):
            return text[1:-1]
        scope, _, key = text.partition(".")
        if scope not in context or not re.fullmatch(r"[a-z_]+", key):
            raise ValueError(f"github-actions.yml: an expression this selftest does not evaluate: {text!r}")
        return context[scope].get(key, "")

    def evaluate(match: re.Match) -> str:
        return next((v for v in map(term, match.group(1).split("||")) if v), "")

    return {k: re.sub(r"\$\{\{(.+?)\}\}", evaluate, str(v)) for k, v in github_job()["env"].items()}


def gitlab_env(predefined: dict[str, str]) -> dict[str, str]:
    """The job's variables as GitLab expands them: `$NAME` from the file's global variables and
    the `predefined` ones (CI_PIPELINE_ID, GITLAB_USER_LOGIN)."""
    job, globals_ = gitlab_job()
    known = {**predefined, **{k: str(v) for k, v in globals_.items()}}

    def expand(match: re.Match) -> str:
        name = match.group(1) or match.group(2)
        if name not in known:
            raise ValueError(f"gitlab-ci.yml: a variable this selftest does not know: ${name}")
        return known[name]

    return {k: re.sub(r"\$\{(\w+)\}|\$(\w+)", expand, str(v)) for k, v in job["variables"].items()}


def github_run_steps() -> list[str]:
    """The job's `run:` steps but the install."""
    steps = [s["run"].strip() for s in github_job()["steps"] if "run" in s]
    assert INSTALL in steps, "github-actions.yml: the install step changed; this selftest skips it by its text"
    return [s for s in steps if s != INSTALL]


def gitlab_script() -> list[str]:
    job, _ = gitlab_job()
    assert INSTALL in job["script"], "gitlab-ci.yml: the install step changed; this selftest skips it by its text"
    return [line for line in job["script"] if line != INSTALL]


def run_step(script: str, checkout: Path, env: dict[str, str], home: Path, netns: str | None = None,
             timeout: float = 600) -> subprocess.CompletedProcess:
    """One step as a runner runs it: bash in the checkout (GitHub's `bash -e {0}`, GitLab's shell
    executor), the job's env over the runner account's (HOME: `home`); in `netns` when given."""
    prefix = ["ip", "netns", "exec", netns] if netns else []
    full = {**os.environ, "HOME": str(home), **env}
    return subprocess.run([*prefix, "bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script], cwd=checkout,
                          env=full, capture_output=True, text=True, timeout=timeout)
