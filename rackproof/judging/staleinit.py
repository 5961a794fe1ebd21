"""Why one CX7 link moves less than its floor, and the one state NVIDIA names for it: the stale
initialisation of a DGX Spark's ConnectX-7. A link that reports its full 200000 Mb/s, whose PCIe
function runs at its full speed and width and whose firmware is the same at both ends, and whose
RDMA writes move 8-25 Gb/s, is in that state (possibly one direction only); NVIDIA's
check-connectx-bandwidth (dgx-spark-playbooks, nvidia/connect-two-sparks/assets) gives it an exit
status of its own, and NVIDIA's performance guide there ("Detect a degraded ConnectX-7
initialization") says what clears it: a reboot of both units, else a full AC power cycle of both. The state is named only when every one of
those facts was read and holds; otherwise the fact that is not in order is named, or nothing.

The facts are read by the controller in the plan's diagnosis phase (rackproof.measurements.cx7,
rackproof.measuring.nichardware.link_cause), for the pairs whose slowest link failed its floor only.
"""

from __future__ import annotations

from dataclasses import dataclass

from rackproof.inventory.model import ClusterAtStep
from rackproof.inventory.references import measured

FULL_SPEED_MBPS = 200000
# NVIDIA's check-connectx-bandwidth: "A client result between 8 and 25 Gb/s, together with a 200 Gb/s
# Ethernet link and a PCIe Gen5 x4 link, identifies the known degraded initialization state"
STALE_BAND_GBPS = (8.0, 25.0)
# NVIDIA's recovery (performance_benchmarking_guide.md, "Detect a degraded ConnectX-7 initialization")
RECOVERY = ("stop distributed work on both units; with the final QSFP topology connected (cables not moved during "
            "recovery), update DGX OS and firmware, reboot both units and measure again both ways; if the link stays "
            "capped, `sudo shutdown -h now` both, disconnect each unit's USB-C power and its adapter from AC for at "
            "least 60 seconds, power on and measure again (a full AC power cycle of both units); if it still stays "
            "capped, collect nvidia-bug-report.sh and contact NVIDIA support")


@dataclass(frozen=True)
class End:
    """One end of a CX7 link as the diagnosis read it; None: not read."""
    where: str                       # "spark-1 enp1s0f1np1 (rocep1s0f1)"
    speed_mbps: int | None           # ethtool's Speed
    pcie: str | None = None          # its PCIe function's link, as read: "32.0 GT/s PCIe x4 (max 32.0 GT/s PCIe x4)"
    pcie_full: bool | None = None    # current speed and width equal the maximum
    firmware: str | None = None      # ethtool -i firmware-version


def cause(gbps: float, ends: tuple[End, End]) -> str | None:
    """What the ends' facts say of a link that moved `gbps` under its floor: the fact out of order,
    the stale initialisation when every fact was read and holds and the figure is in NVIDIA's band,
    or None when the facts say nothing."""
    slower = [f"{e.where} at {e.speed_mbps}Mb/s" for e in ends if e.speed_mbps not in (None, FULL_SPEED_MBPS)]
    if slower:
        return (f"the link did not negotiate {FULL_SPEED_MBPS}Mb/s: {', '.join(slower)} (a cable or switch port "
                "rated lower, or the other end forced to a lower speed)")
    narrow = [f"{e.where} PCIe {e.pcie}" for e in ends if e.pcie_full is False]
    if narrow:
        return (f"{', '.join(narrow)}: the function's PCIe link runs below its maximum (Gen5 x4 expected; an early "
                "BIOS gives the second controller x2), which caps what RDMA can move")
    firmware = {e.firmware for e in ends}
    if len(firmware) > 1 and None not in firmware:
        return ("the two ends run different NIC firmware (" + ", ".join(f"{e.where}: {e.firmware}" for e in ends) +
                "): update both to the same release (DGX OS updates carry it)")
    unread = [f"{e.where} {what}" for e in ends
              for what, value in (("speed", e.speed_mbps), ("PCIe link", e.pcie_full), ("firmware", e.firmware))
              if value is None]
    low, high = STALE_BAND_GBPS
    if not low <= gbps <= high:
        return None
    if unread:
        return (f"{gbps:g} Gb/s is in the band of a stale CX7 initialisation "
                f"(NVIDIA: {low:g}-{high:g} Gb/s), but {', '.join(unread)} could not be read, so the state is not "
                "named")
    return (f"a stale initialisation of the ConnectX-7: {gbps:g} Gb/s on a link that reports {FULL_SPEED_MBPS}Mb/s, "
            f"with its PCIe links at their full speed and width and the same firmware at both ends ({ends[0].firmware})"
            f" is the state NVIDIA names for {low:g}-{high:g} Gb/s. Recovery: {RECOVERY}")


def under_floor(gbps: float, cluster: ClusterAtStep) -> bool:
    """A link's figure fails its floor, as the judge's `measure` finds it."""
    return measured("roce.link", "", gbps, "Gb/s", cluster.expect).verdict == "failed"


def slowest(results) -> int:
    """The link whose run moved least (the one the judge judges)."""
    return min(range(len(results)), key=lambda i: results[i].gbits_average)
