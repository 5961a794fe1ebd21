"""A node at full speed: the GPUs its platform has, seen by their driver, every Thor in one
nvpmodel power mode, its clocks locked where the site asks. A node in a lower power mode, or whose GPU the driver lost, passes every
network check while it serves at a fraction of its siblings' tokens/s."""

from __future__ import annotations

from rackproof.judging.failure import Failure
from rackproof.inventory.model import Expect
from rackproof.probes.jetson import ClockRange, PowerMode
from rackproof.probes.nvidia_smi import Gpu
from rackproof.judging.versions import version_mismatch

NO_GPU_CAUSES = ("the driver did not start or lost the GPU (`dmesg | grep NVRM` says why): a JetPack or DGX OS update "
                 "left half-installed, or a GPU fallen off the bus; reboot, and reinstall the driver if it stays so")
CLOCKS_CAUSES = ("jetson_clocks was not run since the node booted: run sudo jetson_clocks (and, to keep it, have a "
                 "systemd unit run it at boot)")
POWER_MODE_CAUSES = ("a Thor left in another power mode (a lower one caps its clocks and power): on the odd node run "
                     "sudo nvpmodel -m <the mode's number> (it survives reboots)")


def gpus_seen(node: str, gpus: tuple[Gpu, ...], expect: Expect) -> None:
    """The Failure naming the node unless its driver sees exactly the GPUs the inventory expects."""
    right = [gpu for gpu in gpus if expect.gpu_name in (None, gpu.name)]
    if len(right) != expect.gpus_per_node or len(gpus) != expect.gpus_per_node:
        raise Failure(node, "GPUs seen by the driver (nvidia-smi)", f"{expect.gpus_per_node} {expect.gpu_name or 'GPU'}",
                      ", ".join(gpu.name for gpu in gpus) or "none (No devices were found)", NO_GPU_CAUSES)


def same_power_mode(found: dict[str, PowerMode], pinned: str | None) -> Failure | None:
    """None when every Thor is in one mode (the inventory's power_mode where it names one); else
    the Failure naming the odd nodes, every node's mode in its table."""
    return version_mismatch("power mode (nvpmodel -q)", {node: mode.name for node, mode in found.items()}, pinned,
                            POWER_MODE_CAUSES)


def clocks_locked(node: str, clocks: tuple[ClockRange, ...]) -> str | None:
    """The Failure naming the node and its unlocked clocks unless each online CPU's and each GPU clock
    domain's (Orin's GPU; Thor's gpu-gpc-0 and gpu-nvd-0) MinFreq is its MaxFreq. A CPU the power mode
    took offline is left out: jetson_clocks leaves its range alone. Returns what was left out
    ("cpu8, cpu9 offline, left out"), None when nothing was; a failure says it too."""
    offline = [c.name for c in clocks if not c.online]
    left_out = f"{', '.join(offline)} offline, left out" if offline else None
    unlocked = [c for c in clocks if c.online and c.min_freq != c.max_freq]
    if unlocked:
        domains = ", ".join(c.name for c in clocks if c.gpu)
        raise Failure(node, "clocks locked (jetson_clocks --show)",
                      f"MinFreq = MaxFreq on every online CPU and GPU clock domain ({domains})",
                      ", ".join(f"{c.name} {c.min_freq}-{c.max_freq}" for c in unlocked)
                      + (f" ({left_out})" if left_out else ""), CLOCKS_CAUSES)
    return left_out
