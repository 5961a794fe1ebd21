"""`ibdev2netdev` (Mellanox OFED / DOCA) -> which RDMA device port carries which netdev, Up or Down.

"rocep1s0f1 port 1 ==> enp1s0f1np1 (Up)". The line order is not stable between runs. On a DGX
Spark each physical QSFP port shows as two logical interfaces (rocep1s0f1 and roceP2p1s0f1):
both must be Up on the cabled port. No output at all means no RDMA device (a Spark removes its
ConnectX-7 from PCI while no cable is in).
"""

import re
from dataclasses import dataclass

from . import ParseError
from rackproof.probes.probe import Probe

TOOL = "ibdev2netdev"

# the port is left out by some releases (NVIDIA's DGX A100 docs show "mlx5_0 ==> ib0 (Up)")
_MAPPING = re.compile(r"(\S+)(?: port ([0-9]{1,3}))? ==> (\S+) \((Up|Down)\)")


@dataclass(frozen=True)
class RdmaMap:
    device: str          # RDMA device: "rocep1s0f1", "roceP2p1s0f1", "mlx5_0"
    port: int | None     # None where the release does not print it
    netdev: str          # "enp1s0f1np1"
    up: bool             # the netdev's operstate is up (cable in, link trained)


def parse_ibdev2netdev(text: str) -> tuple[RdmaMap, ...]:
    """Mappings in the order printed; lines that are not mappings (shell noise) are skipped,
    but some text without a single mapping is not ibdev2netdev output."""
    maps = []
    for line in text.splitlines():
        match = _MAPPING.fullmatch(line.strip())
        if match:
            maps.append(RdmaMap(match[1], int(match[2]) if match[2] else None, match[3], match[4] == "Up"))
    if not maps and text.strip():
        raise ParseError(TOOL, "no 'DEVICE [port N] ==> NETDEV (Up|Down)' line", text)
    return tuple(maps)


IBDEV2NETDEV = Probe("ibdev2netdev", "which RDMA device and port each CX7 interface is, and its state",
                     "ibdev2netdev", parse_ibdev2netdev,
                     seen_on=("DGX Spark", "Ubuntu 22.04 DOCA-OFED", "RHEL 7.3", "DGX A100"),
                     unseen="asked of a DGX Spark only: a Jetson AGX Thor has no ConnectX-7")


# "enp1s0f1np1": the PCIe path (enp1s0), then the port's function (f1) and its number (np1)
_PATH = re.compile(r"(?P<path>.+)f[0-9]+np[0-9]+")


def twins(links: tuple[RdmaMap, ...] | list[RdmaMap]) -> dict[str, str]:
    """netdev -> the other port's netdev on the same PCIe path (enp1s0f1np1 <-> enp1s0f0np0): the
    two names that the Spark guide's "interface-name trap" mixes up."""
    by_path: dict[str, list[str]] = {}
    for link in links:
        match = _PATH.fullmatch(link.netdev)
        if match:
            by_path.setdefault(match["path"], []).append(link.netdev)
    return {a: b for names in by_path.values() if len(names) == 2 for a, b in (names, names[::-1])}
