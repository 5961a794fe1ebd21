"""Another local account on the controller cannot get inside a root run: it makes every name
the run used to share through the temp directory before the run starts, holds their locks,
plants pickles and JSON that would run its command, and swaps the run's folders while the run
goes on. The run neither hangs, nor reads them, nor runs anything of theirs, and it completes.
Another operator of the controller, in the group of its lock folder, runs beside root's run, and
the two take turns under load."""

from __future__ import annotations

import grp
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from rackproof.inventory.model import load_inventory
from selftests.simrack import SimRack, rack_marks, unique_name
from selftests.suite import run_suite

pytestmark = rack_marks()

NOBODY = 65534
REPO = Path(__file__).resolve().parents[1]
TESTPATHS = ("tests_physical", "tests_network", "tests_ssh", "tests_serving")

# what `nobody` does: argv = the temp directory, the cluster's old lock folder digest, the file
# its payload would create (in a folder only root may write to); it ends when its stdin closes
HOSTILE = r'''
import fcntl, json, os, pickle, select, sys, time
tmp, digest, owned = sys.argv[1:4]

class Payload:
    def __reduce__(self):
        return (os.system, (f"touch {owned}",))

pickled = pickle.dumps(Payload())
planted_json = json.dumps({"error": "os:system", "arguments": {"command": f"touch {owned}"}})
held, attempts, seen = [], 0, set()

def plant(folder):
    os.makedirs(folder, mode=0o777, exist_ok=True)
    for name in ("ssh-mesh", "0" * 24, "kept"):
        for suffix, data in ((".pickle", pickled), (".json", planted_json.encode()), (".partial", pickled)):
            with open(os.path.join(folder, name + suffix), "wb") as f:
                f.write(data)
    for name in ("@rack", "thor-1", "thor-2", "kept-" + "0" * 24):
        fd = os.open(os.path.join(folder, name + ".lock"), os.O_CREAT | os.O_RDWR, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)       # held for as long as this runs
        except BlockingIOError:
            pass
        held.append(fd)

# every name the run used to share through, made first: the cluster's lock folder, its kept
# and load folders, and folders named like the run's own
old = os.path.join(tmp, f"rackproof-locks-{digest}")
plant(old)
for sub in ("kept-0", "load-0"):
    plant(os.path.join(old, sub))
for k in range(20):
    plant(os.path.join(tmp, f"rackproof-run-{k:08x}"))
mine = set(os.listdir(tmp))
print("planted", flush=True)
while not select.select([sys.stdin], [], [], 0)[0]:
    for name in os.listdir(tmp):
        if name.startswith("rackproof") and name not in mine and not name.endswith("-moved"):
            attempts += 1   # the run's folder: swap it
            seen.add(name)
            path = os.path.join(tmp, name)
            try:
                os.rename(path, path + "-moved")
                plant(path)
            except OSError:
                pass
            try:
                plant(os.path.join(path, "kept"))
            except OSError:
                pass
    time.sleep(0.02)
print(json.dumps({"attempts": attempts, "seen": sorted(seen)}), flush=True)
'''


def test_a_local_user_gets_nothing_into_a_root_run(pytester, tmp_path, monkeypatch):
    owned = tmp_path / "owned-by-nobody"          # only root may write here: only a root process could make it
    tmp_path.chmod(0o700)
    # the run's temp directory: sticky and open to all, as /tmp is, and this test's alone (the
    # racks of other selftests run beside it, and their runs' folders are not the ones watched)
    shared = Path(tempfile.mkdtemp(prefix="rackproof-selftest-tmp-"))
    shared.chmod(0o1777)
    monkeypatch.setenv("TMPDIR", str(shared))
    try:
        with SimRack("thor2", unique_name("hostile")) as rack:
            inventory = load_inventory(rack.inventory)
            digest = hashlib.sha256(f"{inventory.cluster.name}:{sorted(n.name for n in inventory.nodes)}".encode()
                                    ).hexdigest()[:12]
            hostile = subprocess.Popen(
                ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", sys.executable, "-S", "-c",
                 HOSTILE, str(shared), digest, str(owned)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd="/")
            try:
                assert hostile.stdout.readline() == "planted\n"
                # a hang on someone else's lock would end at run_suite's timeout, as a failure
                run = run_suite(pytester, f"--inventory={rack.inventory}", "-n", "2", netns=rack.rack.topo.bench,
                                timeout=300)
            finally:
                try:
                    report = json.loads(hostile.communicate(timeout=30)[0])   # (closes its stdin: it stops)
                finally:
                    hostile.kill()
        # the run's folders (root's); `nobody` makes a folder of that name again when its plant
        # (makedirs) comes just after the run removed its own, as once in CI
        left = sorted(name for name in report["seen"]
                      if (shared / name).exists() and (shared / name).lstat().st_uid != NOBODY)
    finally:
        shutil.rmtree(shared)
    assert hostile.returncode == 0
    assert report["attempts"] > 0 and report["seen"], "the hostile user never saw the run's folder: nothing was tried"
    assert not owned.exists(), "the run executed the hostile user's command"
    assert run.exit_status == 0 and "verdict: ACCEPTED" in run.output, run.output
    assert not left, f"the run left its folder behind: {left}"


def test_two_operators_on_one_controller_both_complete_and_their_loads_take_turns(tmp_path):
    """Root and another operator (in the group of the controller's lock folder, scripts/setup.sh)
    run the suite on one cluster at the same time: both are ACCEPTED, and no iperf3 client of one
    runs while one of the other's does (a shared load would have halved both)."""
    group = grp.getgrnam("rackproof").gr_gid
    theirs = Path(tempfile.mkdtemp(prefix="rackproof-selftest-"))   # /tmp: `nobody` can reach it
    try:
        with SimRack("thor2", unique_name("operators")) as rack:
            mine = tmp_path / "root"
            mine.mkdir()
            inventory = rack.one_second_runs(mine)
            (theirs / "run").mkdir()
            # their own copies of what the inventory names (root's are root's alone)
            text = inventory.read_text()
            for path in (rack.state.bench_key, rack.state.ssh_config, rack.state.agent_key):
                shutil.copy(path, theirs / path.name)
                text = text.replace(str(path), str(theirs / path.name))
            config = theirs / rack.state.ssh_config.name
            config.write_text(config.read_text().replace(str(rack.state.bench_key), str(theirs / rack.state.bench_key.name)))
            (theirs / "cluster.toml").write_text(text)
            shutil.chown(theirs, NOBODY, NOBODY)
            for path in theirs.rglob("*"):
                shutil.chown(path, NOBODY, NOBODY)
            theirs.chmod(0o700)
            runs = [suite_in(rack, mine, inventory, (), os.environ["HOME"]),
                    suite_in(rack, theirs / "run", theirs / "cluster.toml",
                             ("setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", f"--groups={group}"), str(theirs))]
            outputs = [run.communicate(timeout=300)[0] for run in runs]
        for run, output in zip(runs, outputs):
            assert run.returncode == 0 and "verdict: ACCEPTED" in output, output
        windows = [loads(output) for output in outputs]
    finally:
        shutil.rmtree(theirs)
    assert windows[0] and windows[1]
    assert not [(a, b) for a in windows[0] for b in windows[1] if a[0] < b[1] and b[0] < a[1]], windows


def suite_in(rack: SimRack, folder: Path, inventory: Path, as_user: tuple, home: str) -> subprocess.Popen:
    """The whole suite at the rack's step, started in the rack's bench namespace from `folder`
    (its reports go there), as `as_user` says."""
    return subprocess.Popen(
        ["ip", "netns", "exec", rack.rack.topo.bench, *as_user, sys.executable, "-m", "pytest",
         "-c", str(REPO / "pytest.ini"), "--rootdir", str(REPO), "-q", "-p", "no:cacheprovider",
         f"--inventory={inventory}", "--step", "6", *(str(REPO / p) for p in TESTPATHS)],
        cwd=folder, env={**os.environ, "HOME": home}, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def loads(output: str) -> list[tuple[float, float]]:
    """(start, end) of every iperf3 client the run's throughput checks ran, from its results.json."""
    folder = next(line.split(": ", 1)[1] for line in output.splitlines() if line.startswith("report folder: "))
    doc = json.loads((Path(folder) / "results.json").read_text())
    return [(e["started"], e["started"] + e["duration"]) for t in doc["tests"] if t["check"].startswith("test_iperf3")
            for e in t["evidence"] if e["probe"] in ("iperf3", "iperf3 --cport", "at once")]
