"""Another local account on the controller cannot get inside a root run: it makes every name
the run used to share through the temp directory before the run starts, holds their locks,
plants pickles and JSON that would run its command, and swaps the run's folders while the run
goes on. The run neither hangs, nor reads them, nor runs anything of theirs, and it completes."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

from selftests.simrack import SimRack, rack_marks, unique_name
from selftests.suite import run_suite

pytestmark = rack_marks()

NOBODY = 65534

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


def test_a_local_user_gets_nothing_into_a_root_run(pytester, tmp_path):
    owned = tmp_path / "owned-by-nobody"          # only root may write here: only a root process could make it
    tmp_path.chmod(0o700)
    with SimRack("thor2", unique_name("hostile")) as rack:
        inventory = rack.rack.profile
        digest = hashlib.sha256(f"{inventory.cluster_name}:{sorted(n.name for n in inventory.nodes)}".encode()
                                ).hexdigest()[:12]
        hostile = subprocess.Popen(
            ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", sys.executable, "-S", "-c",
             HOSTILE, "/tmp", digest, str(owned)],
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
            for planted in [*Path("/tmp").glob(f"rackproof-locks-{digest}*"), *Path("/tmp").glob("rackproof-run-*")]:
                if planted.lstat().st_uid == NOBODY:
                    shutil.rmtree(planted, ignore_errors=True)
    assert hostile.returncode == 0
    assert report["attempts"] > 0 and report["seen"], "the hostile user never saw the run's folder: nothing was tried"
    assert not owned.exists(), "the run executed the hostile user's command"
    assert run.exit_status == 0 and "verdict: ACCEPTED" in run.output, run.output
    assert not [name for name in report["seen"] if (Path("/tmp") / name).exists()], "the run left its folder behind"
