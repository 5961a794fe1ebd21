"""The hardware behind a CX7 link, read as facts: each end's NIC firmware (ethtool -i), the PCIe link
of its function and its RoCE v2 GID index (the RDMA device's sysfs), and its MTU. A DGX Spark's
ConnectX-7 port is two PCIe functions, each Gen5 x4 (32.0 GT/s PCIe x4): NVIDIA's
check-connectx-bandwidth (dgx-spark-playbooks, connect-two-sparks) reads the same three facts
before it trusts a link's figure, and an early BIOS trains the second controller at x2. For a link
under its floor, both ends' speed, PCIe link and firmware are read again in the plan's diagnosis
phase (link_cause), and rackproof.judging.staleinit says what they name.
"""

from __future__ import annotations

from dataclasses import dataclass

from rackproof.judging import staleinit
from rackproof.nodes.host import Host, ProbeFailed
from rackproof.inventory.model import Cx7Interface
from rackproof.probes.ethtool import DRIVER_INFO, ETHTOOL, DriverInfo
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


def link_cause(sender: Host, receiver: Host, link: tuple[Cx7Interface, Cx7Interface], gbps: float) -> str | None:
    """The cause of one link's figure under its floor, from both ends' facts read now."""
    return staleinit.cause(gbps, tuple(_end(host, iface) for host, iface in zip((sender, receiver), link)))


def _end(host: Host, iface: Cx7Interface) -> staleinit.End:
    """The end's speed, PCIe link and firmware (each None when its probe failed); the facts phase
    read the same probes once (read, above; the link's ethtool), so a full run recalls them."""
    speed, pcie, firmware = (_read(host, probe, **values) for probe, values in (
        (ETHTOOL, {"interface": iface.name}), (RDMA_SYSFS, {"device": iface.rdma_device}),
        (DRIVER_INFO, {"interface": iface.name})))
    return staleinit.End(f"{host.name} {iface.name} ({iface.rdma_device})", speed and speed.speed_mbps,
                         pcie and str(pcie.pcie), pcie and pcie.pcie.full, firmware and firmware.firmware)


def _read(host: Host, probe, **values):
    try:
        return host.read(probe, **values)
    except ProbeFailed:
        return None
