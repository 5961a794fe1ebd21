"""nccl-tests' output under mpirun (parsed by rackproof.probes.nccl)."""

from __future__ import annotations

from rackproof.probes.nccl import NcclResult, NcclRow


def _fit(value: float, width: int) -> str:
    """nccl-tests' getFloatStr: two decimals, fewer as the number grows, then exponent form."""
    for decimals in (2, 1, 0):
        formatted = "%*.*f" % (width, decimals, value)
        if len(formatted) <= width:
            return formatted
    return ("%*.1e" if width >= 7 else "%*.0e") % (width, value)


# writeResultHeader's three lines without the optional columns, as printed.
_TABLE_HEADER = (
    "# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          "
    % ("", "", "", "", ""),
    "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %s"
    % ("size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong",
       "time", "algbw", "busbw", "#wrong", ""),
    "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %s"
    % ("(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "", ""),
)


def render_nccl(result: NcclResult, *, device: str = "[000f:01:00] NVIDIA GB10",
                version: str | None = "2.18.3 nccl-headers=22809 nccl-library=22809") -> str:
    """Output of one nccl-tests job under mpirun, in the current (2.18) layout.

    `device` is the PCI address and GPU name of each "Rank" line, `version` the version line's
    (both a DGX Spark's by default; None leaves the line out, as versions before 2.13 do).
    The `# nThread` line is derived from the rows, PIDs are made up. parse_nccl(render_nccl(r)) == r.
    """
    sizes = [row.size for row in result.rows] or [0]
    lines = [] if version is None else [f"# nccl-tests version {version}"]
    if result.collective is not None:
        lines.append(f"# Collective test starting: {result.collective}")
    # the run parameters of the suite's command: nccl-tests 2.18.3's defaults (src/common.cu:
    # warmup_iters = 1, iters = 20), -f 2
    lines += [f"# nThread 1 nGpus 1 minBytes {min(sizes)} maxBytes {max(sizes)} step: 2(factor) "
              "warmup iters: 1 iters: 20 agg iters: 1 validation: 1 graph: 0 unalign: 0",
              "#", "# Using devices"]
    lines += ["#  Rank %2d Group %2d Pid %6d on %10s device %2d %s" % (rank, 0, 4000 + rank, host, 0, device)
              for rank, host in result.ranks]
    lines += ["#", *_TABLE_HEADER]
    lines += [_render_row(row) for row in result.rows]
    if result.out_of_bounds is not None:
        status = "OK" if result.ok else "FAILED"
        lines.append("# %-20s : %d %s" % ("Out of bounds values", result.out_of_bounds, status))
    verdict = "" if result.min_bw_passed is None else ("OK" if result.min_bw_passed else "FAILED")
    lines += ["# %-20s : %g %s" % ("Avg bus bandwidth", result.avg_busbw_gbs, verdict), "#"]
    if result.collective is not None:
        lines += [f"# Collective test concluded: {result.collective}", "#"]
    return "\n".join(lines) + "\n"


def _render_row(row: NcclRow) -> str:
    text = "%12d  %12d  %8s  %6s  %6d" % (row.size, row.count, row.type, row.redop, row.root)
    for time_us, algbw, busbw, wrong in ((row.oop_time_us, row.oop_algbw, row.oop_busbw, row.oop_wrong),
                                         (row.ip_time, row.ip_algbw, row.ip_busbw, row.ip_wrong)):
        text += "  %7s  %6s  %6s" % (_fit(time_us, 7), _fit(algbw, 6), _fit(busbw, 6))
        text += "    N/A" if wrong is None else "  %6g" % wrong
    return text
