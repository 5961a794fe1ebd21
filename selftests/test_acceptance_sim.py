"""The acceptance suite against the simulated racks: healthy racks pass every check that applies,
and each planted fault fails exactly the checks that should catch it, with a message naming
the node, interface or pair, and the figures. Each fault is healed before the next one.

A fault run covers the part of the suite the fault can touch (named with each case), so the
claim "exactly these fail" is made over that part; the healthy runs cover everything.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from rackproof.inventory import tomltext
from rackproof.inventory.model import load_inventory
from rackproof.ticket.anonymise import Anonymiser
from rackproof.probes.probe import IN_C_LOCALE
from rackproof_sim.profiles import SCALE
from selftests.simrack import rack_fixture, rack_marks, SimRack, with_connect_budget
from selftests.test_anonymise import assert_nothing_of_the_site, masked_check, replayed, site_strings
from selftests.suite import run_suite

LANE_GBPS = 25 * SCALE    # a simulated 25 GbE lane's rate (thor5 and thor2: not shaped below the scale)
pytestmark = rack_marks()


thor5 = rack_fixture("thor5")


def leftovers(rack: SimRack) -> dict[str, str]:
    """Traffic tools still running on any node (each node has its own process namespace)."""
    found = {}
    for node in rack.rack.record["nodes"]:
        out = rack.out(node, "ps -eo args= | grep -E '^(iperf3|ib_write_bw)' || true")
        if out.strip():
            found[node] = out
    return found


def files_holding(root: Path, secret: str) -> list[str]:
    return [str(p) for p in root.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]


def discovered(rack: SimRack, path: Path) -> Path:
    """The inventory `rackproof discover` writes from the rack's nodes, told only what no node can
    say: how to reach them, the agent's key file, and the generated inventory's [expect] figures
    of the simulator (its lanes' scaled rate, its shorter measurements) and of its site (clocks locked)."""
    generated = load_inventory(rack.inventory)
    given = [f"--expect={k}={tomltext.value(v)}" for k, v in generated.expect.model_dump(exclude_defaults=True).items()
             if k in ("lane_rate_gbps", "iperf_seconds", "clocks_locked")]
    key = ["--agent-key-file", str(rack.state.agent_key)] if generated.agent else []
    result = rack.rackproof("discover", "-o", str(path), "--ssh-config", str(rack.state.ssh_config), "--identity",
                            str(rack.state.bench_key), *[f"--ssh={n.ssh_name}" for n in generated.nodes], *given, *key)
    assert result.returncode == 0, result.stdout + result.stderr
    assert_learned_as_generated(load_inventory(path), generated)
    # what only the builder knows, as they would add it: Slurm, the slice holders, sparkrun's cluster
    text = rack.inventory.read_text()
    known = []
    for table in ("sparkrun", "slurm", "slices"):
        if f"\n[{table}]" in text:
            start = text.index(f"\n[{table}]")
            end = text.find("\n[", start + 1)     # the next table, or the end of the file
            known.append(text[start:end if end != -1 else None])
    path.write_text(path.read_text() + "\n" + "\n".join(known) + "\n")
    return path


def assert_learned_as_generated(found, generated) -> None:
    """What discover learned is what the simulator built; only its name (guessed) and version
    pins (offered as comments) may differ."""
    for mine, theirs in zip(found.nodes, generated.nodes, strict=True):
        assert mine.model_dump() == theirs.model_dump()
    if generated.switch:   # the switch's name and ports as it announces them over LLDP
        assert found.switch == generated.switch
    assert found.agent == generated.agent
    assert [e.model_dump(exclude={"tokens_per_s_floor"}) for e in found.engines] == \
        [e.model_dump(exclude={"tokens_per_s_floor"}) for e in generated.engines]
    assert found.ssh == generated.ssh and found.cluster.user == generated.cluster.user


def ran(evidence: dict, command: str) -> bool:
    """Whether the evidence is of `command` (as the node ran it: in the C locale, rackproof.probes.probe)."""
    return evidence["command"].removeprefix(IN_C_LOCALE).startswith(command)


def results(run) -> dict:
    return json.loads((run.run_dir / "results.json").read_text())


# --- healthy racks --------------------------------------------------------------------------

def test_healthy_thor5_passes_every_check_on_the_discovered_inventory_and_leaves_nothing_running(pytester, thor5,
                                                                                               tmp_path):
    inventory = discovered(thor5, tmp_path / "cluster.toml")
    # recorded as a site sends its rack with a bug report: masked, nothing unmasked on disk
    run = run_suite(pytester, f"--inventory={inventory}", "-n", "2", f"--record={tmp_path / 'masked'}", "--anonymise",
                    netns=thor5.rack.topo.bench)
    assert run.exit_status == 0 and run.outcomes and set(run.outcomes.values()) == {"passed"}, run.output
    assert sorted(p.name for p in (tmp_path / "masked").iterdir()) == ["cluster.toml"] + [
        f"node-{i}.json" for i in range(1, 6)]
    masked = replayed(tmp_path / "masked")
    evidence = [f"{e['stdout']} {e['stderr']}" for t in results(run)["tests"] for e in t["evidence"]]
    assert_nothing_of_the_site(tmp_path / "masked", site_strings(inventory, evidence))
    # every check a recording can judge (not those of a load) passes on the masked one, as live
    names = Anonymiser(load_inventory(inventory)).names
    judged = {masked_check(names, check.split("::")[-1]) for check in run.outcomes
              if check.split("::")[-1].split("[")[0] not in masked["live_only"]}
    assert masked["verdict"] == "ACCEPTED" and masked["live_only"], masked
    assert {check.split("::")[-1]: outcome for check, outcome in masked["outcomes"].items()} == dict.fromkeys(
        judged, "passed")
    ids = " ".join(run.outcomes)
    for check in ("test_lane_speed[thor-3:mgbe2_0]", "test_passwordless_ssh[thor-4->thor-1]",
                  "test_iperf3_bonded_four_streams[", "test_bond_state[thor-5]", "test_agent_streams_each_model[",
                  "test_engine_listens_on_its_cluster_address[llama-3.1-8b@thor-2]", "test_homes_are_private[thor-3]",
                  "test_nothing_unexpected_listens[thor-1]", "test_clock_within_munges_limit[thor-5]"):
        assert check in ids
    doc = results(run)
    assert doc["verdict"]["decision"] == "ACCEPTED"
    # step 9: a real srun answer from every node (run from the controller)
    srun = {t["id"].split("::")[-1]: [(e["node"], e["stdout"].strip()) for e in t["evidence"]
                                      if ran(e, "srun ")]
            for t in doc["tests"] if "test_node_takes_jobs[" in t["id"]}
    assert srun == {f"test_node_takes_jobs[thor-{i}]": [("thor-1", f"thor-{i}")] for i in range(1, 6)}
    kinds = {m["kind"] for t in doc["tests"] for m in t.get("measurements", [])}
    assert {"lane rate", "bonded rate", "tokens/s", "time to first token", "FEC corrected under load"} <= kinds
    # cabling proven by the switch's own LLDP announcements: lldpcli's JSON is the evidence
    cabling = [t for t in doc["tests"] if "test_lane_is_in_its_planned_port[" in t["id"]]
    assert len(cabling) == 20 and all('"sw-25g"' in e["stdout"] for t in cabling for e in t["evidence"]
                                      if ran(e, "lldpcli")), cabling[:1]
    # every lane carried load and its counters were read before and after it
    health = [t for t in doc["tests"] if "test_lane_error_counters_under_load[" in t["id"]]
    assert len(health) == 20 and all(t["outcome"] == "passed" for t in health)
    assert not leftovers(thor5)
    assert not files_holding(run.run_dir, thor5.agent_key), "the access key leaked into the run's files"
    # pairs were measured side by side in rounds, yet at any moment a node sent to one peer at
    # most and received from one at most (from when each pair's iperf3 clients ran: its server,
    # started while the round before measured, only listens until then)
    spans = [(tuple(t["pairs"][0]), min(e["started"] for e in traffic),
              max(e["started"] + e["duration"] for e in traffic))
             for t in doc["tests"] if "test_throughput.py" in t["id"]
             for traffic in [[e for e in t["evidence"] if "iperf3 -c" in e["command"]]]]
    together = [(a, b) for i, a in enumerate(spans) for b in spans[i + 1:] if a[1] < b[2] and b[1] < a[2]]
    assert together and all(a[0][0] != b[0][0] and a[0][1] != b[0][1] for a, b in together), together
    assert any(a[0][1] == b[0][0] for a, b in together), "no node sent while it received"


# --- planted faults ---------------------------------------------------------------------------

def test_lane_down_fec_mismatch_and_a_missing_key_each_fail_their_own_check_only(pytester, thor5):
    # three faults on parts no other touches, judged in one run of the checks they can touch
    with thor5.planted("thor-3", "lane-down", "mgbe1_0"), thor5.planted("thor-2", "fec-mismatch", "mgbe0_0"), \
            thor5.planted("thor-2", "ssh-key-missing", "thor-4"):
        run = thor5.suite(pytester, "tests_physical", "tests_ssh", "-n", "2")
    link, fec = "test_lanes::test_lane_link_detected[thor-3:mgbe1_0]", "test_lanes::test_lane_fec[thor-2:mgbe0_0]"
    key = "test_ssh_mesh::test_passwordless_ssh[thor-2->thor-4]"
    assert run.failed == {link, fec, key}, run.output
    assert "thor-3 mgbe1_0" in run.messages[link] and "port 10" in run.messages[link] and \
        "Link detected: no" in run.messages[link]
    message = run.messages[fec]
    assert "thor-2 mgbe0_0" in message and "port 5" in message and "expected RS" in message and "BaseR" in message
    assert "Permission denied" in run.messages[key]


def test_bond_lane_down_and_slow_engine_fail_their_checks_and_give_accepted_with_limits_naming_them(pytester, thor5,
                                                                                                  tmp_path):
    with thor5.planted("thor-3", "bond-lane-down", "mgbe1_0"), thor5.planted("thor-3", "slow-engine"):
        # every check involving thor-3: a declared scope (a narrowed run would be INCOMPLETE)
        run = run_suite(pytester, f"--inventory={thor5.one_second_runs(tmp_path)}", "-n", "2", "--node", "thor-3",
                        netns=thor5.rack.topo.bench)
    # of the lanes', the bond's and the bonded rates' checks, exactly that lane's, the bond's and the node's rates fail
    bonded = {t for t in run.outcomes if "four_streams" in t}
    assert bonded and all("thor-3" in t for t in bonded)
    network = {t for t in run.failed if t.split("::")[0] in ("test_lanes", "test_cabling", "test_gpus", "test_bond")
               or "four_streams" in t}
    assert network == {"test_lanes::test_lane_link_detected[thor-3:mgbe1_0]", "test_bond::test_bond_state[thor-3]"
                       } | bonded, run.output
    assert "mgbe1_0 (switch port 10) MII status down" in run.messages["test_bond::test_bond_state[thor-3]"]
    figures = run.messages[sorted(bonded)[0]]
    assert "Gbit/s" in figures and f"expected at least {0.9 * 4 * LANE_GBPS:g} Gbit/s" in figures
    doc = results(run)
    verdict = doc["verdict"]
    assert verdict["decision"] == "ACCEPTED WITH LIMITS" and doc["run"]["exit_status"] == 1, verdict
    assert verdict["coverage"]["nodes"] == ["thor-3"] and verdict["coverage"]["complete"], verdict
    limited = " ".join(c["name"] for c in verdict["capabilities"] if c["status"] != "available")
    assert "thor-3" in limited and "gemma-3-12b" in limited, verdict
    html = (run.run_dir / "report.html").read_text()
    assert 'data-lane="mgbe1_0"' in html and "ACCEPTED WITH LIMITS" in html


def test_node_unreachable_fails_its_own_checks_quickly_and_no_one_elses(pytester, thor5, tmp_path):
    inventory = with_connect_budget(thor5.inventory, 2, tmp_path)
    with thor5.planted("thor-5", "node-unreachable"):
        run = run_suite(pytester, f"--inventory={inventory}", "-k", "not iperf3 and not under_load", "-n", "2",
                        netns=thor5.rack.topo.bench)
    # the controller reaches thor-5 no more; every check that runs a command there fails with
    # that reason, the checks of the others pass (thor-5 still answers on the cluster network)
    doc = results(run)
    ran_there = {t["id"].split("::")[-1] for t in doc["tests"] if any(e["node"] == "thor-5" for e in t["evidence"])}
    own = {t for t in run.outcomes if t.split("::")[-1] in ran_there}
    assert any("[thor-5" in t for t in own) and any("[all]" in t for t in own), own
    assert own and run.failed == own, sorted(run.failed ^ own)
    for test in own:
        assert "thor-5 is unreachable" in run.messages[test], run.messages[test]
    assert {o for t, o in run.outcomes.items() if t not in own} == {"passed"}
    assert "test_passwordless_ssh[thor-1->thor-5]" in " ".join(t for t, o in run.outcomes.items() if o == "passed")
    durations = [t["duration"] for t in doc["tests"] if t["id"].split("::")[-1] in ran_there]
    # connecting is retried within [ssh] connect_budget, then one last connect timeout
    ssh = load_inventory(inventory).ssh
    assert max(durations) < ssh.connect_budget + ssh.connect_timeout + 3, \
        "an unreachable node must cost at most its connect budget and timeout"


def test_moved_plugs_fail_their_cabling_check_only_and_no_lldpd_leaves_it_not_verified(pytester, thor5):
    with thor5.planted("thor-2", "plugs-swapped", "mgbe1_0", "mgbe2_0"), thor5.planted("thor-4", "plug-in-port", "mgbe0_0", "1"), \
            thor5.planted("thor-5", "lldpd-missing"):
        run = thor5.suite(pytester, "tests_physical/test_cabling.py", "tests_physical/test_lanes.py", "-n", "2")
    cabling = "test_cabling::test_lane_is_in_its_planned_port"
    assert run.failed == {f"{cabling}[thor-2:mgbe1_0]", f"{cabling}[thor-2:mgbe2_0]", f"{cabling}[thor-4:mgbe0_0]",
                          f"{cabling}[thor-1:mgbe0_0]"}, run.output
    assert ("expected sw-25g port 6 (swp6), found sw-25g port 7 (swp7). Cause: it is swapped with thor-2 mgbe2_0 "
            "(cable thor-2/3), which is in port 6: swap the two plugs back") in run.messages[f"{cabling}[thor-2:mgbe1_0]"]
    assert "thor-4 mgbe0_0 (cable thor-4/1)" in run.messages[f"{cabling}[thor-4:mgbe0_0]"]
    assert "port 1 belongs to thor-1 mgbe0_0 (cable thor-1/1) in cluster.toml" in run.messages[f"{cabling}[thor-4:mgbe0_0]"]
    doc = results(run)
    unverified = {t["id"].split("::")[-1]: t["message"] for t in doc["tests"] if t["outcome"] == "not verified"}
    assert set(unverified) == {f"test_lane_is_in_its_planned_port[thor-5:mgbe{k}_0]" for k in range(4)}, unverified
    assert all("lldpd does not answer `lldpcli show configuration`. To verify it: sudo systemctl enable --now lldpd" in m for m in unverified.values())
    scope = {s["check"]: s["reasons"] for s in doc["scope"]}
    assert any("thor-5" in r for r in scope["test_lane_is_in_its_planned_port"])
    # the picture keeps the plan's line and draws the real one beside it
    lanes = {(n["name"], i["name"]): i for n in doc["topology"]["nodes"] for i in n["interfaces"]}
    assert (lanes["thor-2", "mgbe1_0"]["seen_port"], lanes["thor-2", "mgbe1_0"]["facts"]["LLDP"]) == (7, "sw-25g swp7")
    assert "seen_port" not in lanes["thor-2", "mgbe0_0"]
    assert 'data-port="6" data-seen-port="7"' in (run.run_dir / "report.html").read_text()
    assert {t for t, o in run.outcomes.items() if "test_lanes::" in t} and \
        all(o == "passed" for t, o in run.outcomes.items() if "test_lanes::" in t)


# --- serving faults ----------------------------------------------------------------------------

def test_jetpack_mismatch_names_the_odd_node(pytester, thor5):
    with thor5.planted("thor-3", "jetpack-mismatch"):
        run = thor5.suite(pytester, "tests_serving/test_versions.py")
    assert run.failed >= {"test_versions::test_same_l4t_release[all]",
                          "test_versions::test_same_package_version[all-nvidia-jetpack-jetpack_version]"}, run.output
    for test in run.failed:
        assert "differs on thor-3:" in run.messages[test] and "thor-1" in run.messages[test]


def test_an_engine_off_the_cluster_network_fails_its_three_checks(pytester, thor5):
    # one engine killed, another moved to 127.0.0.1, in one run of what an engine touches: the
    # engines' and the agent's checks
    with thor5.planted("thor-2", "engine-down"), thor5.planted("thor-3", "engine-on-loopback"):
        run = thor5.suite(pytester, "tests_serving/test_engines.py", "tests_serving/test_agent.py", "-n", "2")
    models = ("llama-3.1-8b@thor-2", "gemma-3-12b@thor-3")
    assert run.failed == {f"{check}[{model}]" for model in models for check in (
        "test_engines::test_engine_listens_on_its_cluster_address", "test_engines::test_engine_answers_from_the_agent_node",
        "test_agent::test_agent_streams_each_model")}, run.output
    down = run.messages["test_engines::test_engine_listens_on_its_cluster_address[llama-3.1-8b@thor-2]"]
    assert "llama-3.1-8b on thor-2 (10.10.0.12:8081)" in down and "nothing listens on port 8081 of thor-2" in down
    loopback = run.messages["test_engines::test_engine_listens_on_its_cluster_address[gemma-3-12b@thor-3]"]
    assert "gemma-3-12b on thor-3 (10.10.0.13:8081)" in loopback
    assert "127.0.0.1" in loopback and "agent on thor-1 cannot reach it" in loopback
    # thor-1's sshd answers at once that it could not connect: the node's answer, never a dropped
    # connection (fabric's forward waited the request's 10 s, then called it one: INCOMPLETE)
    for model, address in (("llama-3.1-8b@thor-2", "10.10.0.12:8081"), ("gemma-3-12b@thor-3", "10.10.0.13:8081")):
        answer = run.messages[f"test_engines::test_engine_answers_from_the_agent_node[{model}]"]
        assert f"GET /v1/models (from thor-1) answered nothing: no HTTP answer: the node could not connect to {address}" \
               in answer, answer
    assert "transient fault" not in run.output, run.output


# --- the disruptive check: a bond member taken down and brought back (--allow-disruptive) --------

LANE_LOSS = "tests_network/test_bond.py::test_bond_rides_out_a_lane_loss[thor-1->thor-2]"
LANE_LOSS_ID = "test_bond::test_bond_rides_out_a_lane_loss[thor-1->thor-2]"


def link_up(rack: SimRack, node: str, lane: str) -> bool:
    return "LOWER_UP" in rack.out(node, f"ip -br link show dev {lane}")


def sleepers(rack: SimRack, node: str) -> str:
    """The dead man's switch of a lane taken down (`sleep SECONDS; ip link set ... up`), if one was
    left behind; not a slice holder's job (`sleep infinity`)."""
    return rack.out(node, "ps -eo args= | grep -E '^(sh -c )?sleep [0-9]' || true").strip()


def test_without_allow_disruptive_the_lane_loss_is_out_of_scope(pytester, thor5):
    run = thor5.suite(pytester, LANE_LOSS)
    assert not run.outcomes, run.output
    assert {"check": "test_bond_rides_out_a_lane_loss", "reasons": ["disturbs the cluster; run with --allow-disruptive"]
            } in [{k: s[k] for k in ("check", "reasons")} for s in results(run)["scope"]]


def test_a_healthy_bond_rides_out_a_lane_loss_and_gets_the_lane_back(pytester, thor5):
    run = thor5.suite(pytester, "--allow-disruptive", LANE_LOSS)
    assert run.outcomes == {LANE_LOSS_ID: "passed"}, run.output
    figures = {m["kind"]: m for t in results(run)["tests"] for m in t.get("measurements", [])}
    assert figures["bonded rate, one lane down"]["value"] < 3.5 * LANE_GBPS < figures["bonded rate, lane back"]["value"]
    assert link_up(thor5, "thor-1", "mgbe1_0") and not sleepers(thor5, "thor-1")


def test_a_slow_member_fails_the_lane_loss_and_the_lane_still_comes_back(pytester, thor5):
    with thor5.planted("thor-1", "port-at-10G", "mgbe3_0"):
        run = thor5.suite(pytester, "--allow-disruptive", LANE_LOSS)
    assert run.failed == {LANE_LOSS_ID}, run.output
    message = run.messages[LANE_LOSS_ID]
    assert "thor-1 -> thor-2, thor-1 mgbe1_0 (switch port 2) down" in message
    assert f"expected at least {0.9 * 3 * LANE_GBPS:g} Gbit/s" in message and "3 lanes left" in message
    assert link_up(thor5, "thor-1", "mgbe1_0") and not sleepers(thor5, "thor-1")


def test_a_lane_comes_back_by_itself_when_the_controller_dies_holding_it_down(thor5):
    # the controller takes thor-3 mgbe2_0 down and dies without a word (no finally runs; the
    # context manager is kept referenced so that garbage collection does not close it either)
    dies = ("from rackproof.measuring import disrupt; from rackproof.nodes.host import connect; "
            "from rackproof.inventory.model import load_inventory; from rackproof.nodes.remote import EvidenceLog; import os; "
            f"h = connect(load_inventory('{thor5.inventory}'), EvidenceLog())['thor-3']; "
            "held = disrupt.lane_down(h, 'mgbe2_0', restore_after=3); held.__enter__(); os._exit(0)")
    result = thor5.bench(f"{sys.executable} -c \"{dies}\"")
    assert result.returncode == 0, result.stderr
    assert not link_up(thor5, "thor-3", "mgbe2_0")
    deadline = time.monotonic() + 15
    while not link_up(thor5, "thor-3", "mgbe2_0") and time.monotonic() < deadline:
        time.sleep(0.5)
    assert link_up(thor5, "thor-3", "mgbe2_0"), "the dead man's switch did not bring the lane back"
    assert not sleepers(thor5, "thor-3")


def test_a_duplicate_address_fails_once_naming_both_nodes_and_the_rest_point_to_it(pytester, thor5):
    with thor5.planted("thor-5", "duplicate-address", "thor-4"):
        run = thor5.suite(pytester, "tests_network/test_addressing.py", "tests_network/test_reachability.py", "-n", "2")
    unique = "test_addressing::test_cluster_addresses_are_unique[all]"
    assert unique in run.failed, run.output
    assert "10.10.0.14 is held by 2 nodes: thor-4 (bond0) and thor-5 (bond0)" in run.messages[unique]
    others = run.failed - {unique}
    assert others, "thor-5 lost its own address: reaching it must fail"
    for test in others:
        assert "see test_cluster_addresses_are_unique" in run.messages[test], (test, run.messages[test])
