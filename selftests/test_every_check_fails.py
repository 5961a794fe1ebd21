"""The suite's own rule, enforced: every check (each test_* of the tests_* folders) has a
selftest that fails it, by a planted fault on a simulated rack, a recorded fault replayed, or a
unit case calling the check with a faulty answer. FAILS_IT names that selftest for each check;
the walk below finds every check, and checks that each named selftest exists and that its
module names the check (so that the table points at a selftest about it)."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FOLDERS = ("tests_physical", "tests_network", "tests_ssh", "tests_serving")

ACCEPTANCE, STEP9, SPARKRUN, CHECKS, UNREAD = ("test_acceptance_sim.py", "test_step9_sim.py", "test_sparkrun_sim.py",
                                               "test_checks_fail.py", "test_checks_unread.py")
TWO_NODES = "test_acceptance_two_nodes_sim.py"
STEP9_FAULTS = f"{STEP9}::test_each_fault_fails_exactly_its_check_and_takes_its_capability_away"
LANE_DOWN = "test_backbone_replay.py::test_lane_down_and_fec_mismatch_fail_those_two_and_what_rides_the_dead_lane"

CX7_HARDWARE_FAULTS = "test_cx7_hardware_sim.py::test_each_fault_fails_its_own_check_with_its_cause_and_nothing_else"
# check -> the selftest (file::function) in which it fails
FAILS_IT = {
    # tests_physical
    "test_lane_is_in_its_planned_port":
        f"{ACCEPTANCE}::test_moved_plugs_fail_their_cabling_check_only_and_no_lldpd_leaves_it_not_verified",
    "test_cx7_cable_joins_the_planned_ports": f"{CHECKS}::test_a_cx7_cable_to_the_other_logical_interface_fails",
    "test_gpus_seen_by_the_driver": "test_gpus_sim.py::test_a_gpu_the_driver_does_not_see_fails_its_node_only",
    "test_same_power_mode": "test_gpus_sim.py::test_another_power_mode_names_the_node_and_both_modes",
    "test_clocks_locked": "test_gpus_sim.py::test_clocks_that_scale_fail_their_node_only",
    "test_lane_link_detected": LANE_DOWN,
    "test_lane_speed": f"{TWO_NODES}::test_port_at_10g_fails_the_speed_and_the_lane_rate_on_thor2",
    "test_lane_fec": LANE_DOWN,
    # tests_network
    "test_hostname_is_the_inventory_name": f"{CHECKS}::test_a_hostname_that_is_not_the_inventory_name_fails",
    "test_cluster_address_on_the_cluster_interface":
        f"{CHECKS}::test_the_cluster_address_missing_elsewhere_mistyped_or_dynamic_fails",
    "test_every_name_resolves_to_its_cluster_address": f"{CHECKS}::test_a_name_resolved_to_another_address_fails_naming_it",
    "test_route_to_each_peer_leaves_by_the_cluster_interface": f"{CHECKS}::test_a_route_by_the_house_port_fails_naming_it",
    "test_mtu_is_the_same_on_every_cluster_interface":
        f"{TWO_NODES}::test_a_lowered_mtu_fails_the_pair_into_it_naming_the_interface",
    "test_packets_of_the_mtu_cross_whole_and_no_larger":
        f"{TWO_NODES}::test_a_lowered_mtu_fails_the_pair_into_it_naming_the_interface",
    "test_cluster_addresses_are_unique":
        f"{ACCEPTANCE}::test_a_duplicate_address_fails_once_naming_both_nodes_and_the_rest_point_to_it",
    "test_bond_state":
        f"{ACCEPTANCE}::test_bond_lane_down_and_slow_engine_fail_their_checks_and_give_accepted_with_limits_naming_them",
    "test_bond_rides_out_a_lane_loss": f"{ACCEPTANCE}::test_a_slow_member_fails_the_lane_loss_and_the_lane_still_comes_back",
    "test_node_does_not_forward": STEP9_FAULTS,
    "test_nothing_unexpected_listens": STEP9_FAULTS,
    "test_password_login_is_off": f"{CHECKS}::test_sshd_that_takes_passwords_fails_naming_the_address",
    "test_cx7_interface_up": f"{CHECKS}::test_a_cx7_interface_down_or_slow_fails",
    "test_cx7_address": f"{CHECKS}::test_a_cx7_interface_without_its_address_fails",
    "test_cx7_speed": f"{CHECKS}::test_a_cx7_interface_down_or_slow_fails",
    "test_cx7_ping_on_its_subnet": f"{UNREAD}::test_cx7_ping_judges_every_peer_not_the_first_of_them",
    "test_roce_bandwidth_over_the_port": "test_causes.py::test_a_slow_logical_link_is_named_by_interface_and_device",
    "test_rdma_latency_of_each_link":
        "test_rdma_latency.py::test_a_slow_direction_fails_naming_its_link_with_every_link_s_figure",
    "test_kernel_log_clean":   # issue 43: the kernel's own reports
        "test_kernel_log_sim.py::test_an_xid_fails_the_kernel_log_check_of_its_node_with_the_line_quoted",
    "test_roce_bandwidth_of_each_link":   # issue 43: per CX7 link and direction
        "test_spark_links.py::test_one_slow_link_in_one_direction_fails_naming_its_devices_with_every_link_s_figure",
    "test_nccl_across_the_nodes": f"{TWO_NODES}::test_roce_link_down_fails_that_link_the_port_bandwidth_its_latency_and_nccl",
    "test_netplan_file_persists_the_cx7_addresses":
        f"{SPARKRUN}::test_netplan_on_the_down_twins_fails_the_netplan_check_naming_both_interfaces",
    "test_lane_error_counters_under_load": f"{TWO_NODES}::test_a_marginal_cable_fails_only_its_error_counters_with_the_deltas",
    "test_reaches_every_peer": f"{CHECKS}::test_a_peer_that_does_not_answer_fails_and_one_not_pinged_is_not_verified",
    "test_nothing_changed_since_the_snapshot":
        "test_changes_sim.py::test_a_planted_change_is_exactly_its_three_differences_and_healing_leaves_none",
    "test_cx7_netplan_files_are_backed_up":
        "test_rollback_ready_sim.py::test_backups_present_pass_and_a_missing_or_different_copy_fails_naming_the_file",
    "test_management_path_does_not_ride_on_the_cx7_link": f"{CHECKS}::test_a_management_path_over_the_cx7_link_fails",
    "test_iperf3_one_stream": "test_path_causes_sim.py::"
                              "test_a_lag_a_lag_member_below_the_mtu_and_a_plug_in_another_port_fail_their_own_checks_named",
    "test_iperf3_bonded_four_streams": LANE_DOWN,
    # tests_ssh
    "test_reservations_do_not_overlap": STEP9_FAULTS,
    "test_holders_have_logins": STEP9_FAULTS,
    "test_only_the_holder_runs_during_a_window": STEP9_FAULTS,
    "test_every_job_has_a_time_limit": STEP9_FAULTS,
    "test_slice_holders_have_no_sudo": STEP9_FAULTS,
    "test_homes_are_private": STEP9_FAULTS,
    "test_passwordless_ssh": "test_backbone_replay.py::test_ssh_from_thor2_to_thor4_fails_exactly_that_pair",
    "test_same_login_on_every_node": f"{CHECKS}::test_another_login_name_fails",
    "test_passwordless_ssh_over_cx7": f"{CHECKS}::test_ssh_over_cx7_refused_fails_naming_the_pair",
    # tests_serving
    "test_agent_routes_exactly_the_inventory_engines": f"{UNREAD}::test_an_agent_without_listen_is_judged_at_its_default_address",
    "test_agent_refuses_requests_without_the_key":
        "test_causes.py::test_an_agent_that_does_not_refuse_a_request_without_the_key_gets_the_cause_its_answer_shows",
    "test_agent_lists_every_model_with_the_key": f"{CHECKS}::test_an_agent_that_lists_no_model_with_the_key_fails",
    "test_agent_streams_each_model": "test_causes.py::test_a_serving_figure_that_could_not_be_measured_is_never_a_pass",
    "test_remote_model_keeps_up_with_the_local_one": f"{TWO_NODES}::test_slow_engine_fails_the_step_6_comparison_only",
    "test_engine_listens_on_its_cluster_address": f"{ACCEPTANCE}::test_an_engine_off_the_cluster_network_fails_its_three_checks",
    "test_engine_answers_from_the_agent_node":
        "test_causes.py::test_a_stalled_engine_is_named_with_its_node_and_accepts_but_does_not_generate",
    "test_node_reaches_the_controller":
        f"{STEP9}::test_a_munge_key_that_differs_is_named_by_each_check_it_fails_not_slurmctld_or_slurmd",
    "test_node_takes_jobs": STEP9_FAULTS,
    "test_partition_has_a_time_limit": STEP9_FAULTS,
    "test_munge_credentials_decode_on_the_controller":
        f"{STEP9}::test_a_munge_key_that_differs_is_named_by_each_check_it_fails_not_slurmctld_or_slurmd",
    "test_clock_within_munges_limit": STEP9_FAULTS,
    "test_sparkrun_runs_on_the_head": f"{SPARKRUN}::test_each_fault_fails_exactly_its_check",
    "test_the_definition_lists_the_nodes_head_first": f"{SPARKRUN}::test_each_fault_fails_exactly_its_check",
    "test_the_multi_node_path_uses_cx7_addresses": f"{SPARKRUN}::test_each_fault_fails_exactly_its_check",
    "test_the_image_is_on_the_head": f"{SPARKRUN}::test_the_runtime_faults_fail_their_checks_and_a_sparkrun_warning_warns",
    "test_sparkrun_setup_check_finds_no_gap":
        f"{SPARKRUN}::test_the_runtime_faults_fail_their_checks_and_a_sparkrun_warning_warns",
    "test_same_l4t_release": f"{ACCEPTANCE}::test_jetpack_mismatch_names_the_odd_node",
    "test_same_package_version": f"{ACCEPTANCE}::test_jetpack_mismatch_names_the_odd_node",
    "test_same_gpu_driver_and_cuda": f"{UNREAD}::test_a_driver_mismatch_fails_though_no_node_reports_cuda",
    # --- golden configuration (issue 43)
    "test_same_kernel_and_firmware":
        "test_probe_release.py::test_same_kernel_and_firmware_the_check_passes_on_one_kernel_and_fails_naming_the_odd_node",
    # --- the hardware behind the CX7 links (issue 43, sparkhw)
    "test_cx7_pcie_link_at_full_speed_and_width": CX7_HARDWARE_FAULTS,
    "test_cx7_firmware_the_same_at_both_ends": CX7_HARDWARE_FAULTS,
    "test_cx7_mtu_the_same_at_both_ends": CX7_HARDWARE_FAULTS,
    "test_roce_v2_gid_index_the_same_at_both_ends": CX7_HARDWARE_FAULTS,
}


def functions(path: Path) -> set[str]:
    return {node.name for node in ast.walk(ast.parse(path.read_text())) if isinstance(node, ast.FunctionDef)}


def every_check() -> dict[str, str]:
    """Each check's name -> its file, from the tests_* folders (what pytest collects there)."""
    return {name: str(path.relative_to(REPO)) for folder in FOLDERS for path in sorted((REPO / folder).glob("test_*.py"))
            for name in sorted(functions(path)) if name.startswith("test_")}


def test_every_check_has_a_selftest_that_fails_it():
    checks = every_check()
    assert len(checks) > 50, checks   # the walk found the suite
    without = sorted(set(checks) - set(FAILS_IT))
    assert without == [], f"checks no selftest fails: {without}"
    assert sorted(set(FAILS_IT) - set(checks)) == [], "FAILS_IT names checks the suite does not have"


def test_each_selftest_named_exists_and_is_about_its_check():
    wrong = []
    for check, selftest in FAILS_IT.items():
        file, function = selftest.split("::")
        path = REPO / "selftests" / file
        if not path.exists() or function not in functions(path) or check not in path.read_text():
            wrong.append(f"{check}: {selftest}")
    assert wrong == []
