"""The kernel's own reports on a node (rackproof.probes.kernellog), as a check judges them: the
lines of the window that report a fault (an Xid, a PCIe AER error, an mlx5 or mgbe error, a
link flap on a cluster interface, an unclean previous shutdown), but those the inventory's
allowlist accepts, each quoted safely (node text: rackproof.probes.safetext)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from rackproof.judging.failure import Failure
from rackproof.inventory.model import Expect, Node
from rackproof.probes.kernellog import KERNEL_LOG, MAX_LINES, Reported, reported
from rackproof.inventory.references import KERNEL_LOG_WINDOW
from rackproof.probes.safetext import one_line

QUOTED = 300      # characters of a line shown in the failure: a runaway message stays one line
CAUSES = {
    "Xid": "an NVIDIA GPU error: the Xid's number names it (NVIDIA's Xid catalogue); 79, a GPU fallen off the bus, "
           "is power, heat or the PCIe link; 13/31/43 are often the application's, the others the GPU's or driver's",
    "AER fatal": "a PCIe link that failed (the card, its slot or riser, power, or a firmware hang): the device "
                 "behind it is lost until a reset; on a Spark, the CX7 behind 0000:01:00.0 / 0002:01:00.0",
    "AER non-fatal": "a PCIe transaction lost on the link (a marginal slot, riser or card)",
    "AER corrected": "PCIe errors the link corrected: a marginal slot, riser or card, or ASPM; allow it in "
                     "[expect] kernel_log_allow where the platform is known to print it",
    "mlx5 error": "the ConnectX firmware stopped answering or reported its health (a firmware hang, the card "
                  "overheating, a PCIe problem): update the firmware, check cooling, power-cycle",
    "mgbe error": "the Thor's MGBE (nvethernet) driver reported an error: the 25G PHY, the QSFP module or its cable",
    "link flap": "a cluster link went down during the window: a loose or marginal cable or module, the switch "
                 "port, or someone unplugging it",
    "unclean shutdown": "the node went down without a clean shutdown (a crash, a hang, power lost): the pstore "
                        "(/sys/fs/pstore) and the previous boot's journal (journalctl -b -1) say why",
}


@dataclass(frozen=True)
class KernelReports:
    reported: tuple[Reported, ...]
    window_hours: float
    lines_read: int
    whole: bool              # the window was read whole: not cut at MAX_LINES after its start


def cluster_interfaces(node: Node) -> set[str]:
    return {lane.name for lane in node.lanes} | {c.name for c in node.cx7} | ({node.interface} if node.interface else set())


def allowed(expect: Expect) -> list[re.Pattern]:
    return [re.compile(pattern) for pattern in expect.kernel_log_allow or ()]


def read(node, ctx) -> KernelReports:
    """The plan's reading of one node (rackproof.measurements.kernel)."""
    log = node.read(KERNEL_LOG)
    hours = KERNEL_LOG_WINDOW(ctx.cluster.expect)
    since = log.now - hours * 3600
    found = reported(log, since, cluster_interfaces(node.spec), allowed(ctx.cluster.expect))
    return KernelReports(tuple(found), hours, len(log.lines), not log.truncated or log.lines[0].epoch < since)


def judge(node: str, found: KernelReports) -> None:
    """The Failure quoting every reported line of the node's window, none allowed; a window
    not read whole (the kernel printed more than MAX_LINES lines in it) is never a pass."""
    what = f"kernel log over the last {found.window_hours:g} h (journalctl)"
    if not found.whole:
        raise Failure(node, what, f"at most {MAX_LINES} kernel lines in the window",
                      f"more: the newest {MAX_LINES} do not reach back to its start", "a driver or device flooding the "
                      "kernel log (journalctl -k on the node shows which); a window this full is not judged a pass",
                      details=_quoted(found.reported))
    if not found.reported:
        return
    kinds = list(dict.fromkeys(r.kind for r in found.reported))
    raise Failure(node, what, "no Xid, PCIe AER, mlx5/mgbe error, cluster link flap or unclean shutdown",
                  f"{len(found.reported)} line(s): " + ", ".join(kinds),
                  "; ".join(CAUSES[kind] for kind in kinds), details=_quoted(found.reported))


def _quoted(found: tuple[Reported, ...]) -> str:
    """Each line as the node printed it, one line each (control characters escaped), cut at QUOTED."""
    return "\n".join(f"  [{r.kind}] {one_line(r.meaning)}: {one_line(str(r.line))[:QUOTED]}" for r in found)
