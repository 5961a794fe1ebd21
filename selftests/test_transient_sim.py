"""A transient fault is retried or reported as what it was, never a verdict about a node: on
the simulated rack, whose sshd runs with OpenSSH's stock MaxSessions (10) and MaxStartups
(10:30:100), as Ubuntu, L4T and DGX OS ship it."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
import threading

from rackproof.nodes.remote import CHANNELS_PER_CONNECTION
from rackproof_sim.node import nsenter
from selftests.simrack import SimRack, rack_marks, unique_name
from selftests.suite import REPO, run_suite

pytestmark = rack_marks()


# COUNT commands (COMMAND, {k} its number) over one connection to thor-1, 16 at once, from the
# controller (the bench namespace); none may run again: a dropped connection is an error here
AT_ONCE = """
import json, sys
from concurrent.futures import ThreadPoolExecutor
from rackproof.nodes.remote import EvidenceLog, NoAnswer, Remote, SshTransport
ssh_config, channels, count, command = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
log = EvidenceLog()
log.sink = []
remote = Remote("thor-1", SshTransport("thor-1", "thor-1", None, 5.0, ssh_config=ssh_config, channels=channels),
                log, 30)
def one(k):
    try:
        return remote.run(command.format(k=k)).stdout
    except NoAnswer as e:
        return str(e)
with ThreadPoolExecutor(16) as pool:
    stdout = list(pool.map(one, range(count)))
remote.close()
print(json.dumps({"stdout": stdout, "notes": [ev.note for ev in log.sink if ev.note]}))
"""


def at_once(rack: SimRack, channels: int, count: int, command: str) -> dict:
    done = rack.bench(f"cd {REPO} && {sys.executable} -c {shlex.quote(AT_ONCE)} {rack.state.ssh_config} "
                      f"{channels} {count} {shlex.quote(command)}", timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def most_at_once(stdout: list[str]) -> int:
    """The most commands that ran at the same moment, from each one's start and end on the node."""
    spans = [tuple(map(float, line.split()[:2])) for line in stdout]
    return max(sum(1 for start, end in spans if start <= at < end) for at, _ in spans)


def test_the_suite_stays_within_max_sessions_and_refused_channels_are_asked_for_again():
    with SimRack("thor2", unique_name("chan")) as rack:
        sshd_config = rack.rack.node("thor-1").dir / "sshd" / "sshd_config"
        config = rack.as_root("thor-1", f"/usr/sbin/sshd -T -f {sshd_config}").stdout.lower()
        assert "maxstartups 10:30:100\n" in config, config
        max_sessions = int(re.search(r"^maxsessions (\d+)$", config, re.M)[1])
        assert max_sessions == 10 and CHANNELS_PER_CONNECTION < max_sessions, (max_sessions, CHANNELS_PER_CONNECTION)
        # 16 commands of a second each, from 16 threads: on the node, each says when it ran
        command = "s=$(date +%s.%N); sleep 1; echo $s $(date +%s.%N) {k}"
        for channels in (CHANNELS_PER_CONNECTION, 16):
            answer = at_once(rack, channels, 16, command)
            assert [line.split()[-1] for line in answer["stdout"]] == [str(k) for k in range(16)], answer["stdout"]
            notes, ran = answer["notes"], most_at_once(answer["stdout"])
            if channels == CHANNELS_PER_CONNECTION:
                # the product's own count: never more at once on the node, and all of them used
                assert CHANNELS_PER_CONNECTION // 2 < ran <= CHANNELS_PER_CONNECTION, ran
            else:
                # past MaxSessions sshd refuses the channel; it is asked for again, the connection kept
                assert notes and ran <= max_sessions, (ran, notes)
            # within it a refusal can still come now and then: sshd counts a session until its child
            # is reaped, a moment after the channel closed; asked again, it is served
            assert all(re.search(r"no channel \(.*\), asked again after [\d.]+ s", n) for n in notes), notes
            assert not any("connected again" in n for n in notes), notes
        # many quick commands at once: a command's end never drops the connection the others use
        # (sshd drops it when a channel's EOF comes after the CLOSE that answered the command's end)
        answer = at_once(rack, CHANNELS_PER_CONNECTION, 800, "echo {k}")
        assert answer["stdout"] == [f"{k}\n" for k in range(800)], [o for o in answer["stdout"] if "dropped" in o][:3]
        assert not any("connected again" in n for n in answer["notes"]), answer["notes"]
        log = (rack.rack.node("thor-1").dir / "sshd" / "sshd.log").read_text()
        assert "nonexistent channel" not in log, log[-2000:]


# thor-1's sshd drops the controller's connections, if it holds any, and then answers no connect
# for a second; it prints how many it dropped
BLIP = ('k=0; for pid in $(ss -Htnp state established "( sport = :22 )" | grep -F " {bench}:" | grep -o "pid=[0-9]*" | '
        'cut -d= -f2 | sort -u); do kill "$pid" && k=$((k+1)); done; if [ "$k" -gt 0 ]; then l=$(cat /run/sshd.pid); '
        'kill -STOP "$l"; sleep 1; kill -CONT "$l"; fi; echo "$k"')


def test_connections_dropped_in_the_middle_of_a_run_reject_nothing(pytester):
    with SimRack("thor5", unique_name("blip")) as rack:
        bench = rack.bench("ip -4 -o addr show scope global | awk '{split($4, a, \"/\"); print a[1]}'").stdout.split()
        assert bench, "the bench namespace has no address"
        stop, blips = threading.Event(), []

        def blip():
            # as soon as the run holds a connection to thor-1, and again 1.5 s after each drop: a
            # fixed start (2 s) came after the whole plan once the run's start got quicker
            while not stop.is_set():
                dropped = 0
                for address in bench:   # in thor-1's own PID namespace: its pids, its sshd
                    dropped += int(subprocess.run(
                        nsenter(rack.rack.node("thor-1").pid, "/bin/sh", "-c", BLIP.format(bench=address)),
                        check=True, timeout=20, capture_output=True, text=True).stdout)
                if dropped:
                    blips.append(dropped)
                stop.wait(1.5 if dropped else 0.1)

        blipper = threading.Thread(target=blip)
        blipper.start()
        try:
            # every check that reads facts, logs in or asks an engine; the throughput rounds'
            # servers and clients are not safe to run twice, so they are left out of this run
            run = run_suite(pytester, f"--inventory={rack.inventory}", "-n", "2", "tests_physical", "tests_ssh",
                            "tests_serving", netns=rack.rack.topo.bench)
        finally:
            stop.set()
            blipper.join()
    results = json.loads((run.run_dir / "results.json").read_text())
    notes = [ev["note"] for test in results["tests"] for ev in test.get("evidence", []) if ev["node"] == "thor-1"]
    assert blips, "the run held no connection to thor-1 while the blips ran"
    # the blips hit the run: a command in flight ran again, a dropped connection was made again, or
    # a connect the first blip cut short was tried again
    assert any(re.search(r"connected again|ran again|connected at attempt", n) for n in notes), notes
    # a check whose command or request the blips dropped again when it ran once more is cut short,
    # named as what it was, never a verdict; the retries carry the rest through. How many: as many
    # as the blips caught twice in flight (one dropped batch of facts, or a fan-out of requests from
    # one node, cuts short every check it carries): the set is exactly the checks that did not pass
    cut_short = set(results["verdict"]["coverage"]["cut_short"])
    stopped = {t["id"]: t["message"] for t in results["tests"] if t["outcome"] not in ("passed", "skipped")}
    assert set(stopped) == cut_short, run.output
    assert all(re.fullmatch(r"thor-1: (the SSH connection dropped while `.+` ran \(.+\); (it dropped again when it ran "
                            r"once more on a fresh connection|not run again, as it is not safe to repeat)|`.+` got no "
                            r"SSH channel within .+)", m.splitlines()[0]) for m in stopped.values()), stopped
    assert not any(t["outcome"] == "failed" for t in results["tests"]), run.output   # a cut-short check is an error
    assert "unreachable" not in run.output, run.output
    # the run is narrowed by its test paths (named in its verdict), and INCOMPLETE for that alone:
    # its reason is exactly the narrowing and the checks cut short, nothing else
    narrowing = "test paths " + " ".join(str(REPO / f) for f in ("tests_physical", "tests_ssh", "tests_serving"))
    coverage = results["verdict"]["coverage"]
    assert coverage["narrowed_by"] == [narrowing] and not coverage["not_run"] and not coverage["interrupted"], coverage
    assert coverage["reason"] == f"narrowed by {narrowing}" + (
        f"; {len(cut_short)} check{'s' * (len(cut_short) != 1)} cut short by a transient fault (a dropped SSH "
        "connection, a refused channel, a busy lock): run again" if cut_short else ""), coverage["reason"]
    assert results["verdict"]["decision"] == "INCOMPLETE" and "verdict: INCOMPLETE" in run.output, run.output
