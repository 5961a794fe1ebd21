"""The kernel and the system firmware compared across the nodes: the odd node named, every
node's value in a table (rackproof.judging.versions)."""

from __future__ import annotations

from rackproof.judging.failure import Failure, NotVerified
from rackproof.probes.release import Firmware
from rackproof.judging.versions import first_problem, version_mismatch

KERNEL_CAUSE = ("the odd node was updated alone (apt upgrade, an OTA), or booted another kernel than the "
                "others: its drivers (GPU, mlx5, nvethernet) are built for its own")
FIRMWARE_CAUSE = ("the odd node's firmware was updated alone, or not with the others (a DGX Spark's BIOS from "
                  "its OTA, a Jetson's UEFI from its flash): an early BIOS gives the second CX7 function PCIe x2")


def same_kernel_and_firmware(kernels: dict[str, str], firmware: dict[str, Firmware]) -> Failure | NotVerified | None:
    """The kernel release on every node; the firmware version where any node's can be read (a
    node that cannot read its own, beside nodes that can, is odd: never taken for equal). With
    no node's readable (no DMI tables the login reads) the firmware is not compared: the
    report's configuration table shows each node's reason."""
    versions = {node: f.version for node, f in firmware.items()}
    return first_problem([
        version_mismatch("kernel release (uname -r)", dict(kernels), None, KERNEL_CAUSE),
        version_mismatch("system firmware (/sys/class/dmi/id/bios_version)", versions, None, FIRMWARE_CAUSE,
                         missing="not readable") if any(versions.values()) else None])
