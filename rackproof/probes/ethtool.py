"""`ethtool IFACE` (run with LC_ALL=C) -> LinkInfo: speed, duplex, link state of one interface.

Real output indents with tabs, copies in documents with spaces; lines without a "Key:" are
continuations of the key above (link mode lists). Without root, lines such as "netlink error:
Operation not permitted" are mixed in; they are keys nobody asks for. `ethtool A B C` reports
only A. Only the block under "Settings for IFACE:" of the interface asked for is read: output
holding another interface's block, or no header at all, must not pass for this interface's; a
line before the first header other than ethtool's own complaints ("Cannot get ...") is refused.

Also home of the helpers the other ethtool-style parsers share (fec, bonding).
"""

import re
from dataclasses import dataclass

from . import ParseError
from ._text import int_value
from rackproof.probes.probe import Probe

TOOL = "ethtool"

_SPEED = re.compile(r"([0-9]{1,20})Mb/s")
_NOT_REPORTED = "Not reported"
# A key starts with a letter: hex dumps ("0x0000: 11 06") and continuation lines
# ("10000baseT/Full", "drv probe link") are not keys.
_KEY_START = re.compile(r"[A-Za-z]")


def split_key_value(line: str) -> tuple[str, str] | None:
    """("Key", "value") of a "Key: value" line, whatever its indentation; None for other lines.

    String operations, not a regex: a lazy key followed by optional spaces and a colon
    backtracks quadratically over a long run of spaces that no colon ends."""
    key, colon, value = line.strip().partition(":")
    if not colon or not _KEY_START.match(key):
        return None
    return key.rstrip(), value.lstrip()


# what ethtool says on stderr when it cannot read a part ("Cannot get wake-on-lan settings:
# Operation not permitted", "netlink error: Operation not permitted"): printed unbuffered, it
# comes before the header in a capture of both streams
_COMPLAINT = re.compile(r"Cannot \S.*|netlink error: .*")


def interface_block(tool: str, text: str, header: str, interface: str) -> list[str]:
    """The lines after "HEADER INTERFACE:" up to the next "HEADER OTHER:" line. ethtool prints
    one such block per interface; without the asked-for one, the text says nothing about it.
    Before the first header only ethtool's complaints may come: any other line there is a value
    of no interface, and refused."""
    header_line = re.compile(re.escape(header) + r" (\S+):")
    block, headed, stray = None, False, None
    for line in text.splitlines():
        named = header_line.fullmatch(line.strip())
        if named and block is not None:
            break                           # the next interface's block
        if named and not headed and stray is not None:
            raise ParseError(tool, f"{stray[:80]!r} comes before the '{named[0]}' line: a value of no interface", text)
        headed = headed or bool(named)
        if not headed and stray is None and line.strip() and not _COMPLAINT.fullmatch(line.strip()):
            stray = line.strip()
        if named and named[1] == interface:
            block = []
        elif block is not None:
            block.append(line)
    if block is None:
        raise ParseError(tool, f"no '{header} {interface}:' block: the output is not about {interface}", text)
    return block


@dataclass(frozen=True)
class LinkInfo:
    interface: str                      # the one asked for, from "Settings for X:"
    speed_mbps: int | None = None       # None for "Unknown!" (link down on most drivers) or no line
    duplex: str | None = None           # "Full", "Half"; None for "Unknown! (255)"
    link_detected: bool | None = None   # only from "Link detected:"; None when ethtool could not tell
    port: str | None = None             # "Direct Attach Copper", "FIBRE", "Twisted Pair", "Other"
    auto_negotiation: bool | None = None
    lanes: int | None = None            # netlink-era ethtool only
    supported_link_modes: tuple[str, ...] = ()   # empty for "Not reported"
    advertised_link_modes: tuple[str, ...] = ()


def parse_ethtool(text: str, interface: str) -> LinkInfo:
    """The link of `interface`, read from its own "Settings for IFACE:" block only."""
    fields = _fields(interface_block(TOOL, text, "Settings for", interface))
    return LinkInfo(
        interface=interface,
        speed_mbps=_speed(fields.get("Speed"), text),
        duplex=_known(fields.get("Duplex")),
        link_detected=_on_off(fields.get("Link detected"), "yes", "no", "Link detected", text),
        port=_first_line(fields.get("Port")),
        auto_negotiation=_on_off(fields.get("Auto-negotiation"), "on", "off", "Auto-negotiation", text),
        lanes=_optional_int(fields.get("Lanes"), "Lanes", text),
        supported_link_modes=_link_modes(fields.get("Supported link modes")),
        advertised_link_modes=_link_modes(fields.get("Advertised link modes")),
    )


def _fields(lines: list[str]) -> dict[str, list[str]]:
    """key -> [value, continuation lines...]; a repeated key keeps its first value."""
    fields: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in lines:
        pair = split_key_value(line)
        if pair:
            key, value = pair
            current = fields.setdefault(key, [value]) if key not in fields else None
        elif line.strip() and current is not None:
            current.append(line.strip())
    return fields


def _first_line(value: list[str] | None) -> str | None:
    return value[0] if value else None


def _known(value: list[str] | None) -> str | None:
    first = _first_line(value)
    return None if first is None or first.startswith("Unknown") else first


def _speed(value: list[str] | None, text: str) -> int | None:
    first = _known(value)
    if first is None:
        return None
    match = _SPEED.fullmatch(first)
    if match is None:
        raise ParseError(TOOL, f"unreadable Speed: {first!r}", text)
    return int(match[1])


def _on_off(value: list[str] | None, yes: str, no: str, what: str, text: str) -> bool | None:
    first = _first_line(value)
    if first is None:
        return None
    if first not in (yes, no):
        raise ParseError(TOOL, f"{what} is neither {yes!r} nor {no!r}: {first!r}", text)
    return first == yes


def _optional_int(value: list[str] | None, what: str, text: str) -> int | None:
    first = _first_line(value)
    return None if first is None else int_value(TOOL, first, what, text)


def _link_modes(value: list[str] | None) -> tuple[str, ...]:
    # Older ethtool prints several modes per line ("10baseT/Half 10baseT/Full"), newer one.
    if not value or value[0] == _NOT_REPORTED:
        return ()
    return tuple(mode for line in value for mode in line.split())


# ethtool exits 75/76 on some drivers without root yet prints what we need: parse anyway
ETHTOOL = Probe("ethtool", "a lane's speed, duplex, port and link", "ethtool {interface}",
                parse_ethtool, ("interface",), ok_exit=(0, 75, 76),
                seen_on=("DGX Spark", "Jetson AGX Thor", "E810 ice", "CentOS"),
                unseen="the Thor's record was abridged by its author and taken as a non-root login: no whole Thor "
                       "output was found; of a Spark only the Speed line")


@dataclass(frozen=True)
class DriverInfo:
    """`ethtool -i IFACE`: the driver and the NIC's firmware behind an interface."""
    driver: str
    version: str | None             # the driver's version; an inbox driver prints the kernel's release
    firmware: str | None            # "28.45.4028 (NVD0000000087)": version, then the board's PSID
    bus: str | None                 # the PCI function: "0000:01:00.0"


def parse_driver_info(text: str) -> DriverInfo:
    """The "key: value" lines of `ethtool -i`; an empty value (expansion-rom-version:) is None.
    Without a "driver:" line the text is not ethtool -i's."""
    fields: dict[str, str] = {}
    for line in text.splitlines():
        pair = split_key_value(line)
        if pair is not None:
            fields.setdefault(pair[0], pair[1].strip())
    driver = fields.get("driver")
    if not driver or any(c.isspace() for c in driver):
        raise ParseError("ethtool -i", f"no driver name on a 'driver:' line: {driver!r}", text)
    return DriverInfo(driver, fields.get("version") or None, fields.get("firmware-version") or None,
                      fields.get("bus-info") or None)


DRIVER_INFO = Probe("ethtool -i firmware", "an interface's driver, its NIC's firmware and PCI function",
                    "ethtool -i {interface}", parse_driver_info, once=True,
                    seen_on=("DGX Spark DGX OS 7", "Ubuntu ConnectX-7"),
                    unseen="no Jetson AGX Thor's; the DGX Spark's is its first three lines only (driver, version, firmware-version)")
