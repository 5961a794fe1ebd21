"""The hardware behind a CX7 link, read as facts: each end's NIC firmware (ethtool -i), the PCIe link
of its function and its RoCE v2 GID index (the RDMA device's sysfs), and its MTU. A DGX Spark's
ConnectX-7 port is two PCIe functions, each Gen5 x4 (32.0 GT/s PCIe x4): NVIDIA's
check-connectx-bandwidth (dgx-spark-playbooks, connect-two-sparks) reads the same three facts
before it trusts a link's figure, and an early BIOS trains the second controller at x2.
"""

from __future__ import annotations

from dataclasses import dataclass

from rackproof.nodes.host import Host
from rackproof.inventory.model import Cx7Interface
from rackproof.probes.ethtool import DRIVER_INFO, DriverInfo
from rackproof.probes.rdmasysfs import RDMA_SYSFS, RdmaDevice


@dataclass(frozen=True)
class Cx7Hardware:
    node: str
    interface: str          # "enp1s0f1np1"
    driver: DriverInfo
    rdma: RdmaDevice
    mtu: int | None         # None: the interface does not exist

    @property
    def where(self) -> str:
        return f"{self.node} {self.interface} ({self.rdma.device})"

    @property
    def gid_index(self) -> int | None:
        """The index of the interface's RoCE v2 GID of an IPv4 address; None when its table has none."""
        return self.rdma.roce_v2_index(self.interface)


def read(host: Host, spec: Cx7Interface) -> Cx7Hardware:
    """One CX7 function's facts, each probe read once a run (the entries that share them recall it)."""
    found = host.interfaces().get(spec.name)
    return Cx7Hardware(host.name, spec.name,
                       host.read(DRIVER_INFO, interface=spec.name), host.read(RDMA_SYSFS, device=spec.rdma_device),
                       found.mtu if found else None)


def differing(links: list[tuple[Cx7Hardware, Cx7Hardware]], fact) -> list[str]:
    """'A: x, B: y' for each link whose two ends disagree on fact(end)."""
    return [f"{a.where}: {fact(a)}, {b.where}: {fact(b)}" for a, b in links if fact(a) != fact(b)]
