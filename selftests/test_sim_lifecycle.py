"""Bringing simulated racks up and down (rackproof_sim): `down` leaves the host exactly as it
was (namespaces, processes, /etc, /home), also after a crashed `up`; a second `up` leaves a
running rack alone; `run` always takes its rack down and exits with pytest's status; the CLI
reports errors as one line.

Needs root. Every rack here has a name of its own, so a developer's rack is never touched.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from rackproof_sim.state import RackState
from selftests.simrack import SimRack, compare, rack_marks, snapshot, unique_name

pytestmark = rack_marks()

REPO = Path(__file__).resolve().parents[1]


def cli(*args: str, timeout: float = 60, cwd: Path = REPO, env: dict | None = None) -> subprocess.CompletedProcess:
    env = dict(env or os.environ, PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-m", "rackproof_sim.cli", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=cwd, env=env)


def test_down_leaves_namespaces_processes_etc_and_home_as_before_up():
    name = unique_name("dn")
    before = snapshot(name)
    with SimRack("thor2", name) as r:
        assert r.out("thor-1", "hostname").strip() == "thor-1"
        # an interactive login writes utmp/wtmp/lastlog: they must stay inside the node
        assert r.bench(f"ssh -tt -F {r.state.ssh_config} thor-2 'touch /tmp/x; exit' </dev/null").returncode == 0
        r.fault("thor-2", "lane-down")
        r.fault("thor-1", "jetpack-mismatch")
        assert r.out("thor-1", "cat /etc/hostname").strip() == "thor-1"
        assert r.bench("ip route show default").stdout == ""
    after = snapshot(name)
    assert compare(before, after) == []
    assert not RackState(name).root.exists()


def test_a_second_up_says_so_and_leaves_the_rack_alone():
    name = unique_name("tw")
    with SimRack("thor2", name) as r:
        record = r.state.load()
        again = cli("up", "thor2", "--name", name)
        assert again.returncode == 0
        assert "already up" in again.stderr and again.stdout == ""
        assert r.state.load() == record
        assert r.out("thor-2", "hostname").strip() == "thor-2"


def test_down_stops_a_monitor_that_up_never_recorded():
    # an `up` killed right after starting the bond monitor leaves no pid in the rack's state
    name = unique_name("mon")
    monitor = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)",
                                "rackproof_sim.monitor", "--name", name])
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)",
                              "rackproof_sim.monitor", "--name", name + "x"])
    try:
        down = cli("down", "--name", name)
        assert down.returncode == 0 and f"monitor {monitor.pid}" in down.stdout, down.stdout
        assert monitor.wait(timeout=5) is not None
        assert other.poll() is None, "down stopped the monitor of another rack"
    finally:
        for proc in (monitor, other):
            proc.kill()
            proc.wait()


def test_down_cleans_up_after_a_crashed_up():
    name = unique_name("cr")
    before = snapshot(name)
    proc = subprocess.Popen([sys.executable, "-m", "rackproof_sim.cli", "up", "thor5", "--name", name],
                            cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    state = RackState(name)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:        # kill it once node namespaces and sshd exist
        nodes = state.load().get("nodes", {}) if state.exists() else {}
        if nodes and all("sshd" in n for n in nodes.values()):
            break
        time.sleep(0.02)
    proc.kill()
    proc.wait()
    assert state.load().get("phase") == "starting"
    up_again = cli("up", "thor5", "--name", name)
    assert up_again.returncode == 1 and "did not finish" in up_again.stderr
    down = cli("down", "--name", name)
    assert down.returncode == 0, down.stderr
    assert compare(before, snapshot(name)) == []
    again = cli("down", "--name", name)           # idempotent
    assert again.returncode == 0 and "nothing was left" in again.stdout


def _write_tests(tmp_path: Path) -> Path:
    """A tiny suite of its own (rackproof's plugin, loaded by its entry point, takes --inventory)."""
    path = tmp_path / "test_sim_run_probe.py"
    path.write_text(textwrap.dedent("""
        import os, subprocess, time
        from pathlib import Path

        def test_inventory_is_there():
            assert Path(os.environ["RACKPROOF_INVENTORY"]).exists()

        def test_runs_in_the_bench_namespace():
            out = subprocess.run(["ip", "-br", "addr"], capture_output=True, text=True).stdout
            assert "192.168.77.1/24" in out

        def test_fails_on_purpose():
            assert os.environ.get("SIM_RUN_PROBE") != "fail"

        def test_waits():
            if os.environ.get("SIM_RUN_PROBE") == "wait":
                Path(os.environ["SIM_RUN_MARK"]).write_text("running")
                time.sleep(60)
    """))
    return path


def test_run_brings_the_rack_up_runs_pytest_in_the_bench_and_exits_with_its_status(tmp_path):
    name = unique_name("ru")
    before = snapshot(name)
    tests = _write_tests(tmp_path)
    ok = cli("run", "thor2", "--name", name, "--", str(tests), "-q", "-p", "no:cacheprovider", timeout=120,
             cwd=tmp_path, env=dict(os.environ, SIM_RUN_PROBE="pass"))
    assert ok.returncode == 0, ok.stdout[-2000:] + ok.stderr[-2000:]
    assert "4 passed" in ok.stdout
    failing = cli("run", "thor2", "--name", name, "--", str(tests), "-q", "-p", "no:cacheprovider", timeout=120,
                  cwd=tmp_path, env=dict(os.environ, SIM_RUN_PROBE="fail"))
    assert failing.returncode == 1, failing.stdout[-2000:]
    assert f"rack {name} is down" in failing.stderr
    assert compare(before, snapshot(name)) == []


def test_run_takes_the_rack_down_when_it_is_interrupted(tmp_path):
    name = unique_name("in")
    before = snapshot(name)
    tests = _write_tests(tmp_path)
    mark = tmp_path / "mark"
    proc = subprocess.Popen([sys.executable, "-m", "rackproof_sim.cli", "run", "thor2", "--name", name, "--",
                             str(tests), "-q", "-p", "no:cacheprovider", "-k", "waits"],
                            cwd=tmp_path, env=dict(os.environ, SIM_RUN_PROBE="wait", SIM_RUN_MARK=str(mark),
                                                   PYTHONPATH=str(REPO)),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not mark.exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert mark.exists(), proc.communicate()[1][-2000:]
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM, err[-2000:]
    assert f"rack {name} is down" in err
    assert compare(before, snapshot(name)) == []


def test_cli_errors_are_one_line_without_a_traceback():
    name = unique_name("no")
    for args in (["fault", "--name", name, "thor-1", "lane-down"], ["heal", "--name", name, "--all"],
                 ["status", "--name", name], ["exec", "--name", name, "--", "true"]):
        r = cli(*args)
        assert r.returncode == 1, args
        assert r.stderr.count("\n") == 1 and r.stderr.startswith("rackproof sim: "), (args, r.stderr)
        assert "Traceback" not in r.stderr


def test_rackproofs_command_finds_sim_by_its_entry_point_and_hands_it_the_rest():
    from rackproof import cli
    from rackproof_sim import cli as sim_cli
    entry = cli._added_commands()["sim"]
    assert entry is not None and entry.load() is sim_cli.main and entry.dist.name == "rackproof-sim"
    seen = []
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sim_cli, "run_command", lambda a: seen.append(a) or 0)
        for argv in (["up", "thor5"], ["status"], ["fault", "thor-2", "lane-down", "mgbe1_0"], ["heal", "--all"],
                     ["exec", "--", "pytest", "-q"], ["down"], ["run", "spark2", "--", "-k", "roce"]):
            assert cli.main(["sim", *argv]) == 0
    assert [a.sim_func.__name__ for a in seen] == ["cmd_up", "cmd_status", "cmd_fault", "cmd_heal", "cmd_exec",
                                                    "cmd_down", "cmd_run"]
    assert seen[4].cmd == ["--", "pytest", "-q"]


def test_run_arguments_after_the_dashes_are_pytests():
    from rackproof_sim.cli import _fill, _run_args
    parser = argparse.ArgumentParser(prog="rackproof sim")
    _fill(parser)
    run = parser.parse_args(["run", "thor5", "--name", "x", "--", "-q", "--name", "y"])
    assert (_run_args(run), run.name) == (["-q", "--name", "y"], "x")


def test_every_module_that_brings_up_racks_is_kept_on_one_worker():
    """selftests/conftest.py knows rack modules by their names: each is one xdist scope."""
    from selftests.conftest import RACK_MODULE
    modules = [p for p in Path(__file__).parent.glob("test_*.py") if "SimRack(" in p.read_text()]
    assert len(modules) >= 7
    assert [p.name for p in modules if not RACK_MODULE.search(f"selftests/{p.name}::test_x")] == []


def test_racks_of_one_profile_up_side_by_side_are_clusters_of_their_own():
    """rackproof keys a cluster's node locks by its name and nodes: racks named apart are named
    apart as clusters, so no rack's load rounds wait for another's. The rack of the profile's own
    name is the cluster its recordings (examples/replay) were made on."""
    import tomllib

    from rackproof_sim.profiles import get_profile
    from rackproof_sim.rack import inventory_toml

    def cluster(rack: str) -> str:
        return tomllib.loads(inventory_toml(get_profile("thor5"), RackState(rack)))["cluster"]["name"]

    recorded = tomllib.loads((REPO / "examples/replay/thor5-healthy/cluster.toml").read_text())["cluster"]["name"]
    assert cluster("thor5") == recorded == "thor-shelf"
    assert len({cluster("thor5"), cluster("st1thor5"), cluster("st2thor5")}) == 3
