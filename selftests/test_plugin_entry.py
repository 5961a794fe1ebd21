"""The plugin is loaded by its pytest11 entry point: its options are known wherever pytest runs,
and `--inventory PATH` (space form) runs the same suite as `--inventory=PATH`, also for a file
outside the checkout (pytest settles its rootdir before it loads the plugin and takes the path
for a test path; the plugin starts the same command again in the `=` form, see
options.restart_in_a_form_pytest_reads). Installed with `pip install .`, the suite travels in
the package and the same command runs it from any folder."""

import shutil
import subprocess
import sys
import sysconfig
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from selftests.suite import REPLAYS, REPO

SUITE = ("tests_physical", "tests_network", "tests_ssh", "tests_serving")


def collected(cwd, *args: str, python: str = sys.executable) -> list[str]:
    proc = subprocess.run([python, "-m", "pytest", "--collect-only", "-q", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    ids = [line.rpartition("/")[2] for line in proc.stdout.splitlines() if "::" in line]
    assert ids, proc.stdout
    return ids


def test_the_plugin_is_registered_by_its_entry_point():
    assert "rackproof.plugin" in {ep.value for ep in entry_points(group="pytest11")}


def test_every_fixture_a_check_asks_for_is_defined_in_fixtures():
    """fixtures/ is where a newcomer looks: each fixture a check asks for is defined there, and
    the plugin defines none but the two every test gets (its evidence, the whole-rack lock)."""
    import ast
    import importlib
    import pkgutil

    from _pytest.fixtures import FixtureFunctionDefinition

    import fixtures
    import rackproof.plugin

    def defined(package) -> dict[str, str]:
        names = {}
        for info in pkgutil.iter_modules(package.__path__, f"{package.__name__}."):
            module = importlib.import_module(info.name)
            names |= {v.name: info.name for v in vars(module).values() if isinstance(v, FixtureFunctionDefinition)}
        return names

    assert Path(fixtures.__file__).parent == REPO / "fixtures"
    in_fixtures, in_plugin = defined(fixtures), defined(rackproof.plugin)
    assert sorted(in_plugin) == ["_collect_evidence"]
    builtin = {"request", "pytestconfig", "tmp_path"}

    def parametrized(f: ast.FunctionDef) -> set[str]:   # @pytest.mark.parametrize("a, b", ...)
        return {name.strip() for d in f.decorator_list if isinstance(d, ast.Call) and ast.unparse(d.func).endswith(
                "parametrize") for name in d.args[0].value.split(",")}

    asked = {arg.arg for path in REPO.glob("tests_*/test_*.py") for f in ast.walk(ast.parse(path.read_text()))
             if isinstance(f, ast.FunctionDef) and f.name.startswith("test_") for arg in f.args.args
             if arg.arg not in parametrized(f)}
    assert len(asked) > 30 and asked - builtin <= set(in_fixtures), sorted(asked - builtin - set(in_fixtures))


def test_the_inventory_option_is_known_in_a_folder_without_conftest(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "pytest", "--help"], cwd=tmp_path, capture_output=True, text=True)
    assert "--inventory=FILE" in proc.stdout and "--step=N" in proc.stdout


def test_the_space_form_runs_what_the_equals_form_runs(tmp_path):
    inventory = "examples/replay/thor5-healthy/cluster.toml"
    equals_form = collected(REPO, f"--inventory={inventory}", "--step", "3")
    assert collected(REPO, "--inventory", inventory, "--step", "3") == equals_form


def test_a_flag_before_a_test_path_leaves_the_path_a_test_path():
    inventory = "--inventory=examples/replay/thor5-healthy/cluster.toml"
    flagged = collected(REPO, inventory, "--allow-disruptive", "tests_network")
    assert "test_bond.py::test_bond_rides_out_a_lane_loss[thor-1->thor-2]" in flagged
    assert not any(i.startswith(("test_cabling", "test_lanes")) for i in flagged)   # tests_physical's


def test_the_space_form_with_a_file_outside_the_checkout(tmp_path):
    elsewhere = shutil.copy(REPLAYS / "thor5-healthy" / "cluster.toml", tmp_path / "cluster.toml")
    equals_form = collected(REPO, f"--inventory={elsewhere}", "--step", "3")
    assert len(equals_form) == 28  # steps 1-3 of the healthy shelf: links, cabling, lanes, kernel logs, addresses, MTU,
    #                                load both ways
    assert collected(REPO, "--inventory", str(elsewhere), "--step", "3") == equals_form
    assert collected(tmp_path, "--inventory", str(elsewhere), "--step", "3",
                     *(str(REPO / f) for f in SUITE)) == equals_form


def test_pytest_main_in_another_program_is_told_the_form_to_write(tmp_path):
    elsewhere = shutil.copy(REPLAYS / "thor5-healthy" / "cluster.toml", tmp_path / "cluster.toml")
    program = f"import pytest, sys; sys.exit(pytest.main(['--collect-only', '--inventory', {str(elsewhere)!r}]))"
    proc = subprocess.run([sys.executable, "-c", program], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 4, proc.stdout + proc.stderr
    assert f"write --inventory={elsewhere} (with '=')" in proc.stderr


def test_from_another_folder_the_suite_is_named_by_its_folders(tmp_path):
    inventory = shutil.copy(REPLAYS / "thor5-healthy" / "cluster.toml", tmp_path / "cluster.toml")
    in_checkout = collected(REPO, f"--inventory={inventory}", "--step", "3")
    assert collected(tmp_path, f"--inventory={inventory}", "--step", "3", *(str(REPO / f) for f in SUITE)) == in_checkout


def test_every_spark_check_has_its_step():
    inventory = f"--inventory={REPO / 'examples' / 'spark2.toml'}"
    assert {i.split("[")[0] for i in collected(REPO, inventory, "--step", "1")} == {
        "test_cx7.py::test_cx7_interface_up", "test_cabling.py::test_cx7_cable_joins_the_planned_ports",
        "test_kernel_log.py::test_kernel_log_clean"}
    at_three = {i.split("[")[0] for i in collected(REPO, inventory, "--step", "3")}
    assert "test_cx7.py::test_roce_bandwidth_over_the_port" in at_three
    assert "test_nccl.py::test_nccl_across_the_nodes" not in at_three


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """rackproof as `pip install .` leaves it on a site's controller, alone: a wheel built from a
    copy of the checkout (the build writes build/ next to the sources; no download, no build
    isolation) installed into a fresh virtual environment that reaches this one's dependencies
    (pytest, fabric, pydantic...) but neither rackproof nor the simulator, rackproof-sim.
    Its Python is returned."""
    tmp = tmp_path_factory.mktemp("installed")
    tracked = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                             capture_output=True, text=True, check=True)
    for name in filter(None, tracked.stdout.split("\0")):
        if (REPO / name).is_file():   # a file deleted but not yet committed is not part of the build
            (tmp / "src" / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, tmp / "src" / name)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-w", str(tmp / "wheel"),
                    str(tmp / "src")], check=True, capture_output=True, timeout=300)
    (wheel,) = (tmp / "wheel").glob("rackproof-*.whl")
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    site = Path(subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    ours = Path(sysconfig.get_paths()["purelib"])
    for entry in ours.iterdir():
        if not entry.name.lower().startswith(("rackproof", "__editable__", "pip")):
            (site / entry.name).symlink_to(entry)
    subprocess.run([*pip, "--python", str(python), "install", "--no-deps", "--no-index", str(wheel)],
                   check=True, capture_output=True, timeout=300)
    return python


def test_installed_alone_the_product_has_no_simulator_and_says_how_to_get_it(installed, tmp_path):
    imported = subprocess.run([installed, "-c", "import sys, rackproof.plugin, rackproof.cli; rackproof.cli.build_parser(); "
                               "print(sorted(m for m in sys.modules if m.startswith('rackproof_sim')))"],
                              cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert imported.stdout == "[]\n", imported.stdout + imported.stderr
    command = installed.with_name("rackproof")
    sim = subprocess.run([command, "sim", "up", "thor5"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert (sim.returncode, sim.stdout) == (1, "")
    assert sim.stderr == ("rackproof sim: not installed: the simulated bench rack is the package rackproof-sim: "
                          "`pip install ./rackproof-sim` in a rackproof checkout (scripts/setup.sh installs it)\n")
    listed = subprocess.run([command, "--help"], cwd=tmp_path, capture_output=True, text=True, timeout=60).stdout
    assert "not installed: the simulated bench rack" in listed


def test_installed_the_same_command_runs_the_suite_from_any_folder(installed, tmp_path):
    elsewhere = shutil.copy(REPLAYS / "thor5-healthy" / "cluster.toml", tmp_path / "cluster.toml")
    in_checkout = collected(REPO, f"--inventory={elsewhere}", "--step", "3")
    anywhere = tmp_path / "anywhere"
    anywhere.mkdir()
    # the suite that runs is the installed copy, read with its own pytest.ini
    proc = subprocess.run([installed, "-m", "pytest", "--collect-only", f"--inventory={elsewhere}"],
                          cwd=anywhere, capture_output=True, text=True, timeout=120)
    site = subprocess.run([installed, "-c", "import rackproof; print(rackproof.__file__)"], cwd=anywhere,
                          capture_output=True, text=True, check=True).stdout.strip().removesuffix("/__init__.py")
    assert f"rootdir: {site}/suite" in proc.stdout and "configfile: pytest.ini" in proc.stdout, proc.stdout
    assert collected(anywhere, f"--inventory={elsewhere}", "--step", "3", python=installed) == in_checkout
    assert collected(anywhere, "--inventory", str(elsewhere), "--step", "3", python=installed) == in_checkout


def test_installed_a_run_from_another_folder_leaves_its_report_there(installed, tmp_path):
    proc = subprocess.run([installed, "-m", "pytest", "-q", "--replay", str(REPLAYS / "thor5-healthy")],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and "verdict: ACCEPTED" in proc.stdout, proc.stdout + proc.stderr
    assert len(list((tmp_path / "reports").glob("*-thor-shelf/report.html"))) == 1


CHURN = '''
import logging, threading

stop = threading.Event()


def churn():
    k = 0
    while not stop.is_set():   # a library importing in a thread: each import makes its loggers
        logging.getLogger(f"imported.{k}")
        k += 1


def pytest_configure(config):
    threading.Thread(target=churn, daemon=True).start()


def pytest_unconfigure(config):
    stop.set()
'''


def test_a_thread_making_loggers_as_the_tests_run_leaves_the_run_whole(tmp_path):
    """The suite's threads import fabric and make paramiko's first transport as its collection
    runs; pytest's logging plugin, which walks the table of loggers at every test phase, is off
    (pytest.ini), so a walk never meets a logger being made."""
    (tmp_path / "conftest.py").write_text(CHURN)
    (tmp_path / "test_many.py").write_text("import pytest\n\n\n@pytest.mark.parametrize('k', range(300))\n"
                                           "def test_one(k):\n    pass\n")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-c", str(REPO / "pytest.ini"), "--rootdir",
                           str(tmp_path), str(tmp_path / "test_many.py")], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0 and "300 passed" in proc.stdout, proc.stdout[-2000:] + proc.stderr[-2000:]
