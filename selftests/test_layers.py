"""The layers pyproject.toml's [tool.importlinter] keeps apart, as scripts/selftest.sh checks
them: the checkout keeps every contract, and each contract breaks on an import planted against
it in a copy of the package, naming that import."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
LINT = Path(sys.executable).with_name("lint-imports")


def lint(root: Path) -> subprocess.CompletedProcess:
    """lint-imports on the rackproof and rackproof_sim packages under `root` (as in the checkout:
    the simulator in rackproof-sim/), with the repo's contracts."""
    path = f"{root}:{root / 'rackproof-sim'}"
    return subprocess.run([str(LINT), "--no-cache", "--config", str(REPO / "pyproject.toml")], cwd=root,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": path, "PYTHONDONTWRITEBYTECODE": "1"},
                          capture_output=True, text=True, timeout=120)


def test_the_checkout_keeps_every_contract():
    run = lint(REPO)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Contracts: 4 kept, 0 broken." in run.stdout


@pytest.mark.parametrize("planted, source, broken", [
    ("rackproof/report/planted.py", "from rackproof_sim import netns\n", "the product never imports the simulator"),
    ("rackproof/inventory/planted.py", "import pytest\n", "the library never imports pytest"),
    ("rackproof/probes/planted.py", "from .. import checks\n", "the library's layers"),
    ("rackproof/probes/planted.py", "from rackproof.nodes.host import Host\n", "the library's layers"),
    ("rackproof/inventory/planted.py", "from rackproof.nodes.host import Host\n", "the library's layers"),
    ("rackproof/measurements/planted.py", "from rackproof.plugin import planning\n", "the library's layers"),
    ("rackproof/measurements/planted.py", "from rackproof import checks\n", "the library's layers"),
    ("rackproof/subcommands/planted.py", "from rackproof.measurements import lanes\n",
     "only the plugin imports the plan's entries"),
    ("rackproof/judging/planted.py", "from rackproof.nodes.host import Host\n", "the library's layers"),
    ("rackproof/judging/planted.py", "from rackproof.measuring import traffic\n", "the library's layers"),
], ids=["product imports sim", "library imports pytest", "probe imports checks", "probe imports nodes",
        "inventory imports nodes", "entry imports the plugin", "entry imports the checks", "library imports an entry",
        "judge imports nodes", "judge imports measuring"])
def test_an_import_against_a_contract_breaks_it(tmp_path, planted, source, broken):
    ignore = shutil.ignore_patterns("__pycache__", "suite")
    shutil.copytree(REPO / "rackproof", tmp_path / "rackproof", ignore=ignore)
    shutil.copytree(REPO / "rackproof-sim", tmp_path / "rackproof-sim", ignore=ignore)
    (tmp_path / planted).write_text(source)
    run = lint(tmp_path)
    module = planted.removesuffix(".py").replace("/", ".")
    assert run.returncode == 1, run.stdout
    assert "Contracts: 3 kept, 1 broken." in run.stdout
    assert f"{broken}" in run.stdout.split("Broken contracts")[1]
    assert f"{module} -> " in run.stdout
