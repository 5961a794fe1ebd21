"""perftest's `ib_write_bw` client output and `ib_write_lat`'s (parsed by rackproof.probes.perftest)."""

from __future__ import annotations

from rackproof.probes.perftest import LatencyResult, PerftestResult


NO_PEAK_WARNING = " WARNING: BW peak won't be measured in this run."
# `--version`: perftest 25.07.0's one line, then exit status 1 (its parser's VERSION_EXIT ends the
# program as a failure); from its source (samples/ib_write_bw_version_FROM_SOURCE.txt)
VERSION_LINE, VERSION_STATUS = "Version: 6.26\n", 1
_SEPARATOR = "-" * 87
# Queue pair numbers and keys are not modelled: those of a real DGX Spark run.
_QP_ADDRESSES = (" local address:  LID 0000 QPN 0x01a9 PSN 0x5e41f9 RKey 0x1a03ed VAddr 0x00f374277dd000",
                 " remote address: LID 0000 QPN 0x01a9 PSN 0x8ab8e7  RKey 0x1a0300 VAddr 0x00f285f5f1d000")


def render_ib_write_bw(result: PerftestResult, *, run_infinitely: bool = False, duration: bool = False,
                       local_ip: str | None = None, remote_ip: str | None = None, warned: bool = False) -> str:
    """The client's output of `ib_write_bw -F [--report_gbits] [--run_infinitely | -D SECONDS] SERVER`.

    With run_infinitely: the WARNING, a few interval rows ending in `result`, no closing line
    (the run ends when it is killed). With duration (-D) perftest prints the same WARNING (it
    measures no peak either), then one row and the closing line; `warned`: the WARNING was printed
    already (a server prints it before it waits for its client). GID lines are printed when both
    addresses are given (RoCE). The result must name its device and link type; then
    parse_ib_write_bw(render_ib_write_bw(r)) == r.
    """
    if result.device is None or result.link_type is None:
        raise ValueError("render_ib_write_bw needs the result's device and link_type")
    single = [("PCIe relax order", "ON"), ("ibv_wr* API", "ON"), ("TX depth", "128"),
              ("CQ Moderation", "1" if run_infinitely else "100"), ("Mtu", "1024[B]"),
              ("Link type", result.link_type)]
    if result.link_type == "Ethernet":
        single.append(("GID index", "3"))
    single += [("Max inline data", "0[B]"), ("rdma_cm QPs", "OFF"), ("Data ex. method", "Ethernet")]

    lines = [NO_PEAK_WARNING] if (run_infinitely or duration) and not warned else []
    lines += _test_header("RDMA_Write BW Test", result.device, 14, single)
    for address, ip in zip(_QP_ADDRESSES, (local_ip, remote_ip)):
        lines.append(address)
        if local_ip and remote_ip:
            # RoCE v2 GID of an IPv4 address: IPv4-mapped IPv6, printed byte by byte in decimal
            lines.append(" GID:            00:00:00:00:00:00:00:00:00:00:255:255:" + ip.replace(".", ":"))
    lines.append(_SEPARATOR)
    unit = result.unit
    lines.append(f" #bytes     #iterations    BW peak[{unit}]    BW average[{unit}]    MsgRate[Mpps]")
    lines += [_row(result)] * (3 if run_infinitely else 1)
    if not run_infinitely:
        lines.append(_SEPARATOR)
    return "\n".join(lines) + "\n"


def _test_header(title: str, device: str, pad: int, single: list[tuple[str, str]]) -> list[str]:
    """perftest's header: the test's title, two columns of settings (the left one's values padded
    to `pad`), then the settings printed one a line, between separators."""
    left = [("Dual-port", "OFF"), ("Number of qps", "1"), ("Connection type", "RC")]
    right = [("Device", device), ("Transport type", "IB"), ("Using SRQ", "OFF")]
    return ([_SEPARATOR, " " * 20 + title]
            + [f" {l_key:<16}: {l_value:<{pad}} {r_key:<15}: {r_value}" for (l_key, l_value), (r_key, r_value)
               in zip(left, right)]
            + [f" {key:<16}: {value}" for key, value in single] + [_SEPARATOR])


def _row(result: PerftestResult) -> str:
    # perftest's REPORT_FMT_EXT (six decimals) for Gb/sec below 0.1, else REPORT_FMT
    # (spacing of a current client as captured on a DGX Spark).
    if result.unit == "Gb/sec" and result.bw_average < 0.1:
        return (f" {result.bytes:<7d}    {result.iterations}           {result.bw_peak:<7.6f}"
                f"            {result.bw_average:<7.6f}            {result.msg_rate:<7.6f}")
    return (f" {result.bytes:<7d}    {result.iterations:<10d}       {result.bw_peak:<7.2f}"
            f"            {result.bw_average:<7.2f}              {result.msg_rate:<7.6f}")


def render_ib_write_lat(result: LatencyResult, *, gid_index: int = 3, local_ip: str | None = None,
                        remote_ip: str | None = None) -> str:
    """The output of `ib_write_lat -d DEVICE -x GID -F -n N [SERVER]` over RoCE, client and server
    alike (both time the ping-pong): the header as a DGX Spark prints it
    (samples/ib_write_lat_dgx_spark_client_rdma_cm_link_IB.txt, there with rdma_cm; the Ethernet
    exchange's GID lines as in samples/ib_write_lat_rxe_client_n5_s64_roce.txt), the table's header
    (perftest's RESULT_FMT_LAT, its trailing space kept) and one row printed by its REPORT_FMT_LAT
    (TABs and all, as samples/ib_write_lat_mlx5_client_a_cpu_freq_lines_PARTIAL.txt shows them).
    The result must name its device and link type; then parse_ib_write_lat(render_ib_write_lat(r)) == r."""
    if result.device is None or result.link_type is None:
        raise ValueError("render_ib_write_lat needs the result's device and link_type")
    single = [("PCIe relax order", "OFF"), ("ibv_wr* API", "ON"), ("TX depth", "1"), ("Mtu", "1024[B]"),
              ("Link type", result.link_type)]
    if result.link_type == "Ethernet":
        single.append(("GID index", str(gid_index)))
    single += [("Max inline data", "220[B]"), ("rdma_cm QPs", "OFF"), ("Data ex. method", "Ethernet")]
    # the Spark's latency sample pads the left column to 12, its bandwidth sample to 14
    lines = _test_header("RDMA_Write Latency Test", result.device, 12, single)
    for address, ip in zip(_LAT_ADDRESSES, (local_ip, remote_ip)):
        lines.append(address)
        if local_ip and remote_ip:
            lines.append(" GID: 00:00:00:00:00:00:00:00:00:00:255:255:" + ":".join(f"{int(b):02d}" for b in ip.split(".")))
    lines += [_SEPARATOR, _LAT_HEADER]
    r = result
    lines.append(f" {r.bytes:<7d} {r.iterations}          {r.t_min:<7.2f}        {r.t_max:<7.2f}      {r.t_typical:<7.2f}  \t"
                 f"       {r.t_avg:<7.2f}     \t{r.t_stdev:<7.2f}\t\t{r.p99:<7.2f} \t\t{r.p999:<7.2f}")
    lines.append(_SEPARATOR)
    return "\n".join(lines) + "\n"


# perftest's RESULT_FMT_LAT (src/perftest_parameters.h, linux-rdma/perftest 00b55b66)
_LAT_HEADER = (" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   "
               "99% percentile[usec]   99.9% percentile[usec] ")
# the DGX Spark's latency run's queue pairs (its sample), with the RKey and VAddr an Ethernet exchange adds
_LAT_ADDRESSES = (" local address: LID 0000 QPN 0x02ee PSN 0xb0c21c RKey 0x1a03ed VAddr 0x00f374277dd000",
                  " remote address: LID 0000 QPN 0x02ee PSN 0x14568b RKey 0x1a0300 VAddr 0x00f285f5f1d000")
