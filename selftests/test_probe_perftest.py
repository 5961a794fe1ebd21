"""rackproof.probes.perftest against real `ib_write_bw` outputs and perftest's failure messages."""


import pytest
from hypothesis import given, settings, strategies as st

from rackproof.probes import ParseError
from rackproof.probes.perftest import PerftestResult, parse_ib_write_bw
from rackproof_sim.formats.perftest import render_ib_write_bw
from selftests.robustness import sample

DGX_SPARK_CLIENT = "ib_write_bw_dgx_spark_client_run_infinitely.txt"


def test_dgx_spark_run_infinitely_takes_the_last_row():
    result = parse_ib_write_bw(sample(DGX_SPARK_CLIENT))
    assert result == PerftestResult(bytes=65536, iterations=927807, bw_peak=0.0, bw_average=97.28,
                                    unit="Gb/sec", msg_rate=0.185554,
                                    device="roceP2p1s0f0", link_type="Ethernet")
    assert result.gbits_average == 97.28      # one logical interface of the QSFP port: ~92-98


def test_ib_report_gbits_with_six_decimal_rows_and_tabs():
    result = parse_ib_write_bw(sample("ib_write_bw_client_IB_a_report_gbits_tabs_PARTIAL.txt"))
    # -a prints a row per size: the last one is the result (the excerpt ends at 8 bytes)
    assert (result.bytes, result.bw_peak, result.bw_average, result.msg_rate) == (8, 0.17, 0.17, 2.641399)
    assert (result.unit, result.device, result.link_type) == ("Gb/sec", "mlx5_0", "IB")


def test_server_side_prints_mb_per_sec():
    result = parse_ib_write_bw(sample("ib_write_bw_server_roce_mlx5_tabs_MBsec_units.txt"))
    assert (result.unit, result.bw_average, result.iterations) == ("MB/sec", 96.25, 1101500)
    assert result.gbits_average == pytest.approx(96.25 * 2**20 * 8 / 1e9)


def with_table(header: str, row: str) -> str:
    """The DGX Spark client's output with another table header and one result row."""
    text = sample(DGX_SPARK_CLIENT)
    head = text[:text.index(" #bytes")]
    return head + header + "\n" + row + "\n"


GBITS_ROW = " 65536      927807           {peak}               97.28                0.185554"


@pytest.mark.parametrize("peak_unit, printed, average_unit, peak, unit, gbits", [
    ("Gb/sec", "95.37", "Gb/sec", 95.37, "Gb/sec", 97.28),
    # a peak of 11369.14 MiB/s is 95.37 Gb/s; the average stays in its own unit
    ("MB/sec", "11369.14", "Gb/sec", 11369.14 * 2**20 * 8 / 1e9, "Gb/sec", 97.28),
    ("Gb/sec", "95.37", "MB/sec", 95.37e9 / 8 / 2**20, "MB/sec", 97.28 * 2**20 * 8 / 1e9),
    ("MiB/sec", "95.37", "MiB/sec", 95.37, "MiB/sec", 97.28 * 2**20 * 8 / 1e9),   # newer perftest's label
])
def test_each_bandwidth_column_is_read_in_its_own_unit(peak_unit, printed, average_unit, peak, unit, gbits):
    header = f" #bytes     #iterations    BW peak[{peak_unit}]    BW average[{average_unit}]    MsgRate[Mpps]"
    result = parse_ib_write_bw(with_table(header, GBITS_ROW.format(peak=printed)))
    assert (result.bw_peak, result.bw_average, result.unit) == (pytest.approx(peak), 97.28, unit)
    assert result.gbits_average == pytest.approx(gbits)


@pytest.mark.parametrize("header", [
    " #bytes     #iterations    BW peak[Gb/s]    BW average[Gb/sec]    MsgRate[Mpps]",
    " #bytes     #iterations    BW peak[Gb/sec]    BW average[kB/sec]    MsgRate[Mpps]",
])
def test_a_unit_perftest_does_not_print_is_no_table(header):
    with pytest.raises(ParseError, match="no result table header"):
        parse_ib_write_bw(with_table(header, GBITS_ROW.format(peak="95.37")))


def test_header_without_result_row_is_a_failure():
    # wrong GID index: header, table header, no row, exit status 0
    text = sample(DGX_SPARK_CLIENT)
    header_only = "\n".join(line for line in text.splitlines() if not line.startswith(" 65536"))
    with pytest.raises(ParseError, match="no result row"):
        parse_ib_write_bw(header_only)
    with pytest.raises(ParseError, match="no result table header"):
        parse_ib_write_bw(sample("ib_write_bw_header_tabs_mlx5_PARTIAL.txt"))


@pytest.mark.parametrize("name, failure_line", [
    ("ib_write_bw_fail_client_modify_qp_rts_rdma_cm.txt", "Failed to modify QP to RTS"),
    ("ib_write_bw_fail_completion_error_status4.txt", "got completion with error:"),
    ("ib_write_bw_fail_couldnt_connect_pre_fix.txt", "Couldn't connect to 192.168.125.211:18515"),
    ("ib_write_bw_fail_server_read_keys_rdma_cm.txt", "ethernet_read_keys: Couldn't read remote address"),
    ("ib_write_bw_failure_messages_from_source.txt", "IB device rocep1s0f9 not found"),
])
def test_failure_outputs_quote_the_failure_line(name, failure_line):
    with pytest.raises(ParseError) as raised:
        parse_ib_write_bw(sample(name))
    assert failure_line in raised.value.reason


@pytest.mark.parametrize("message", [
    " Did not detect devices ", " Unable to init the socket connection",
    " Completion with error at client", " Failed status 4: wr_id 0 syndrom 0x51",
])
def test_each_known_failure_message_is_caught(message):
    with pytest.raises(ParseError, match="perftest failed"):
        parse_ib_write_bw(sample(DGX_SPARK_CLIENT) + message + "\n")


@pytest.mark.parametrize("figure", ["inf", "nan", "-nan", "9" * 400])
@pytest.mark.parametrize("column", [2, 3, 4])
def test_a_figure_that_is_not_finite_fails(figure, column):
    # a figure of the last row, the result: skipping that row would report an earlier one
    lines = sample(DGX_SPARK_CLIENT).splitlines()
    row = lines[-1].split()
    row[column] = figure            # BW peak, BW average, MsgRate
    text = "\n".join(lines[:-1] + [" " + "    ".join(row)]) + "\n"
    with pytest.raises(ParseError, match="is not a finite number") as raised:
        parse_ib_write_bw(text)
    assert raised.value.text == text


def test_server_waiting_banner_alone_is_no_result():
    with pytest.raises(ParseError):
        parse_ib_write_bw("\n************************************\n* Waiting for client to connect... *\n"
                          "************************************\n")


def test_the_port_s_other_function_alone_with_four_queue_pairs_moves_more_than_half_the_port():
    # rocep1s0f1, the first PCIe function of the same QSFP port as roceP2p1s0f0's twin, -q 4, one link
    # alone: 111.71 Gb/s, above the per-link floor (80 Gb/s) that a link beside its twin keeps too
    real = sample("ib_write_bw_dgx_spark_client_rocep1s0f1_q4_rdma_cm_link_IB.txt")
    assert parse_ib_write_bw(real) == PerftestResult(65536, 20000, 111.72, 111.71, "Gb/sec", 0.21307, "rocep1s0f1", "IB")
    # the simulator names each device on the line the real tool does (perftest's TABs, the docs' spaces)
    rendered = render_ib_write_bw(parse_ib_write_bw(real))
    assert real.splitlines()[2].split() in [line.split() for line in rendered.splitlines()]


def test_render_is_the_real_client_output():
    spark = parse_ib_write_bw(sample(DGX_SPARK_CLIENT))
    rendered = render_ib_write_bw(spark, run_infinitely=True,
                                  local_ip="192.168.201.13", remote_ip="192.168.201.12")
    real = sample(DGX_SPARK_CLIENT).splitlines()
    table_at = real.index(" #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]    MsgRate[Mpps]")
    assert rendered.splitlines()[:table_at + 1] == real[:table_at + 1]
    assert rendered.splitlines()[-1] == real[-1]
    slow = PerftestResult(2, 5000, 0.04235, 0.042185, "Gb/sec", 2.636533, "mlx5_0", "IB")
    # six decimals below 0.1 Gb/s, as in the real -a run
    assert render_ib_write_bw(slow).splitlines()[-2] == (
        " 2          5000           0.042350            0.042185            2.636533")


def test_render_needs_device_and_link_type():
    with pytest.raises(ValueError):
        render_ib_write_bw(PerftestResult(65536, 1000, 0.0, 97.0, "Gb/sec", 0.18))


@st.composite
def perftest_results(draw):
    unit = draw(st.sampled_from(["Gb/sec", "MB/sec"]))
    if unit == "Gb/sec" and draw(st.booleans()):    # below 0.1 Gb/s: six decimals
        peak, average = (draw(st.integers(0, 99_999)) / 1e6 for _ in range(2))
    else:
        peak = draw(st.integers(0, 10**7)) / 100
        average = draw(st.integers(10 if unit == "Gb/sec" else 0, 10**7)) / 100
    return PerftestResult(
        bytes=draw(st.integers(1, 2**23)), iterations=draw(st.integers(1, 10**9)),
        bw_peak=peak, bw_average=average, unit=unit, msg_rate=draw(st.integers(0, 10**8)) / 1e6,
        device=draw(st.sampled_from(["roceP2p1s0f0", "rocep1s0f1", "mlx5_0"])),
        link_type=draw(st.sampled_from(["Ethernet", "IB"])),
    )


@settings(max_examples=150, deadline=None)
@given(perftest_results(), st.booleans(), st.booleans())
def test_render_round_trip(result, run_infinitely, with_gids):
    addresses = {"local_ip": "192.168.100.10", "remote_ip": "192.168.100.11"} if with_gids else {}
    assert parse_ib_write_bw(render_ib_write_bw(result, run_infinitely=run_infinitely, **addresses)) == result
