"""perftest's `ib_write_bw` client output (parsed by rackproof.probes.perftest)."""

from __future__ import annotations

from rackproof.probes.perftest import PerftestResult


NO_PEAK_WARNING = " WARNING: BW peak won't be measured in this run."
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
    left = [("Dual-port", "OFF"), ("Number of qps", "1"), ("Connection type", "RC")]
    right = [("Device", result.device), ("Transport type", "IB"), ("Using SRQ", "OFF")]
    single = [("PCIe relax order", "ON"), ("ibv_wr* API", "ON"), ("TX depth", "128"),
              ("CQ Moderation", "1" if run_infinitely else "100"), ("Mtu", "1024[B]"),
              ("Link type", result.link_type)]
    if result.link_type == "Ethernet":
        single.append(("GID index", "3"))
    single += [("Max inline data", "0[B]"), ("rdma_cm QPs", "OFF"), ("Data ex. method", "Ethernet")]

    lines = [NO_PEAK_WARNING] if (run_infinitely or duration) and not warned else []
    lines += [_SEPARATOR, " " * 20 + "RDMA_Write BW Test"]
    lines += [f" {l_key:<16}: {l_value:<14} {r_key:<15}: {r_value}"
              for (l_key, l_value), (r_key, r_value) in zip(left, right)]
    lines += [f" {key:<16}: {value}" for key, value in single]
    lines.append(_SEPARATOR)
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


def _row(result: PerftestResult) -> str:
    # perftest's REPORT_FMT_EXT (six decimals) for Gb/sec below 0.1, else REPORT_FMT
    # (spacing of a current client as captured on a DGX Spark).
    if result.unit == "Gb/sec" and result.bw_average < 0.1:
        return (f" {result.bytes:<7d}    {result.iterations}           {result.bw_peak:<7.6f}"
                f"            {result.bw_average:<7.6f}            {result.msg_rate:<7.6f}")
    return (f" {result.bytes:<7d}    {result.iterations:<10d}       {result.bw_peak:<7.2f}"
            f"            {result.bw_average:<7.2f}              {result.msg_rate:<7.6f}")
