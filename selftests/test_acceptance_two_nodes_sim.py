"""The acceptance suite against the simulated two-node racks, thor2 at step 6 and spark2 (thor5's
are test_acceptance_sim.py's; a module of its own so that CI's workers share the minutes): healthy
racks pass every check that applies, and each planted fault fails exactly the checks that should
catch it, with a message naming the node, interface or pair, and the figures."""

from __future__ import annotations

import json

from rackproof.inventory.model import load_inventory
from rackproof.ticket.anonymise import Anonymiser, anonymise_recording
from selftests.simrack import rack_fixture, rack_marks
from selftests.suite import run_suite
from selftests.test_acceptance_sim import LANE_GBPS, discovered, leftovers, ran, results
from selftests.test_anonymise import assert_nothing_of_the_site, assert_replays_alike, printed_in, site_strings

pytestmark = rack_marks()


thor2 = rack_fixture("thor2")


spark2 = rack_fixture("spark2")


# --- healthy racks --------------------------------------------------------------------------

def test_healthy_thor2_at_step_6_passes_every_check(pytester, thor2):
    run = thor2.suite(pytester, "--step", "6", "-n", "2")
    assert run.exit_status == 0 and set(run.outcomes.values()) == {"passed"}, run.output
    assert "test_agent::test_remote_model_keeps_up_with_the_local_one[llama-3.1-8b@thor-2]" in run.outcomes
    assert not any("bond" in t for t in run.outcomes), "no bond before step 8"

def test_healthy_spark2_passes_every_check_on_the_discovered_inventory(pytester, spark2, tmp_path):
    inventory = discovered(spark2, tmp_path / "cluster.toml")
    run = run_suite(pytester, f"--inventory={inventory}", "-n", "2", f"--record={tmp_path / 'recorded'}",
                    netns=spark2.rack.topo.bench)
    assert run.exit_status == 0 and set(run.outcomes.values()) == {"passed"}, run.output
    # its recording, anonymised, replays alike and holds nothing of the site
    anonymiser = Anonymiser(load_inventory(inventory))
    anonymise_recording(tmp_path / "recorded", tmp_path / "masked", anonymiser, inventory.read_text())
    assert assert_replays_alike(tmp_path / "recorded", inventory, tmp_path / "masked", anonymiser)["outcomes"]
    assert_nothing_of_the_site(tmp_path / "masked", site_strings(inventory, printed_in(tmp_path / "recorded")))
    for check in ("test_cx7::test_roce_bandwidth_over_the_port[spark-1->spark-2]",
                  "test_nccl::test_nccl_across_the_nodes[all]", "test_cx7::test_roce_bandwidth_of_each_link[spark-2->spark-1]",
                  "test_cx7::test_cx7_interface_up[spark-2:enP2p1s0f1np1]",
                  "test_cx7::test_netplan_file_persists_the_cx7_addresses[spark-1]"):
        assert check in run.outcomes
    assert {t.split("::")[-1] for t in run.outcomes} >= {
        "test_sparkrun_runs_on_the_head[spark-1]", "test_the_definition_lists_the_nodes_head_first[spark-1]",
        "test_the_multi_node_path_uses_cx7_addresses[spark-1]", "test_passwordless_ssh_over_cx7[spark-1->spark-2]",
        "test_passwordless_ssh_over_cx7[spark-2->spark-1]", "test_password_login_is_off[spark-2]",
        "test_sparkrun_setup_check_finds_no_gap[spark-1]", "test_sparkrun_setup_check_finds_no_gap[spark-2]",
        "test_the_image_is_on_the_head[nvcr.io/nvidia/vllm:25.09-py3@spark-1]"}
    # the real sparkrun CLI's answers are the evidence
    doc = results(run)
    evidence = [e for t in doc["tests"] for e in t["evidence"]]
    shown = [json.loads(e["stdout"]) for e in evidence if "sparkrun cluster show spark-pair --json" in e["command"]]
    assert shown and shown[0]["hosts"] == ["192.168.100.10", "192.168.100.11"]
    assert any(e["stdout"].startswith("sparkrun, version ") for e in evidence)
    checked = [json.loads(e["stdout"]) for e in evidence if "sparkrun setup check --cluster spark-pair" in e["command"]]
    assert checked and checked[0]["hosts"] == ["192.168.100.10", "192.168.100.11"] and checked[0]["critical_gaps"] == 0
    # the guide's minimal acceptance: four items proven; backup and restore need [rollback] and a snapshot
    states = {i["item"]: (i["state"], i["why"]) for i in doc["spark_acceptance"]}
    assert [state for state, _ in states.values()] == ["passed"] * 4 + ["not checked"], states
    assert "no [rollback] in the inventory" in states["Backup and restore steps tested without losing the management "
                                                     "path"][1]
    assert 'id="spark">Spark minimal acceptance</h2>' in (run.run_dir / "report.html").read_text()
    # the QSFP cable proven end to end: each host's lldpd hears the other's, on the paired interface
    heard = [json.loads(e["stdout"]) for t in doc["tests"] if "test_cx7_cable_joins_the_planned_ports[" in t["id"]
             for e in t["evidence"] if ran(e, "lldpcli")]
    assert len(heard) == 4 and all('"spark-' in json.dumps(h) for h in heard)
    assert not leftovers(spark2)


# --- planted faults ---------------------------------------------------------------------------

def test_a_marginal_cable_fails_only_its_error_counters_with_the_deltas(pytester, thor2):
    with thor2.planted("thor-2", "marginal-cable", "mgbe0_0"):
        run = thor2.suite(pytester, "--step", "6", "tests_physical", "tests_network/test_throughput.py",
                    "tests_network/test_link_health.py")
    health = "test_link_health::test_lane_error_counters_under_load"
    assert run.failed == {f"{health}[thor-2:mgbe0_0]"}, run.output
    assert run.outcomes[f"{health}[thor-1:mgbe0_0]"] == "passed"
    assert all(o == "passed" for t, o in run.outcomes.items() if "iperf3" in t or "test_lane_speed" in t)
    message = run.messages[f"{health}[thor-2:mgbe0_0]"]
    assert message.startswith("thor-2 mgbe0_0 (switch sw-25g port 5, cable thor-2/1): error counters under load: "
                              "expected no uncorrectable FEC block and no CRC/FCS error, found "), message
    assert "MB sent, uncorrectable FEC blocks +" in message and "corrected FEC blocks +" in message
    assert "over-bent DAC" in message
    assert not leftovers(thor2)


def test_a_lowered_mtu_fails_the_pair_into_it_naming_the_interface(pytester, thor2):
    with thor2.planted("thor-2", "mtu-lowered", "1400"):
        run = thor2.suite(pytester, "--step", "6", "tests_network/test_addressing.py")
    path = "test_addressing::test_packets_of_the_mtu_cross_whole_and_no_larger"
    assert run.failed == {f"{path}[thor-1]", "test_addressing::test_mtu_is_the_same_on_every_cluster_interface[all]"}
    assert run.messages[f"{path}[thor-1]"].startswith(
        "thor-1: packets of the MTU with don't-fragment (ping -M do): thor-1 -> thor-2: a 1500-byte packet got no "
        "reply (thor-2 mgbe0_0 has MTU 1400). ")
    assert run.outcomes[f"{path}[thor-2]"] == "passed"   # its own 1400 bytes cross, 1401 do not leave


def test_port_at_10g_fails_the_speed_and_the_lane_rate_on_thor2(pytester, thor2, tmp_path):
    with thor2.planted("thor-2", "port-at-10G", "mgbe0_0"):
        run = run_suite(pytester, f"--inventory={thor2.one_second_runs(tmp_path)}", "--step", "6", "tests_physical",
                        "tests_network/test_throughput.py", netns=thor2.rack.topo.bench)
    rate = {t for t in run.outcomes if "iperf3_one_stream" in t}
    assert run.failed == {"test_lanes::test_lane_speed[thor-2:mgbe0_0]"} | rate, run.output
    speed = run.messages["test_lanes::test_lane_speed[thor-2:mgbe0_0]"]
    assert "expected 25000Mb/s" in speed and "found 10000Mb/s" in speed and "flash time" in speed
    assert f"lane rate: expected at least {0.9 * LANE_GBPS:g} Gbit/s, found 0." in run.messages[rate.pop()]
    assert not leftovers(thor2)


def test_roce_link_down_fails_that_link_the_port_bandwidth_its_latency_and_nccl(pytester, spark2):
    with spark2.planted("spark-1", "roce-link-down", "enP2p1s0f1np1"):
        run = spark2.suite(pytester, "tests_network/test_cx7.py", "tests_network/test_nccl.py")
    link = {f"test_cx7::test_cx7_{check}[{node}:enP2p1s0f1np1]"
            for check in ("interface_up", "speed", "ping_on_its_subnet") for node in ("spark-1", "spark-2")}
    # RoCE bandwidth and latency are measured both ways over the port's links; NCCL spreads a
    # collective over both logical links of the port: each fails with either down
    both_ways = {f"test_cx7::test_{check}[{pair}]"
                 for check in ("roce_bandwidth_over_the_port", "roce_bandwidth_of_each_link", "rdma_latency_of_each_link")
                 for pair in ("spark-1->spark-2", "spark-2->spark-1")}
    assert run.failed == link | both_ways | {"test_nccl::test_nccl_across_the_nodes[all]"}, run.output
    assert "Down" in run.messages["test_cx7::test_cx7_interface_up[spark-1:enP2p1s0f1np1]"]
    # the latency names the link that did not connect
    assert "ib_write_lat -d roceP2p1s0f1" in run.messages["test_cx7::test_rdma_latency_of_each_link[spark-1->spark-2]"]
    assert not leftovers(spark2)


# --- serving faults ----------------------------------------------------------------------------

def test_slow_engine_fails_the_step_6_comparison_only(pytester, thor2):
    with thor2.planted("thor-2", "slow-engine"):
        run = thor2.suite(pytester, "--step", "6", "tests_serving")
    test = "test_agent::test_remote_model_keeps_up_with_the_local_one[llama-3.1-8b@thor-2]"
    assert run.failed == {test}, run.output
    assert "llama-3.1-8b on thor-2 through the agent" in run.messages[test] and "tokens/s" in run.messages[test]
