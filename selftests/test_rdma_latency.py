"""RDMA latency per CX7 link and direction (ib_write_lat): its parser on real outputs, the
simulator's format against them, the plan entry's life cycle (one link after the other, each with
its own server, always stopped) and the judge, both sides: a healthy link passes, a slow one fails
naming the link and direction with every link's figure."""

from __future__ import annotations

import dataclasses

import pytest

from rackproof.probes import ParseError
from rackproof.probes.perftest import LatencyResult, parse_ib_write_lat
from rackproof.measurements import cx7
from rackproof.nodes.remote import LocalTransport, Result
from rackproof.measuring.targets import Pair
from rackproof_sim.formats.perftest import render_ib_write_lat
from selftests.robustness import sample
from selftests.test_causes import SPARK_PAIR, failure, hosts_of, measure_in, planned
from tests_network import test_cx7 as cx7_checks

SPARK = "ib_write_lat_dgx_spark_client_rdma_cm_link_IB.txt"
DEVICES = ("rocep1s0f1", "roceP2p1s0f1")


def test_a_dgx_spark_link_writes_in_about_one_and_a_half_microseconds():
    assert parse_ib_write_lat(sample(SPARK)) == LatencyResult(
        bytes=2, iterations=1000, t_min=1.42, t_max=1.93, t_typical=1.47, t_avg=1.47, t_stdev=0.0, p99=1.57,
        p999=1.93, device="rocep1s0f1", link_type="IB")


def test_roce_over_the_ethernet_exchange_with_gid_lines():
    r = parse_ib_write_lat(sample("ib_write_lat_rxe_client_n5_s64_roce.txt"))
    assert (r.bytes, r.iterations, r.t_typical, r.p999, r.device, r.link_type) == (64, 5, 191.96, 210.59, "rxe0",
                                                                                   "Ethernet")


def test_notices_between_rows_are_passed_over_and_the_last_row_is_read():
    r = parse_ib_write_lat(sample("ib_write_lat_mlx5_client_a_cpu_freq_lines_PARTIAL.txt"))
    assert (r.bytes, r.t_min, r.t_typical, r.t_stdev, r.p99) == (8388608, 345.23, 345.55, 15.93, 441.71)


def test_a_header_without_a_row_names_the_gid_index_it_ran_with():
    header_only = sample(SPARK).split(" 2       1000", 1)[0]
    with pytest.raises(ParseError, match=r"no result row, so no data moved.*GID index 3 \(-x 3\)"):
        parse_ib_write_lat(header_only, 3)


@pytest.mark.parametrize("text, reason", [
    # a timed run (-D) prints t_avg and tps only: not the table the suite asks for (-n)
    (" #bytes        #iterations       t_avg[usec]    tps average\n 2             1000              0.85  1.0\n",
     "no result table header"),
    (sample(SPARK).replace("1.42           1.93", "1.99           1.93"), "figures out of order"),
    (sample(SPARK).replace("1.47                1.47", "nan                1.47"), "t_typical"),
    (sample(SPARK) + "Couldn't connect to 192.168.100.11:18515\n", "perftest failed"),
])
def test_what_is_not_a_latency_is_refused(text, reason):
    with pytest.raises(ParseError, match=reason):
        parse_ib_write_lat(text)


def test_the_simulator_prints_the_spark_s_table_line_for_line():
    real = parse_ib_write_lat(sample(SPARK))
    rendered = render_ib_write_lat(real)
    assert parse_ib_write_lat(rendered) == real
    # the Spark's run used rdma_cm (-R); the suite's exchanges over Ethernet, as perftest does by default
    expected = sample(SPARK).replace("rdma_cm QPs     : ON", "rdma_cm QPs     : OFF") \
        .replace("Data ex. method : rdma_cm", "Data ex. method : Ethernet").splitlines()
    assert len(rendered.splitlines()) == len(expected)
    for real_line, line in zip(expected, rendered.splitlines()):
        if real_line.startswith((" local", " remote")):     # over Ethernet they carry RKey and VAddr too
            assert line.startswith(real_line)
        elif real_line.startswith(" 2 "):                   # the row: perftest's printf TABs, the doc's spaces
            assert line.split() == real_line.split()
        else:
            assert line.rstrip() == real_line.rstrip()
    with_gids = render_ib_write_lat(dataclasses.replace(real, link_type="Ethernet"), local_ip="192.168.100.10",
                                    remote_ip="192.168.100.11")
    assert " GID index       : 3" in with_gids
    assert " GID: 00:00:00:00:00:00:00:00:00:00:255:255:192:168:100:11" in with_gids


def spark_hosts(answers: dict[str, str], tmp_path, started: list):
    """spark-1 runs the ib_write_lat clients, each printing what its device's link answers;
    spark-2 starts and stops their servers (`started` keeps each start and stop in order)."""
    def sender(command: str) -> Result:
        for device, text in answers.items():
            (tmp_path / device).write_text(text)
        started.append("client " + command.split(" -d ")[1].split()[0])
        return LocalTransport("spark-1").execute(f'ib_write_lat() {{ cat {tmp_path}/"$2"; }}; {command}', 10)

    def receiver(command: str) -> Result:
        if "setsid timeout" in command:
            started.append("server " + command.split("ib_write_lat -d ")[1].split()[0])
            return Result(command, 0, "4242 4243\n", "", 0.1)
        started.append("stopped")
        return Result(command, 0, "", "", 0.1)

    return hosts_of(SPARK_PAIR, {"spark-1": sender, "spark-2": receiver})


def latency_check(hosts):
    return (cx7_checks.test_rdma_latency_of_each_link, Pair(hosts["spark-1"], hosts["spark-2"]),
            measure_in(SPARK_PAIR), planned(cx7.CX7_LATENCY, ("spark-1", "spark-2"), hosts, SPARK_PAIR))


def test_each_link_runs_alone_with_its_own_server_and_a_healthy_pair_passes(tmp_path):
    started = []
    check, *args = latency_check(spark_hosts(dict.fromkeys(DEVICES, sample(SPARK)), tmp_path, started))
    check(*args)
    assert started == ["server rocep1s0f1", "client rocep1s0f1", "stopped",
                       "server roceP2p1s0f1", "client roceP2p1s0f1", "stopped"]


def test_a_slow_direction_fails_naming_its_link_with_every_link_s_figure(tmp_path):
    slow = sample(SPARK).replace("1.42           1.93         1.47 ", "1.42           93.10        41.20")
    hosts = spark_hosts({DEVICES[0]: sample(SPARK), DEVICES[1]: slow}, tmp_path, [])
    message = failure(*latency_check(hosts))
    assert "spark-1 enP2p1s0f1np1 (roceP2p1s0f1) -> spark-2 enP2p1s0f1np1 (roceP2p1s0f1) (ib_write_lat)" in message
    assert "41.2 µs" in message and "rocep1s0f1) -> spark-2 enp1s0f1np1 (rocep1s0f1): 1.47 µs" in message
    assert "pause frames" in message


def test_a_link_that_printed_no_row_is_never_a_pass(tmp_path):
    header_only = sample(SPARK).split(" 2       1000", 1)[0]
    message = failure(*latency_check(spark_hosts({DEVICES[0]: sample(SPARK), DEVICES[1]: header_only}, tmp_path, [])))
    assert "GID index 3 (-x 3)" in message and "ib_write_lat -d roceP2p1s0f1" in message


def test_the_declaration_is_what_prerequisites_know_of_the_tool():
    from rackproof.nodes.prerequisites import TOOLS
    from rackproof.probes._between import declared
    from rackproof.probes.iperf import IPERF3
    from rackproof.probes.perftest import WRITE_BANDWIDTH, WRITE_LATENCY
    assert declared() == (IPERF3, WRITE_BANDWIDTH, WRITE_LATENCY)
    tool = TOOLS["ib_write_lat"]
    assert (tool.fix, tool.platforms) == ("sudo apt install perftest", ("spark",))
    assert (TOOLS["iperf3"].minimum, TOOLS["iperf3"].asked) == ((3, 1), "-v")
