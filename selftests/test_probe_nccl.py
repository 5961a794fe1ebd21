"""rackproof.probes.nccl against real nccl-tests outputs (all_gather on two DGX Sparks, an older
all_reduce on two 8-GPU nodes, failures) and the noise mpirun mixes into them; NCCL's set-up
from its own NCCL_DEBUG=INFO lines (real Spark and other captures), the nodes' NCCL settings,
and the causes rackproof.judging.ncclsetup names from them."""

import dataclasses
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from rackproof.judging import ncclsetup
from rackproof.inventory.model import load_inventory
from rackproof.probes import ParseError
from rackproof.probes.nccl import (NcclResult, NcclRow, NcclSettings, NcclSetupError, development_build, parse_nccl,
                                   parse_nccl_run, parse_nccl_settings, parse_nccl_setup)
from rackproof_sim.formats.nccl import render_nccl
from selftests.robustness import sample

REPO = Path(__file__).resolve().parent.parent
SPARK_ALL_GATHER = "nccl_all_gather_dgx_spark_2node_good.txt"
OCI_ALL_REDUCE = "nccl_all_reduce_perf_2node_16gpu_a100_oci.txt"
X11_NOISE = "Authorization required, but no authorization protocol specified\n\n"
NCCL_INFO = "spark-fb97:23491:23491 [0] NCCL INFO Channel 00/0 : 1[0] -> 0[0] [receive] via NET/IB/0\n"


def test_dgx_spark_all_gather_two_nodes():
    result = parse_nccl(sample(SPARK_ALL_GATHER))
    assert (result.avg_busbw_gbs, result.out_of_bounds, result.ok) == (21.4033, 0, True)
    assert result.min_bw_passed is None
    assert result.ranks == ((0, "spark-fb97"), (1, "spark-4440"))
    assert (result.distinct_hosts, result.one_job) == (("spark-fb97", "spark-4440"), True)
    assert result.collective == "all_gather_perf"
    assert result.rows[0] == NcclRow(1073741824, 134217728, "float", "none", -1,
                                     27211.0, 39.46, 19.73, 0, 25806.7, 41.61, 20.80, 0)
    assert [row.size for row in result.rows] == [2**30, 2**31, 2**32]


def test_older_all_reduce_sixteen_ranks_on_two_nodes():
    # no version line, "#wrong" with one space, an mpirun line on top, times without decimals
    result = parse_nccl(sample(OCI_ALL_REDUCE))
    assert (result.avg_busbw_gbs, result.ok, result.collective) == (191.752, True, "all_reduce_perf")
    assert [rank for rank, _ in result.ranks] == list(range(16))
    assert result.distinct_hosts == ("inst-li3ob-ao-ub24", "inst-wyzi7-ao-ub24")
    assert result.rows == (NcclRow(10737418240, 2684354560, "float", "sum", -1,
                                   104989.0, 102.27, 191.76, 0, 104997.0, 102.26, 191.75, 0),)


def test_x11_and_nccl_info_noise_is_stripped():
    clean = sample(SPARK_ALL_GATHER)
    lines = clean.splitlines(keepends=True)
    noisy = X11_NOISE * 3 + "".join(line + (NCCL_INFO if i % 3 == 0 else "") for i, line in enumerate(lines))
    # another process wrote a line into the middle of a row (printed in pieces)
    glued = noisy.replace("       0  25806.7", "       0" + NCCL_INFO + "  25806.7", 1)
    assert parse_nccl(noisy) == parse_nccl(glued) == parse_nccl(clean)


def test_separate_one_rank_jobs_are_not_one_job():
    # mpirun starting a binary built without MPI: every process is its own "Rank 0" job
    rank_1 = "#  Rank  1 Group  0 Pid 546336 on spark-4440 device  0 [000f:01:00] NVIDIA GB10\n"
    first = sample(SPARK_ALL_GATHER).replace(rank_1, "")
    second = first.replace("on spark-fb97", "on spark-4440")
    result = parse_nccl(first + second)
    assert result.ranks == ((0, "spark-fb97"), (0, "spark-4440"))
    assert (result.one_job, result.distinct_hosts) == (False, ("spark-fb97", "spark-4440"))


@pytest.mark.parametrize("name, failure", [
    ("nccl_test_cuda_failure_line.txt", "Test CUDA failure common.cu:502"),
    ("nccl_warn_net_ib_completion_error_gx10.txt", "Test NCCL failure common.cu:401"),
])
def test_test_failures_quote_the_failure_line(name, failure):
    with pytest.raises(ParseError) as raised:
        parse_nccl(sample(name))
    assert failure in raised.value.reason


def test_debug_lines_alone_are_no_result():
    with pytest.raises(ParseError, match="Avg bus bandwidth"):
        parse_nccl(sample("nccl_debug_net_ib_lines_dgx_spark_excerpt.txt"))


def test_unchecked_rows_exponent_times_and_bandwidth_verdict():
    text = sample(SPARK_ALL_GATHER)
    text = text.replace("  27211.0   39.46   19.73       0", "  1.2e+07   39.46   19.73     N/A")
    text = text.replace("# Avg bus bandwidth    : 21.4033 ", "# Avg bus bandwidth    : 21.4033 FAILED")
    result = parse_nccl(text)
    assert (result.rows[0].oop_time_us, result.rows[0].oop_wrong) == (1.2e7, None)
    assert result.min_bw_passed is False


NOT_FINITE = ["inf", "-inf", "nan", "-nan", "1e999", "9" * 400]


@pytest.mark.parametrize("figure", NOT_FINITE)
def test_an_average_bus_bandwidth_that_is_not_finite_fails(figure):
    text = sample(SPARK_ALL_GATHER).replace("# Avg bus bandwidth    : 21.4033 ", f"# Avg bus bandwidth    : {figure} ")
    with pytest.raises(ParseError, match="Avg bus bandwidth is not a finite number") as raised:
        parse_nccl(text)
    assert raised.value.text == text


@pytest.mark.parametrize("figure", NOT_FINITE)
@pytest.mark.parametrize("column", [0, 1, 2, 3])
def test_a_row_figure_that_is_not_finite_fails(figure, column):
    # a broken run prints inf or nan in a row; skipping the row would hide it
    lines = sample(SPARK_ALL_GATHER).splitlines()
    at = next(i for i, line in enumerate(lines) if line.split()[:1] == ["1073741824"])
    row = lines[at].split()
    row[5 + column] = figure        # out-of-place time, algbw, busbw, #wrong
    lines[at] = "  ".join(row)
    text = "\n".join(lines) + "\n"
    with pytest.raises(ParseError, match="of the 1073741824-byte row is not a finite number"):
        parse_nccl(text)


TABLE_END = "# Avg bus bandwidth    : {} \n#\n"


@pytest.mark.parametrize("average", ["1e300", "21.4033", "0"])
def test_an_average_without_rows_is_no_result(average):
    header = "".join(line for line in sample(SPARK_ALL_GATHER).splitlines(keepends=True)
                     if not line.strip()[:1].isdigit() and "Avg bus bandwidth" not in line)
    with pytest.raises(ParseError, match="no result row: nothing was measured"):
        parse_nccl(header + TABLE_END.format(average))


@pytest.mark.parametrize("average, says", [
    ("1e300", "Avg bus bandwidth 1e300 GB/s is not a bus bandwidth (0 to 10000)"),
    ("10001", "Avg bus bandwidth 10001 GB/s is not a bus bandwidth"),
    ("-1", "Avg bus bandwidth -1 GB/s is not a bus bandwidth"),
    ("190", "Avg bus bandwidth 190 GB/s is not an average of the rows' bus bandwidths (19.73 to 22.46 GB/s)"),
    ("19.5", "Avg bus bandwidth 19.5 GB/s is not an average of the rows' bus bandwidths"),
])
def test_an_average_the_rows_cannot_give_fails(average, says):
    text = sample(SPARK_ALL_GATHER).replace("# Avg bus bandwidth    : 21.4033 ", f"# Avg bus bandwidth    : {average} ")
    with pytest.raises(ParseError) as raised:
        parse_nccl(text)
    assert raised.value.reason == says or raised.value.reason.startswith(says), raised.value.reason


@pytest.mark.parametrize("average", ["19.6", "22.6", "21.4"])
def test_an_average_within_the_rows_and_their_rounding_passes(average):
    text = sample(SPARK_ALL_GATHER).replace("# Avg bus bandwidth    : 21.4033 ", f"# Avg bus bandwidth    : {average} ")
    assert parse_nccl(text).avg_busbw_gbs == float(average)


def test_out_of_bounds_values_fail():
    text = sample(SPARK_ALL_GATHER).replace("Out of bounds values : 0 OK", "Out of bounds values : 3 FAILED")
    result = parse_nccl(text)
    assert (result.out_of_bounds, result.ok) == (3, False)


def test_optional_columns_are_read_by_the_header():
    # nccl-tests with -R (bitwise check): an extra #bitdiff column after each #wrong
    header = ("#       size         count      type   redop    root     time   algbw   busbw  #wrong"
              "  #bitdiff     time   algbw   busbw  #wrong  #bitdiff \n")
    row = "     1048576        262144     float     sum      -1    52.10   20.13   20.13       0         0" \
          "    51.90   20.20   20.20       0         0\n"
    result = parse_nccl(header + row + "# Avg bus bandwidth    : 20.165 \n")
    assert result.rows == (NcclRow(1048576, 262144, "float", "sum", -1, 52.10, 20.13, 20.13, 0,
                                   51.90, 20.20, 20.20, 0),)


def test_render_is_the_current_nccl_tests_layout():
    real = sample(SPARK_ALL_GATHER).splitlines()
    rendered = render_nccl(parse_nccl(sample(SPARK_ALL_GATHER))).splitlines()
    # all but the made-up PIDs and the run parameters are the real lines, in order
    kept = [line for line in rendered if not line.startswith(("# nThread", "#  Rank"))]
    remaining = iter(real)
    assert all(line in remaining for line in kept)


times = (st.integers(0, 999_999).map(lambda k: k / 100)          # "%7.2f"
         | st.integers(100_000, 999_999).map(lambda k: k / 10)   # "%7.1f"
         | st.integers(100_000, 9_999_999).map(float)             # "%7.0f"
         | st.builds(lambda digits, power: float(digits * 10**power), st.integers(10, 99), st.integers(6, 8)))
bandwidths = st.integers(0, 99_999).map(lambda k: k / 100) | st.integers(10_000, 99_999).map(lambda k: k / 10)
wrongs = st.none() | st.integers(0, 99_999).map(float)
hosts = st.text("abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=16)
rows = st.builds(
    NcclRow,
    size=st.integers(0, 2**40), count=st.integers(0, 2**38),
    type=st.sampled_from(["float", "bfloat16", "half", "int8", "double"]),
    redop=st.sampled_from(["sum", "none", "max", "avg"]), root=st.integers(-1, 15),
    oop_time_us=times, oop_algbw=bandwidths, oop_busbw=bandwidths, oop_wrong=wrongs,
    ip_time=times, ip_algbw=bandwidths, ip_busbw=bandwidths, ip_wrong=wrongs,
)


@st.composite
def nccl_results(draw):
    out_of_bounds = draw(st.none() | st.integers(0, 1000))
    drawn = draw(st.lists(rows, min_size=1, max_size=4))
    busbw = [figure for row in drawn for figure in (row.oop_busbw, row.ip_busbw)]
    return NcclResult(
        rows=tuple(drawn),
        avg_busbw_gbs=float("%g" % (sum(busbw) / len(busbw))),   # as nccl-tests prints it
        out_of_bounds=out_of_bounds,
        ok=out_of_bounds == 0,
        ranks=tuple(draw(st.lists(st.tuples(st.integers(0, 63), hosts), max_size=4))),
        collective=draw(st.none() | st.sampled_from(["all_reduce_perf", "all_gather_perf"])),
        min_bw_passed=draw(st.none() | st.booleans()),
    )


@settings(max_examples=150, deadline=None)
@given(nccl_results())
def test_render_round_trip(result):
    assert parse_nccl(render_nccl(result)) == result


# --- NCCL's set-up from its own NCCL_DEBUG=INFO lines (issue 43) -------------------------------

SPARK_SETUP = "nccl_debug_dgx_spark_2node_init_both_functions_PARTIAL.txt"
FUNCTIONS = ("rocep1s0f1", "roceP2p1s0f1")


def test_spark_pair_setup_both_functions_a_release_over_ib():
    setup = parse_nccl_setup(sample(SPARK_SETUP))
    assert [h.host for h in setup.hosts] == ["spark-fb97", "spark-4440"]
    for host in setup.hosts:
        assert (host.version, host.git, host.devices, host.network, host.net_plugin) == (
            "2.28.9+cuda13.0", None, FUNCTIONS, "IB", "internal")
        assert host.setting("NCCL_SOCKET_IFNAME") == "enp1s0f1np1"
        assert development_build(host.version, host.git) is None


def test_run_output_gives_the_table_and_the_setup():
    # the sample's own "# Rank" lines are the table's too
    debug = "".join(line for line in sample(SPARK_SETUP).splitlines(keepends=True) if not line.startswith("#"))
    text = sample(SPARK_ALL_GATHER) + debug
    run = parse_nccl_run(text)
    assert dataclasses.replace(run, setup=None) == parse_nccl(text) == parse_nccl(sample(SPARK_ALL_GATHER))
    assert run.setup == parse_nccl_setup(sample(SPARK_SETUP))


def test_one_function_in_nccl_ib_hca():
    # copied without the host prefix: the lines belong to no named host
    (host,) = parse_nccl_setup(sample("nccl_debug_dgx_spark_ib_hca_one_function_no_prefix.txt")).hosts
    assert (host.host, host.devices, host.setting("NCCL_IB_HCA")) == ("", ("rocep1s0f1",), "rocep1s0f1")


def test_no_ib_device_and_sockets():
    (host,) = parse_nccl_setup(sample("nccl_debug_master_build_no_ib_device_socket_rtx5090_PARTIAL.txt")).hosts
    assert (host.host, host.version, host.git, host.devices, host.network) == (
        "lab", "2.29.7+cuda12.9", "master 3619159", (), "Socket")
    # master carries each release: a bare hash there cannot be told from the release's own commit
    assert development_build(host.version, host.git) is None


def test_a_branch_build_of_a_spark_is_a_development_build():
    (host,) = parse_nccl_setup(sample("nccl_debug_dgx_spark_branch_build_socket_no_prefix.txt")).hosts
    assert (host.version, host.git, host.network, host.devices) == (
        "2.29.7+cuda13.2", "dgxspark-3node-ring fab1850", "Socket", None)
    assert "branch dgxspark-3node-ring" in development_build(host.version, host.git)


@pytest.mark.parametrize("version, git, why", [
    ("2.31.0a7+cuda13.0", "dev v2.30.7-1-42-g86fa684d", "version suffix 'a7'"),   # NCCL's dev branch
    ("2.27.0a0+cuda12.9", None, "version suffix 'a0'"),           # a capture in an NVIDIA/nccl issue
    ("2.30.4+cuda13.3", "HEAD 1933fdd-dirty", "changed source tree"),            # a real INFO line
    ("2.30.7+cuda13.0", "dev v2.30.7-1-42-g86fa684d", "42 commits past the release tag v2.30.7-1"),
    ("2.28.9+cuda13.0", None, None),                                            # the playbook's tag
    ("2.29.2+cuda12.8", "HEAD ebd1e92", None),                 # v2.29.2-1's commit, cloned without tags
    ("2.29.3+cuda13.1", "stable dcf2a2fbe", None),             # NVIDIA's packages
    ("2.28.9+cuda13.0", "HEAD v2.28.9-1", None),               # the tag checked out
])
def test_development_builds(version, git, why):
    found = development_build(version, git)
    assert found is None if why is None else why in found


def test_setup_lines_glued_into_a_row_or_stamped_keep_their_host():
    line = "spark-4440:24302:24302 [0] NCCL INFO NCCL version 2.28.9+cuda13.0\n"
    stamped = "[2025-11-19 18:02:33] spark-fb97:23491:23491 [0] NCCL INFO NCCL version 2.28.9+cuda13.0\n"
    glued = sample(SPARK_ALL_GATHER).replace("       0  25806.7", "       0" + line + "  25806.7", 1)
    setup = parse_nccl_setup(glued + stamped)
    assert [(h.host, h.version) for h in setup.hosts] == [("spark-4440", "2.28.9+cuda13.0"),
                                                         ("spark-fb97", "2.28.9+cuda13.0")]
    assert parse_nccl(glued) == parse_nccl(sample(SPARK_ALL_GATHER))


def test_setup_errors():
    with pytest.raises(NcclSetupError, match="no 'NCCL INFO' line"):
        parse_nccl_setup(sample(SPARK_ALL_GATHER))
    two = ("h:1:1 [0] NCCL INFO NCCL version 2.28.9+cuda13.0\n"
           "h:2:2 [0] NCCL INFO NCCL version 2.31.0a7+cuda13.0\n")
    with pytest.raises(NcclSetupError, match="h reports two versions"):
        parse_nccl_setup(two)
    assert issubclass(NcclSetupError, ParseError)


SETTINGS = "nccl_settings_local_debian12_env_home_etc.txt"


def test_settings_of_a_node_in_nccls_order():
    settings = parse_nccl_settings(sample(SETTINGS))
    assert settings.home_conf == ()       # there, every line a comment
    assert settings.sources() == [
        ("the login's environment", "NCCL_SOCKET_IFNAME", "enp1s0f1np1"),
        ("the login's environment", "NCCL_IB_HCA", "rocep1s0f1,roceP2p1s0f1"),
        ("/etc/nccl.conf", "NCCL_IB_USE_INLINE", "1"),
        ("/etc/nccl.conf", "NCCL_IB_PREPOST_RECEIVE_WORK_REQUESTS", "1")]
    assert parse_nccl_settings("") == NcclSettings((), None, None)


def test_settings_refuse_an_untagged_line():
    with pytest.raises(ParseError, match="not one of the node's NCCL settings"):
        parse_nccl_settings("env NCCL_IB_HCA=x\nNCCL_IB_HCA=forged\n")
    with pytest.raises(ParseError):
        parse_nccl_settings("envNCCL_IB_HCA=x\n")


def _causes(text: str, settings: dict[str, str], **expect):
    inventory = load_inventory(REPO / "examples" / "spark2.toml")
    nodes = inventory.nodes
    setup = parse_nccl_setup(text)
    facts = tuple(ncclsetup.NodeNccl(n, parse_nccl_settings(s), ()) for n, s in settings.items())
    return ncclsetup.causes(setup, facts, nodes, inventory.expect.model_copy(update=expect))


def _info(host: str, *lines: str) -> str:
    return "".join(f"{host}:7:7 [0] NCCL INFO {line}\n" for line in lines)


HEALTHY = ["NCCL version 2.28.9+cuda13.0", "NET/IB : Using [0]rocep1s0f1:1/RoCE [1]roceP2p1s0f1:1/RoCE [RO]; "
           "OOB enp1s0f1np1:192.168.100.10<0>", "Using network IB"]


def test_causes_healthy_pair_has_none():
    text = _info("spark-1", *HEALTHY) + _info("spark-2", *HEALTHY)
    same = "env NCCL_SOCKET_IFNAME=enp1s0f1np1\nenv NCCL_DEBUG=WARN\n"
    assert _causes(text, {"spark-1": "", "spark-2": same}) == []


def test_causes_name_each_fault_and_its_node():
    one = [HEALTHY[0], "NCCL_IB_HCA set to rocep1s0f1",
           "NET/IB : Using [0]rocep1s0f1:1/RoCE [RO]; OOB enp1s0f1np1:192.168.100.11<0>"]
    dev = ["NCCL version 2.31.0a7+cuda13.0", "NCCL git version dev v2.30.7-1-42-g86fa684d", *HEALTHY[1:]]
    causes = _causes(_info("spark-1", *dev) + _info("spark-2", *one),
                     {"spark-1": "etc\netc NCCL_IB_DISABLE=1\n", "spark-2": "home\nhome NCCL_IB_HCA=rocep1s0f1\n"})
    assert [c.split(":")[0] for c in causes] == ["spark-1", "spark-1", "spark-2", "spark-2"]
    assert "NCCL 2.31.0a7+cuda13.0 is a development build (version suffix 'a7'" in causes[0]
    assert "/etc/nccl.conf sets NCCL_IB_DISABLE=1 (the inventory sets no such thing)" in causes[1]
    assert "NCCL uses rocep1s0f1 and not roceP2p1s0f1 (NCCL_IB_HCA=rocep1s0f1)" in causes[2]
    assert "~/.nccl.conf sets NCCL_IB_HCA=rocep1s0f1 (the inventory sets no such thing)" in causes[3]


def test_causes_the_inventorys_own_settings_are_not_leftovers():
    text = _info("spark-1", *HEALTHY) + _info("spark-2", *HEALTHY)
    env = "env NCCL_IB_HCA=rocep1s0f1,roceP2p1s0f1\nenv NCCL_IB_GID_INDEX=3\n"
    assert _causes(text, {"spark-1": env}, nccl_ib_hca="rocep1s0f1,roceP2p1s0f1", nccl_ib_gid_index=3) == []
    assert _causes(text, {"spark-1": env}, nccl_ib_gid_index=5) == [
        "spark-1: the login's environment sets NCCL_IB_HCA=rocep1s0f1,roceP2p1s0f1 (the inventory sets no such "
        "thing): every NCCL job started from the login gets it",
        "spark-1: the login's environment sets NCCL_IB_GID_INDEX=3 (the inventory's is 5): every NCCL job started "
        "from the login gets it"]


def test_causes_sockets_and_a_silent_node():
    socket = [HEALTHY[0], "NET/IB : No device found.", "NET/Socket : Using [0]enp1s0f1np1:192.168.100.10<0>",
              "Using network Socket"]
    assert _causes(_info("spark-1", *socket), {}) == [
        "spark-1: NCCL used no RoCE device (NCCL_IB_HCA unset, network Socket): its data went over TCP sockets "
        "(~3 GB/s)",
        "spark-2: no NCCL debug line from its rank (NCCL's set-up there is unknown)"]


def test_slow_causes_name_a_cx7_interface_under_the_jumbo_mtu():
    facts = (ncclsetup.NodeNccl("spark-1", NcclSettings((), None, None), (("enp1s0f1np1", 9000), ("enP2p1s0f1np1", None))),
             ncclsetup.NodeNccl("spark-2", NcclSettings((), None, None), (("enp1s0f1np1", 1500),)))
    assert ncclsetup.slow_causes(facts) == [
        "CX7 interfaces under MTU 9000: spark-2 enp1s0f1np1 1500 (NVIDIA's Spark guides set 9000; the interfaces come "
        "up at 1500)"]
    assert ncclsetup.slow_causes(facts[:1]) == []
