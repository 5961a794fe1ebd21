"""An RDMA device's sysfs files as the kernel writes them (read by rackproof.probes.rdmasysfs):
{path: content}, None for a file the kernel refuses to read (an empty slot's type or interface:
EINVAL). Its GID table as the kernel fills it: the link-local GID (EUI-64 of the MAC) as RoCE v1
and v2 at 0 and 1, then each address in the order it came up, a v1 and a v2 entry each (an IPv4
address mapped: ::ffff:a.b.c.d); the slots after them all zero."""

from __future__ import annotations

import ipaddress

from rackproof.probes.rdmasysfs import TOOL, ZERO_GID, PcieLink

TYPES = ("IB/RoCE v1", "RoCE v2")
SLOTS = 16          # the table here; a real port's is longer, and only its filled slots are read


def gid(address: str) -> str:
    """A GID as sysfs writes it: eight groups of four hex digits."""
    packed = ipaddress.ip_address(address)
    packed = ipaddress.IPv6Address(f"::ffff:{packed}") if packed.version == 4 else packed
    hexed = packed.packed.hex()
    return ":".join(hexed[i:i + 4] for i in range(0, 32, 4))


def link_local(mac: str) -> str:
    """fe80::/64 with the MAC's EUI-64 (the universal/local bit flipped, ff:fe in the middle)."""
    octets = [int(x, 16) for x in mac.split(":")]
    octets[0] ^= 0x02
    eui = octets[:3] + [0xff, 0xfe] + octets[3:]
    return "fe80::" + ":".join(f"{eui[i]:02x}{eui[i + 1]:02x}" for i in range(0, 8, 2))


def files(device: str, netdev: str, pcie: PcieLink, mac: str, addresses: list[str]) -> dict[str, str | None]:
    """The device's files: its PCIe function's link, and port 1's GID table for `addresses` in the
    order they came up (the link-local one first)."""
    base = f"{TOOL}/{device}"
    found: dict[str, str | None] = {
        f"{base}/device/current_link_speed": pcie.speed, f"{base}/device/current_link_width": str(pcie.width),
        f"{base}/device/max_link_speed": pcie.max_speed, f"{base}/device/max_link_width": str(pcie.max_width)}
    filled = [(gid(address), kind) for address in [link_local(mac), *addresses] for kind in TYPES]
    for index in range(SLOTS):
        value, kind = filled[index] if index < len(filled) else (ZERO_GID, None)
        found[f"{base}/ports/1/gids/{index}"] = value
        found[f"{base}/ports/1/gid_attrs/types/{index}"] = kind
        found[f"{base}/ports/1/gid_attrs/ndevs/{index}"] = netdev if kind else None
    return found
