"""Every renderer of the simulated rack (rackproof_sim.formats, but jetson and chrony: see
test_formats.py) against a real output of its platform: the facts the product's parser reads
from the real output are rendered again, and the result is compared with the real output line
by line, wherever those facts fix the line. Each test names the lines it leaves out of the
comparison and why (a time, a counter's history, the peer's own settings: nothing the facts hold).

Real outputs: selftests/samples, each with its SOURCES.md section. A layout these tests found
wrong in a renderer was fixed there (the bond's actor keys and churn states, the GB10's
nvidia-smi row, nccl-tests' version line, Docker 28's permission error)."""

import re
from pathlib import Path

import pytest

from rackproof.probes.bonding import parse_bonding
from rackproof.probes.counters import parse_ethtool_stats
from rackproof.probes.docker import parse_image_id
from rackproof.probes.ethtool import LinkInfo, parse_ethtool
from rackproof.probes.fec import parse_fec
from rackproof.probes.ibdev2netdev import parse_ibdev2netdev
from rackproof.probes.nccl import parse_nccl
from rackproof.probes.nvidia_smi import parse_nvidia_smi_banner, parse_nvidia_smi_query
from rackproof.probes.perftest import parse_ib_write_bw
from rackproof.probes.systemd import UserUnit
from rackproof_sim.formats.bonding import render_bonding
from rackproof_sim.formats.counters import render_ethtool_stats
from rackproof_sim.formats.docker import render_image_id, render_no_access
from rackproof_sim.formats.ethtool import render_ethtool
from rackproof_sim.formats.fec import render_fec
from rackproof_sim.formats.ibdev2netdev import render_ibdev2netdev
from rackproof_sim.formats.nccl import render_nccl
from rackproof_sim.formats.nvidia_smi import render_nvidia_smi_banner, render_nvidia_smi_query
from rackproof_sim.formats.perftest import render_ib_write_bw
from rackproof_sim.formats.systemd import render_systemctl_show

SAMPLES = Path(__file__).parent / "samples"


def sample(name: str) -> str:
    return (SAMPLES / name).read_text()


def same_lines(rendered: str, real: str, unfixed: tuple[str, ...] = ()) -> list[tuple[int, str, str]]:
    """The lines where the two differ, pairing them line by line; a pair whose real line starts
    with one of `unfixed` (after its indentation) is left out. Both must have as many lines."""
    ours, theirs = rendered.splitlines(), real.splitlines()
    assert len(ours) == len(theirs), (len(ours), len(theirs), rendered)
    return [(number, mine, real_line) for number, (mine, real_line) in enumerate(zip(ours, theirs), start=1)
            if mine != real_line and not real_line.strip().startswith(unfixed)]


def subsequence(rendered: list[str], real: list[str]) -> bool:
    """Every rendered line is one of the real lines, in the real order (the renderer leaves out
    lines no check reads)."""
    remaining = iter(real)
    return all(line in remaining for line in rendered)


# -- /proc/net/bonding (the Thor shelf's bond) ---------------------------------------------------

# "monitoring" is a port's first minute, counts of churns are the port's history
CHURN = ("Actor Churn State", "Partner Churn State", "Actor Churned Count", "Partner Churned Count")


def test_bond_of_a_current_kernel_line_by_line():
    """Ubuntu's kernel 6.8 (the Thor's JetPack 7 and the Spark's DGX OS 7 run 6.8 and later),
    two 10G members: the actor keys (15) follow the members' speed."""
    real = sample("bonding_8023ad_kernel6.8_healthy.txt")
    assert same_lines(render_bonding(parse_bonding(real)), real, CHURN) == []


def test_bond_actor_keys_and_churn_follow_the_members():
    """A 100G pair to a switch (keys 29) and a pair with one member down (key 0 down, 9 for the
    1G member up; churn "none" only where the port state has its sync bit). The older kernels of
    both print no "LACP active" and no peer-notification line, and a switch's LACP priorities are
    its own (32768): those lines are left out."""
    older = ("LACP active", "Peer Notification Delay")
    peer = ("system priority: 32768", "port priority: 32768", "port number")
    for name, left_out in (("bonding_8023ad_2x100g_layer34_switch_partner.txt", peer),
                           ("bonding_8023ad_one_down_partner_zero.txt", ("port number",))):
        real = sample(name)
        missing = tuple(key for key in older if key not in real)     # lines an older kernel did not print
        rendered = [line for line in render_bonding(parse_bonding(real)).splitlines()
                    if not missing or not line.startswith(missing)]
        paired = [(mine, theirs) for mine, theirs in zip(rendered, real.splitlines(), strict=True)
                  if mine != theirs and not theirs.strip().startswith(left_out + CHURN[2:])]
        assert paired == [], name
    down = render_bonding(parse_bonding(sample("bonding_8023ad_one_down_partner_zero.txt")))
    assert "Actor Churn State: none" in down and "\tActor Key: 9" in down and "    port key: 0" in down


def test_a_25g_bond_announces_the_key_of_25g():
    """The Thor shelf's lanes are 25G: the kernel's key for 25000 Mb/s full duplex is 21."""
    real = sample("bonding_8023ad_kernel6.8_healthy.txt").replace("Speed: 10000 Mbps", "Speed: 25000 Mbps")
    rendered = render_bonding(parse_bonding(real))
    assert "\tActor Key: 21" in rendered and rendered.count("    port key: 21") == 2


# -- ethtool -S --------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["ethtool_S_stmmac_st_gmac_lkml_2023.txt"])
def test_ethtool_statistics_line_by_line(name):
    """A Synopsys MAC's counters (the family of the Thor's MGBE), as a kernel list posted them."""
    real = sample(name)
    assert render_ethtool_stats(parse_ethtool_stats(real)) == real


# -- docker ------------------------------------------------------------------------------------

def test_docker_28_permission_error():
    """Docker 28 (API 1.51) no longer begins the error with "Got "; the `docker info` capture is
    Docker Engine 28.5.1's."""
    assert render_no_access("containers/json") == sample("docker_ps_permission_denied_api1.51.txt")
    assert render_no_access("info") == sample("docker_info_28.5.1_permission_denied_server_part.txt").split("\n", 1)[1]
    assert parse_image_id(render_no_access("images/hello/json")).unusable


def test_docker_image_id_and_no_such_image():
    found = sample("docker_image_inspect_format_id.txt")
    assert render_image_id("hello", parse_image_id(found).id) == (found, 0)
    assert render_image_id("hello", None) == (sample("docker_image_inspect_no_such_image_daemon.txt"), 1)


# -- ethtool IFACE -----------------------------------------------------------------------------

def test_ethtool_lines_are_the_real_lines_in_order():
    """An E810 at 25G on a netlink-era ethtool: the lines the renderer prints (it leaves out those
    no check reads) are the real ones, in the real order."""
    real = sample("ethtool_ice_25g_dac_link_up.txt")
    assert subsequence(render_ethtool(parse_ethtool(real, "eth0")).splitlines(), real.splitlines())


def test_ethtool_of_a_spark_cx7_port_and_a_thor_lane():
    """The DGX Spark's `ethtool enp1s0f1np1 | grep Speed` at 200G, and a Thor's mgbe0_0 at 25G
    (that record lost its indentation and its header; its lines are compared stripped)."""
    spark = render_ethtool(LinkInfo("enp1s0f1np1", 200000, "Full", True)).splitlines()
    assert sample("ethtool_grep_speed_dgx_spark_200g.txt").splitlines() == [l for l in spark if "Speed" in l]
    thor = render_ethtool(LinkInfo("mgbe0_0", 25000, "Full", True, auto_negotiation=True))
    real = [line for line in sample("ethtool_thor_mgbe0_0_nonroot_ABRIDGED.txt").splitlines()
            if line not in ("...", "netlink error: Operation not permitted")]
    assert subsequence(real, [line.strip() for line in thor.splitlines()])
    assert len(real) == 4


def test_a_bonds_ethtool_as_a_netlink_ethtool_prints_it():
    """`ethtool bond0` of two 100G members: the sim prints a bond as Port Other, no link modes."""
    real = sample("ethtool_bond0_2x100g_lacp_200000.txt")
    info = parse_ethtool(real, "bond0")
    assert (info.speed_mbps, info.port, info.auto_negotiation) == (200000, "Other", False)
    # that capture is of an older ethtool (Port before Auto-negotiation); the lines are its lines
    assert set(render_ethtool(info).splitlines()) <= set(real.splitlines())


# -- ethtool --show-fec ------------------------------------------------------------------------

@pytest.mark.parametrize("name, interface", [
    ("fec_dgx_spark_cx7_auto_rs.txt", "enp1s0f1np1"), ("fec_dgx_spark_cx7_auto_none.txt", "enp1s0f0np0"),
    ("fec_dgx_spark_cx7_forced_rs.txt", "enp1s0f0np0"), ("fec_ice_with_stats_I.txt", "ens21f0np0")])
def test_fec_line_by_line(name, interface):
    real = sample(name)
    assert render_fec(parse_fec(real, interface)) == real


# -- ibdev2netdev ------------------------------------------------------------------------------

def test_ibdev2netdev_of_a_spark():
    real = sample("ibdev2netdev_dgx_spark.txt")
    assert render_ibdev2netdev(parse_ibdev2netdev(real)) == real


# -- nccl-tests --------------------------------------------------------------------------------

def test_nccl_tests_of_two_sparks_line_by_line():
    """nccl-tests 2.18.3 over two GB10s: every line but the PIDs and the iteration counts (the run's
    own; the rendered run states nccl-tests' defaults)."""
    real = sample("nccl_all_gather_dgx_spark_2node_good.txt")

    def facts(text):
        return [re.sub(r"warmup iters: \d+ iters: \d+", "", re.sub(r"Pid +\d+", "Pid", line))
                for line in text.splitlines()]
    assert facts(render_nccl(parse_nccl(real))) == facts(real)


# -- nvidia-smi --------------------------------------------------------------------------------

def test_nvidia_smi_of_a_spark_line_by_line():
    """A GB10's table: its persistence mode, its bus id and MIG cell are the GB10's. Left out: the
    date, the sensor cells (temperature, power) and the processes the desktop ran."""
    real = sample("nvidia_smi_gb10_dgx_spark_580.159.03.txt")
    rendered = render_nvidia_smi_banner(parse_nvidia_smi_banner(real)).splitlines()
    real_lines = real.splitlines()
    processes = real_lines.index("|=========================================================================================|")
    kept = [index for index in range(1, processes + 1) if index != 9]      # 9: the sensor cells
    assert [rendered[index] for index in kept] == [real_lines[index] for index in kept]


def test_nvidia_smi_of_a_thor_line_by_line():
    real = sample("nvidia_smi_thor_595.78_idle_PARTIAL.txt")
    # the capture lost its final border line
    assert render_nvidia_smi_banner(parse_nvidia_smi_banner(real)).startswith(real)


def test_nvidia_smi_query_of_a_spark():
    """GB10 has no memory of its own: memory.total is `[N/A]`."""
    fields = ["name", "memory.total", "driver_version"]
    real = sample("nvidia_smi_query_name_memtotal_driver_gb10_noheader.csv")
    assert render_nvidia_smi_query(parse_nvidia_smi_query(real, fields), fields) == real


# -- ib_write_bw -------------------------------------------------------------------------------

def test_ib_write_bw_of_a_spark_line_by_line():
    """The Spark's client with --run_infinitely: every line up to the table, and the last row;
    the rows before it are earlier seconds of the same run (the facts are the last one's)."""
    real = sample("ib_write_bw_dgx_spark_client_run_infinitely.txt").splitlines()
    rendered = render_ib_write_bw(parse_ib_write_bw("\n".join(real) + "\n"), run_infinitely=True,
                                  local_ip="192.168.201.13", remote_ip="192.168.201.12").splitlines()
    table = real.index(" #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]    MsgRate[Mpps]")
    assert rendered[:table + 1] == real[:table + 1] and rendered[-1] == real[-1]


# -- systemctl show ----------------------------------------------------------------------------

def test_systemctl_show_blocks_as_systemctl_prints_them():
    """`systemctl show -p ... UNITS` prints one block per unit, a blank line between blocks, the
    service's own properties before the unit's, the unit's in their D-Bus order (Id before
    ActiveState before Transient): as in insights-core's fixtures of RHEL systemctl output. No real
    output of the probe's four properties was found (see SOURCES.md)."""
    real = sample("systemctl_show_p_limited_services_insights_FIXTURE.txt")
    real_blocks = real.strip("\n").split("\n\n")
    units = [UserUnit("job-1.service", True, "active", "6h"), UserUnit("job-2.service", True, "active", "infinity")]
    rendered = render_systemctl_show(units)
    blocks = rendered.strip("\n").split("\n\n")
    assert len(blocks) == 2 and len(real_blocks) == 2 and not rendered.endswith("\n\n")
    service_first = [line.split("=")[0] for line in real_blocks[0].splitlines()]
    assert service_first.index("CPUAccounting") < service_first.index("Names")   # service, then unit
    unit_order = [line.split("=")[0] for line in sample("systemctl_show_tuned_service_insights_FIXTURE.txt").splitlines()]
    ours = [line.split("=")[0] for line in blocks[0].splitlines()]
    assert ours[0] == "RuntimeMaxUSec"
    assert sorted(ours[1:], key=unit_order.index) == ours[1:]


# -- ethtool -i (the stand-in's own lines: a driver line no renderer prints) --------------------

def test_ethtool_driver_of_a_spark_cx7_port(capsys):
    """A DGX Spark's CX7 port: the inbox driver names the kernel's release, the firmware its PSID
    (a Spark on DGX OS 7); the lines after them are mlx5_core's (a CX7 on Ubuntu)."""
    from rackproof_sim.standins.ethtool import _driver
    assert _driver("enP2p1s0f0np0", {"kind": "cx7"}) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[:3] == sample("ethtool_i_dgx_spark_enP2p1s0f0np0_PARTIAL.txt").splitlines()
    real = sample("ethtool_i_mlx5_cx7_fw28.39_ubuntu_gpu_server.txt").splitlines()
    assert printed[3] == real[3] and printed[4] == "bus-info: 0002:01:00.0" and printed[5:] == real[5:]


def test_ib_write_bw_of_a_timed_run():
    """`-D SECONDS` (how the suite runs it): perftest warns that it measures no peak, as with
    --run_infinitely, then prints one row and the closing line. The capture is of a newer
    perftest on a Proxmox host (more header fields, which the Spark's perftest does not print);
    the lines the facts fix are compared: the warning, the row and the closing line (that perftest
    puts three spaces before MsgRate in the table header, the Spark's four)."""
    real = sample("ib_write_bw_D5_bidirectional_mlx5_proxmox_cpu_freq_line.txt").splitlines()
    rendered = render_ib_write_bw(parse_ib_write_bw("\n".join(real) + "\n"), duration=True).splitlines()
    assert rendered[0].strip() == real[0].strip()
    assert rendered[-2:] == real[-2:]     # real[-3]: a CPU frequency notice, then the row
    assert render_ib_write_bw(parse_ib_write_bw("\n".join(real) + "\n"), duration=True, warned=True) \
        .splitlines()[0] == real[1]                          # a server warned before it waited


# -- ethtool -S of a Thor lane (the stand-in's counters) ----------------------------------------

def test_thor_lane_counters_are_nvethernets_own(capsys):
    """The Thor's MGBE driver (nvethernet) names its MAC counters in one table; the stand-in
    prints some of them, in that order, and no name the driver does not have (no stmmac
    rx_crc_errors, no rx_dropped). No real `ethtool -S` of a Thor was found: the names are the
    driver source's (samples/SOURCES.md)."""
    from rackproof_sim.standins.ethtool import _statistics
    assert _statistics("no-such-lane0", {"kind": "lane"}) == 0
    printed = [line.split(":")[0].strip() for line in capsys.readouterr().out.splitlines()[1:]]
    table = sample("ethtool_S_nvethernet_mmc_names_DERIVED_FROM_SOURCE.txt").split()
    assert printed and all(name in table for name in printed)
    assert printed == sorted(printed, key=table.index)
    assert "mmc_rx_crc_error" in printed and "mmc_rx_fifo_overflow" in printed


def test_nccl_tests_run_parameters_are_the_defaults_of_the_suites_command():
    """The suite runs `TEST -b 1G -e 4G -f 2 -g 1`: no -w, no -n, so nccl-tests 2.18.3 states its
    defaults, warmup_iters = 1 and iters = 20 (its src/common.cu); the Spark capture's 10 and 50
    were its author's own -w and -n."""
    real = parse_nccl(sample("nccl_all_gather_dgx_spark_2node_good.txt"))
    (parameters,) = [line for line in render_nccl(real).splitlines() if line.startswith("# nThread")]
    assert "minBytes 1073741824 maxBytes 4294967296 step: 2(factor) warmup iters: 1 iters: 20 " in parameters
