"""An RDMA device's own files in sysfs (/sys/class/infiniband/DEV), read by `grep -H` -> RdmaDevice:
the PCIe link of its function (device/current_link_speed, current_link_width against max_link_*)
and its port's GID table (ports/1/gids/N with gid_attrs/types/N and gid_attrs/ndevs/N).

Every file is world-readable: no root. grep prints "PATH:VALUE" for each line it selects; -v -x
of the all-zero GID leaves out the table's empty slots, -s the slots whose type the kernel refuses
to read (EINVAL), which also makes grep exit 2 on a healthy device. The values are the kernel's
own strings: "32.0 GT/s PCIe" (pci_speed_string; "Unknown" with width 0 for a link that is down),
"RoCE v2" and "IB/RoCE v1" (ib_cache's GID types), GIDs as eight groups of four hex digits
(an IPv4 address mapped: 0000:0000:0000:0000:0000:ffff:c0a8:640a is 192.168.100.10).
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

from . import ParseError
from rackproof.probes.probe import Probe

TOOL = "/sys/class/infiniband"
ZERO_GID = ":".join(["0000"] * 8)
ROCE_V2 = "RoCE v2"

_SPEED = re.compile(r"(?:[0-9]{1,3}(?:\.[0-9]{1,2})? GT/s(?: PCIe)?|Unknown)")
_WIDTH = re.compile(r"[0-9]{1,2}")
_GID = re.compile(r"[0-9a-f]{4}(?::[0-9a-f]{4}){7}")
_TYPE = re.compile(r"[A-Za-z0-9/. ]{1,20}")
_NETDEV = re.compile(r"[A-Za-z0-9_.:@-]{1,15}")
_PCIE = ("current_link_speed", "current_link_width", "max_link_speed", "max_link_width")
_TABLES = {"ports/1/gids": "gids", "ports/1/gid_attrs/types": "types", "ports/1/gid_attrs/ndevs": "ndevs"}


@dataclass(frozen=True)
class PcieLink:
    speed: str              # "32.0 GT/s PCIe" (Gen5)
    width: int              # lanes: 4
    max_speed: str
    max_width: int

    @property
    def full(self) -> bool:
        """Trained at the speed and width both ends can do."""
        return (self.speed, self.width) == (self.max_speed, self.max_width)

    def __str__(self) -> str:
        return f"{self.speed} x{self.width} (max {self.max_speed} x{self.max_width})"


@dataclass(frozen=True)
class Gid:
    index: int
    gid: str                # "0000:0000:0000:0000:0000:ffff:c0a8:640a"
    type: str | None        # "RoCE v2", "IB/RoCE v1"; None where the type was not read
    netdev: str | None      # the interface whose address it is

    @property
    def ipv4(self) -> str | None:
        """The IPv4 address an IPv4-mapped GID carries; None for an IPv6 GID."""
        mapped = ipaddress.IPv6Address(self.gid).ipv4_mapped
        return str(mapped) if mapped else None


@dataclass(frozen=True)
class RdmaDevice:
    device: str
    pcie: PcieLink
    gids: tuple[Gid, ...]   # the table's filled entries, by index

    def roce_v2_index(self, netdev: str) -> int | None:
        """The index of the interface's first RoCE v2 GID of an IPv4 address (IPv4-mapped): the entry
        NCCL picks for RoCE v2 over IPv4 and perftest's -x and NCCL_IB_GID_INDEX must name; None
        when the table has none. Read from the table alone (an anonymised recording masks the
        interface's address, not the GID that maps it)."""
        return next((g.index for g in self.gids if g.type == ROCE_V2 and g.ipv4 and g.netdev == netdev), None)


def parse_rdma_sysfs(text: str, device: str) -> RdmaDevice:
    """The "PATH:VALUE" lines of grep -H over DEV's files; any line about another path is refused."""
    prefix = f"{TOOL}/{device}/"
    pcie: dict[str, str] = {}
    gids: dict[int, str] = {}
    types: dict[int, str] = {}
    netdevs: dict[int, str] = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        path, colon, value = line.partition(":")
        if not colon or not path.startswith(prefix):
            raise ParseError(TOOL, f"not a line of {prefix}: {line[:80]!r}", text)
        name = path.removeprefix(prefix)
        table, _, index = name.rpartition("/")
        if table == "device" and index in _PCIE:
            pcie.setdefault(index, _checked(value, _SPEED if "speed" in index else _WIDTH, name, text))
        elif table in _TABLES and _WIDTH.fullmatch(index):
            found, pattern = {"gids": (gids, _GID), "types": (types, _TYPE), "ndevs": (netdevs, _NETDEV)}[_TABLES[table]]
            found.setdefault(int(index), _checked(value, pattern, name, text))
        else:
            raise ParseError(TOOL, f"a file this read does not ask for: {path[:120]!r}", text)
    missing = [f for f in _PCIE if f not in pcie]
    if missing:
        raise ParseError(TOOL, f"no {', '.join(missing)} of {device}: not an RDMA device of a PCIe function here", text)
    link = PcieLink(pcie["current_link_speed"], int(pcie["current_link_width"]), pcie["max_link_speed"],
                    int(pcie["max_link_width"]))
    filled = [i for i in sorted(gids) if gids[i] != ZERO_GID]
    return RdmaDevice(device, link, tuple(Gid(i, gids[i], types.get(i), netdevs.get(i)) for i in filled))


def _checked(value: str, pattern: re.Pattern, name: str, text: str) -> str:
    if not pattern.fullmatch(value):
        raise ParseError(TOOL, f"{name} is not what the kernel writes there: {value[:80]!r}", text)
    return value


_FILES = " ".join([f"{TOOL}/{{device}}/device/{f}" for f in _PCIE]
                  + [f"{TOOL}/{{device}}/ports/1/{t}/*" for t in ("gids", "gid_attrs/types", "gid_attrs/ndevs")])
# exit 2 with lines: the empty slots' types cannot be read (EINVAL), on every healthy device
RDMA_SYSFS = Probe("rdma sysfs", "an RDMA device's PCIe link (current and max speed and width) and its GID table "
                   "(GID, RoCE type, interface of each entry)",
                   f"grep -s -H -v -x {ZERO_GID} {_FILES}", parse_rdma_sysfs, ("device",), ok_exit=(0, 1, 2),
                   once=True,
                   unseen="grep's 'PATH:VALUE' lines over these files were not found in a public capture: the values "
                          "are the kernel's strings (pci_speed_string, ib_cache's GID types), seen one file at a time "
                          "on DGX Sparks and other hosts (samples rdma_sysfs_*)")
