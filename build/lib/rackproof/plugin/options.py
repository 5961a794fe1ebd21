"""Command-line options, the markers, loading the inventory, and which checks a run covers."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import iniconfig
import pytest

import rackproof
from rackproof.inventory import FINISHED, Inventory, InventoryError, load_inventory
from rackproof.replay import Recording, ReplayError

INVENTORY = pytest.StashKey[Inventory]()
RECORDING = pytest.StashKey[Recording | None]()
SCOPE = pytest.StashKey[list]()  # (check, reason) pairs of what this run does not check
OUT_OF_SCOPE = pytest.StashKey[set]()  # node ids the suite itself left out (the step, the platform, ...)

HOW_TO = ("rackproof: no --inventory given, so no check ran. Describe the cluster in a cluster.toml "
          "(see examples/thor5.toml) and run: pytest --inventory cluster.toml --step N")


MARKERS = (
    "step(n): the build step (\"The order to build it\") whose checks this test belongs to",
    "capability(name, blocks=False): what the check guards; blocks=True: its failure rejects the whole cluster",
    "platform(*names): the check applies only to clusters of these platforms (thor, spark)",
    "disruptive: changes the cluster for a moment (pulls a bond lane); runs only with --allow-disruptive",
    "nothing_to_check: set by the plugin on a check with no values at this step (left out of the run)",
)


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("rackproof", "rackproof cluster acceptance")
    group.addoption("--inventory", metavar="FILE", help="cluster.toml describing the cluster")
    group.addoption("--step", type=int, metavar="N", help="check build steps 1..N (default: the finished cluster)")
    group.addoption("--node", action="append", default=[], metavar="NAME",
                    help="only checks that involve this node (repeatable)")
    group.addoption("--ticket", default="", help="change-control ticket for the report")
    group.addoption("--operator", default="", help="who ran the acceptance")
    group.addoption("--replay", metavar="DIR", help="answer commands from a recording instead of the nodes")
    group.addoption("--record", metavar="DIR", help="record every answer of this run into DIR")
    group.addoption("--allow-disruptive", action="store_true",
                    help="also run checks that disturb the cluster for a moment (and restore it)")


def suite_root() -> Path | None:
    """The folder holding the suite (tests_* and its pytest.ini): inside the installed package
    (`pip install .` puts it there as rackproof/suite), or the checkout the package runs from
    (not installed, or installed in place with `pip install -e`)."""
    package = Path(rackproof.__file__).parent
    return next((root for root in (package / "suite", package.parent)
                 if (root / "pytest.ini").is_file() and (root / "tests_physical").is_dir()), None)


def restart_in_a_form_pytest_reads(config: pytest.Config, parser: pytest.Parser) -> None:
    """Run the same command again when pytest has read it otherwise than it means.

    pytest settles its rootdir and ini file before it loads this plugin, so
    - the value of one of our options given in the space form (`--inventory PATH`) was taken for
      a test path: a cluster.toml outside the checkout moved the rootdir away from the repo's
      pytest.ini. Joined with `=`, the same command line means the same thing to both passes;
    - a run that names no test path, from a folder whose ini names no testpaths (anywhere but
      the checkout), would look for tests in that folder. It runs the installed suite instead,
      with the suite's own pytest.ini; the report still goes to ./reports/.
    pytest.main() inside another program cannot be started again: that caller is told which
    form to write, and is left to name its test paths."""
    args = list(config.invocation_params.args)
    takes_value = {name for option in parser.getgroup("rackproof").options
                   if option.attrs().get("action", "store") == "store" for name in option.names()}
    joined, k = [], 0
    while k < len(args):
        if args[k] in takes_value and k + 1 < len(args) and os.path.exists(args[k + 1]):
            joined.append(f"{args[k]}={args[k + 1]}")
            k += 2
        else:
            joined.append(args[k])
            k += 1
    restarted = tuple(sys.argv[1:]) == tuple(args)
    if joined != args and not restarted:
        written = next(a for a in joined if a not in args)
        raise pytest.UsageError(f"write {written} (with '='): pytest reads a path after a space as a test path "
                                "before rackproof's options are known")
    if joined == args and restarted:
        joined = _with_the_suite(config, joined)
    if joined == args or not restarted:
        return
    capture = config.pluginmanager.getplugin("capturemanager")
    if capture is not None:  # pytest already captures fd 1 and 2 here: the new run writes to the terminal
        capture.suspend_global_capture(in_=True)
    os.execv(sys.executable, [sys.executable, "-m", "pytest", *joined])


def _with_the_suite(config: pytest.Config, args: list[str]) -> list[str]:
    """`args` naming the suite's folders and its pytest.ini, for a rackproof run that names no
    test path where no ini file names the tests; else `args` as they are."""
    known = config.known_args_namespace
    root = suite_root()
    if (known.file_or_dir or config.getini("testpaths") or root is None
            or not (getattr(known, "inventory", None) or getattr(known, "replay", None))):
        return args
    ini = root / "pytest.ini"
    folders = iniconfig.IniConfig(ini)["pytest"]["testpaths"].split()
    return ["-c", str(ini), f"--rootdir={root}", *args, *(str(root / f) for f in folders)]


def in_suite(item: pytest.Item) -> bool:
    """Checks live in the tests_* folders; selftests and others are left alone."""
    return any(part.startswith("tests_") for part in item.path.parts[-3:-1])


def load(config: pytest.Config) -> None:
    """The markers, and the inventory (or the recording) of the run, into config.stash."""
    for marker in MARKERS:
        config.addinivalue_line("markers", marker)
    config.stash[SCOPE] = []
    config.stash[OUT_OF_SCOPE] = set()
    config.stash[RECORDING] = None
    replay_dir = config.getoption("replay")
    inventory_path = config.getoption("inventory")
    try:
        if replay_dir:
            config.stash[RECORDING] = Recording(replay_dir)
            inventory_path = inventory_path or str(config.stash[RECORDING].inventory_path)
        if inventory_path:
            config.stash[INVENTORY] = load_inventory(inventory_path)
    except InventoryError as e:
        raise pytest.UsageError("the inventory has problems; no check ran:\n" + str(e)) from None
    except ReplayError as e:
        raise pytest.UsageError(f"--replay: {e}") from None
    step = config.getoption("step")
    if step is not None and not 1 <= step <= FINISHED:
        raise pytest.UsageError(f"--step {step}: the build has steps 1 to {FINISHED}")
    if INVENTORY in config.stash:
        unknown = set(config.getoption("node")) - {n.name for n in config.stash[INVENTORY].nodes}
        if unknown:
            raise pytest.UsageError(f"--node {', '.join(sorted(unknown))}: not in the inventory")


def run_step(config: pytest.Config) -> int:
    return config.getoption("step") or FINISHED


def keep_in_scope(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Leave out the checks of later steps, other platforms and (unless allowed) disruptive ones."""
    suite = [item for item in items if in_suite(item)]
    if not suite:
        return
    if INVENTORY not in config.stash:
        leave_out(config, suite)
        items[:] = [item for item in items if not in_suite(item)]
        config.stash[SCOPE].append(("every check", "no --inventory given"))
        print("\n" + HOW_TO, file=sys.stderr)
        return
    step = run_step(config)
    keep, drop = [], []
    for item in items:
        marker = item.get_closest_marker("step") if in_suite(item) else None
        reason = None
        if marker and marker.args[0] > step:
            reason = f"build step {marker.args[0]}, after --step {step}"
        elif in_suite(item) and (platform := item.get_closest_marker("platform")) and \
                config.stash[INVENTORY].cluster.platform not in platform.args:
            reason = f"applies to {' and '.join(platform.args)} clusters only"
        elif item.get_closest_marker("disruptive") and not config.getoption("allow_disruptive"):
            reason = "disturbs the cluster; run with --allow-disruptive"
        if reason:
            drop.append(item)
            config.stash[SCOPE].append((item.originalname if isinstance(item, pytest.Function) else item.name, reason))
        else:
            keep.append(item)
    if drop:
        leave_out(config, drop)
        items[:] = keep


def leave_out(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect checks that are outside the run's scope by the suite's own rules: unlike a
    user's -k or --deselect, they do not make the run incomplete."""
    config.stash[OUT_OF_SCOPE].update(item.nodeid for item in items)
    config.hook.pytest_deselected(items=items)


def inventory_file(config: pytest.Config) -> Path | None:
    path = config.getoption("inventory")
    if path:
        return Path(path)
    recording = config.stash.get(RECORDING, None)
    return recording.inventory_path if recording else None
