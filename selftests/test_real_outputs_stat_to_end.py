"""The probes from `stat` to the end of `rackproof probes` against real outputs of other
people's machines (each sample's origin: samples/SOURCES.md). Each test asserts what a careful
reader sees in that output. Outputs that made a parser misread or refuse them were fixed in the
parser (a numbered backup controller, a partition name with spaces, ...)."""

from pathlib import Path

import pytest

from rackproof.probes import ParseError
from rackproof.probes.counters import parse_ethtool_driver
from rackproof.probes.docker import parse_image_id
from rackproof.probes.perftest import PerftestResult, parse_ib_write_bw
from rackproof.probes.ping import parse_ping
from rackproof.probes.slurm import Controller, parse_partition, parse_scontrol_ping, parse_unmunge, slurm_time_hours
from rackproof.probes.sockets import Listener, parse_ss_listen, parse_ss_ports, scope
from rackproof.probes.sshcheck import SshConnection, parse_offered_methods, parse_ssh_connection
from rackproof.probes.sshkeys import parse_key_fingerprints
from rackproof.probes.sudo import parse_sudo_list
from rackproof.probes.sysctl import parse_sysctl
from rackproof.probes.system import parse_answer, parse_clock

SAMPLES = Path(__file__).parent / "samples"


def read(name: str) -> str:
    return (SAMPLES / name).read_text()


# -- scontrol ping -----------------------------------------------------------------------------

def test_scontrol_ping_of_ubuntu_24_04():
    assert parse_scontrol_ping(read("slurm_scontrol_ping_ubuntu24.04_23.11.4_up.txt")) == \
        (Controller("primary", "node1", True),)


def test_scontrol_ping_with_two_numbered_backups():
    """Slurm numbers its backup controllers; the parser refused "backup1" before."""
    assert parse_scontrol_ping(read("slurm_scontrol_ping_primary_two_backups_EDITED.txt")) == (
        Controller("primary", "icn401-0412-h08", True), Controller("backup1", "icn401-0413-h08", True),
        Controller("backup2", "icn401-0414-h08", True))


# -- scontrol show partition -o ----------------------------------------------------------------

def test_partition_without_a_time_limit():
    settings = parse_partition(read("slurm_partition_o_dev_unlimited_skypilot_FIXTURE.txt"))
    assert settings["PartitionName"] == "dev" and settings["State"] == "UP"
    assert slurm_time_hours(settings["MaxTime"]) is None and settings["TotalNodes"] == "6"
    assert settings["TRES"] == "cpu=248,mem=1216G,node=6,billing=248,gres/gpu=12"


def test_partition_of_three_days():
    settings = parse_partition(read("slurm_partition_o_20.11.6_maxtime_3days_FIXTURE.txt"))
    assert slurm_time_hours(settings["MaxTime"]) == 72 and settings["DefaultTime"] == "01:00:00"
    assert settings["TRESBillingWeights"] == "CPU=1,Mem=1.33G"


def test_partition_whose_name_has_spaces():
    """Slurm allows spaces in a partition's name; the parser refused the line before."""
    settings = parse_partition(read("slurm_partition_o_name_with_spaces_skypilot_FIXTURE.txt"))
    assert settings["PartitionName"] == "GPU nodes (nvidia)" and settings["AllowGroups"] == "ALL"
    assert slurm_time_hours(settings["MaxTime"]) is None and settings["Nodes"] == "ip-10-3-68-50,ip-10-3-200-46"


def test_a_partition_line_still_needs_a_readable_time_limit():
    with pytest.raises(ParseError):
        parse_partition("PartitionName=GPU nodes MaxTime=a while\n")


# -- munge | unmunge ---------------------------------------------------------------------------

@pytest.mark.parametrize("name, host", [("unmunge_ubuntu_2025_success.txt", "server2"),
                                        ("unmunge_ubuntu_slurm25.11_success.txt", "pro12-head.pro12-net")])
def test_unmunge_success(name, host):
    decoded = parse_unmunge(read(name))
    assert decoded.ok and decoded.status == "Success (0)" and decoded.encode_host == host


# -- sudo -l -U --------------------------------------------------------------------------------


@pytest.mark.parametrize("name, rules", [
    ("sudo_l_ubuntu_thm_www-data_nopasswd_all.txt", ("(ALL) NOPASSWD: ALL",)),
    ("sudo_l_ubuntu_htb_bashed_runas_user.txt", ("(scriptmanager : scriptmanager) NOPASSWD: ALL",)),
])
def test_sudo_rules_of_ubuntu(name, rules):
    """Ubuntu's Defaults wrap over two lines before the rules; only the rules are read."""
    assert parse_sudo_list(read(name)) == rules


# -- ssh-keygen -lf, $SSH_CONNECTION -----------------------------------------------------------


def test_fingerprint_with_a_comment():
    assert parse_key_fingerprints(read("ssh_keygen_lf_ed25519_ops_key_blog.txt")) == (
        "SHA256:cNgXnpcfTlWLmrBBnVB63+416+aHzJNnF/R1+K+gMlQ (ED25519) ops-wangxm-2026",)


def test_fingerprint_without_a_comment():
    assert parse_key_fingerprints(read("ssh_keygen_lf_ed25519_no_comment_known_hosts.txt")) == (
        "SHA256:NEV0aBbhcthXTf2/98sk75HPyU5A/bRN8XFDa++1oFI (ED25519)",)


def test_ssh_connection_through_a_bastion():
    assert parse_ssh_connection(read("ssh_connection_blog_bastion_EDITED.txt")) == \
        SshConnection("10.10.90.14", "10.10.20.31")


def test_sshd_offering_keys_and_passwords():
    """A client with BatchMode and no usable key: sshd's refusal names what it would take."""
    assert parse_offered_methods(read("ssh_batchmode_permission_denied_publickey_password_hosting.txt")) == \
        ("publickey", "password")


# -- sysctl ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name, value", [("sysctl_ip_forward_on_ubuntu_docker_host.txt", "1"),
                                         ("sysctl_ip_forward_off_netns_tutorial.txt", "0")])
def test_sysctl_forwarding(name, value):
    assert parse_sysctl(read(name)) == {"net.ipv4.ip_forward": value}


# -- ss ----------------------------------------------------------------------------------------


def test_ss_of_ubuntu_20_04_with_processes():
    found = parse_ss_listen(read("ss_tnlp_ubuntu20.04_vagrant_header.txt"))
    assert Listener("tcp", "127.0.0.53", 53, "systemd-resolve", 1073, "lo") in found
    assert Listener("tcp", "*", 9101, "node_exporter", 675) in found and scope("*") == "any"
    assert [(f.local_address, f.port) for f in found if f.process == "sshd"] == [("0.0.0.0", 22), ("::", 22)]


def test_ss_of_ubuntu_24_04_socket_activated_sshd():
    """systemd holds sshd's socket as well: the first process listed is the one read."""
    found = parse_ss_listen(read("ss_tulpn_ubuntu24.04_socket_activated_sshd.txt"))
    assert len(found) == 9 and {f.proto for f in found} == {"tcp", "udp"}
    assert [(f.process, f.pid) for f in found if f.port == 22] == [("sshd", 1861), ("sshd", 1861)]
    assert Listener("udp", "127.0.0.54", 53, "systemd-resolve", 524) in found


def test_ss_of_ubuntu_22_04_without_processes():
    found = parse_ss_listen(read("ss_tuln_ubuntu22.04_htb_no_process.txt"))
    assert len(found) == 11 and all(f.process is None for f in found)
    assert [scope(f.local_address) for f in found if f.port in (80, 3000)] == ["loopback", "any"]


def test_ss_client_ports_of_established_sockets():
    """The probe runs with -H; the capture's header line is left out here."""
    rows = read("ss_tapn_ubuntu_ec2_listen_and_estab_ABRIDGED.txt").split("\n", 1)[1]
    assert parse_ss_ports(rows) == {54321, 53, 22}


# -- ping --------------------------------------------------------------------------------------


def test_ping_interrupted_after_three_replies():
    result = parse_ping(read("ping_popos_vpn_three_replies_ctrl_c.txt"))
    assert (result.target, result.transmitted, result.received, result.loss_percent) == ("192.168.100.2", 3, 3, 0)
    assert (result.rtt_min_ms, result.rtt_avg_ms, result.rtt_max_ms) == (31.232, 32.928, 35.123)


def test_ping_answered_by_host_unreachable_errors():
    result = parse_ping(read("ping_destination_host_unreachable_two_errors.txt"))
    assert (result.received, result.errors, result.loss_percent, result.rtt_avg_ms) == (0, 2, 100, None)


@pytest.mark.parametrize("name", ["ping_M_do_frag_needed_then_local_error_libreswan_EDITED.txt",
                                  "ping_M_do_local_error_tunnel_mtu_libreswan_EDITED.txt"])
def test_ping_dont_fragment_too_large(name):
    """Too large for the path: nothing comes back, every packet an error. (The author took the
    target's name out of the statistics line: the probe knows it.)"""
    result = parse_ping(read(name), target="peer")
    assert (result.transmitted, result.received, result.errors, result.loss_percent) == (3, 0, 3, 100)
    assert result.rtt_avg_ms is None and result.error is None


# -- hostname, id -un, date -u +%s --------------------------------------------------------------

def test_single_word_answers():
    assert parse_answer(read("hostname_unshare_demo_ms-7917.txt")) == "ms-7917"
    assert parse_answer(read("id_un_session_log_2026.txt")) == "seat"


@pytest.mark.parametrize("name, iso", [("date_u_s_news_digest_2025.txt", "2025-04-25T09:16:19+00:00"),
                                       ("date_s_aliyun_course_notes_2024.txt", "2024-04-05T01:28:07+00:00")])
def test_clock_in_seconds(name, iso):
    """Seconds since 1970 are the same with and without -u; the course's next line converts
    1712280487 to 2024/04/05 09:28:07 in UTC+8."""
    assert parse_clock(read(name)).isoformat() == iso


# -- ib_write_bw -------------------------------------------------------------------------------

def test_ib_write_bw_timed_run_with_a_cpu_frequency_notice():
    """A timed run (-D) over RoCE: no peak, one row; the notice between the table's header and
    its row is not a row."""
    assert parse_ib_write_bw(read("ib_write_bw_D5_bidirectional_mlx5_proxmox_cpu_freq_line.txt")) == \
        PerftestResult(65536, 560845, 0.0, 98.02, "Gb/sec", 0.18695, "mlx5_0", "Ethernet")


# -- samples the renderers are held to, read by the product's parsers too ---------------------

@pytest.mark.parametrize("name", ["ethtool_i_dgx_spark_enP2p1s0f0np0_PARTIAL.txt",
                                  "ethtool_i_mlx5_cx7_fw28.39_ubuntu_gpu_server.txt"])
def test_a_cx7_drivers_name(name):
    assert parse_ethtool_driver(read(name)) == "mlx5_core"


def test_docker_28_refusing_a_login_outside_its_group():
    found = parse_image_id(read("docker_ps_permission_denied_api1.51.txt"))
    assert found.id is None and "not in the docker group" in found.unusable
