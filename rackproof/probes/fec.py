"""`ethtool --show-fec IFACE` (also with -I, also --json) -> FecInfo: configured and active FEC.

The label is "Configured FEC encodings:" on older and "Supported/Configured FEC encodings:" on
newer ethtool. Netlink ethtool prints "None" for an empty set and "Off" for FEC switched off,
so the two stay distinct. A working direct-attach DGX Spark cable shows active "None"; through
a switch it is usually "RS". `-I` adds a Statistics block whose totals are kept. Only the block
(or JSON entry) of the interface asked for is read.
"""

import re
from dataclasses import dataclass

from . import ParseError
from ._text import int_value, json_field, load_json
from .ethtool import interface_block, split_key_value
from rackproof.probes.probe import Probe

TOOL = "ethtool --show-fec"

_CONFIGURED_LABELS = ("Configured FEC encodings", "Supported/Configured FEC encodings")
_ACTIVE_LABELS = ("Active FEC encoding", "Active FEC encodings")  # the plural on early netlink ethtool
# "Not reported" is one value in two words.
_MODE_TOKEN = re.compile(r"(?i:not reported)|\S+")
_BIT = re.compile(r"(?i:bit)([0-9]+)")
# Spelling as ethtool prints it, whatever case a document or a driver used.
_MODE_NAMES = {name.lower(): name for name in ("Auto", "Off", "None", "RS", "BaseR", "LLRS", "Not reported")}
_STATISTICS = ("corrected_blocks", "uncorrectable_blocks")


@dataclass(frozen=True)
class FecInfo:
    interface: str                      # the one asked for, from "FEC parameters for X:"
    configured: tuple[str, ...]         # e.g. ("Auto",), ("Auto", "RS", "BaseR"), ("RS",)
    active: tuple[str, ...]             # usually one mode: ("RS",), ("None",), ("BaseR",)
    corrected_blocks: int | None = None        # -I totals; per-lane counts are not kept
    uncorrectable_blocks: int | None = None


def normalize_fec_mode(mode: str) -> str:
    """"rs" -> "RS", "baser" -> "BaseR", "bit7" -> "BIT7"; unknown names stay as printed."""
    bit = _BIT.fullmatch(mode)
    if bit:
        return f"BIT{bit[1]}"
    return _MODE_NAMES.get(mode.lower(), mode)


def parse_fec(text: str, interface: str) -> FecInfo:
    """FEC of `interface`, from its own "FEC parameters for IFACE:" block (or JSON entry) only."""
    if text.lstrip().startswith("["):
        return _parse_json(text, interface)
    configured = active = None
    counters: dict[str, int] = {}
    for line in interface_block(TOOL, text, "FEC parameters for", interface):
        pair = split_key_value(line)
        if pair is None:
            continue
        key, value = pair
        if key in _CONFIGURED_LABELS and configured is None:
            configured = _modes(value)
        elif key in _ACTIVE_LABELS and active is None:
            active = _modes(value)
        elif key in _STATISTICS and key not in counters:
            # "fec_symbol_err_0: 445 [ per_lane:  125, ... ]" style suffixes follow the total
            counters[key] = int_value(TOOL, value.partition(" ")[0], key, text)
    if not configured or not active:
        raise ParseError(TOOL, "no 'Configured FEC encodings' or 'Active FEC encoding' line", text)
    return FecInfo(interface, configured, active,
                   counters.get("corrected_blocks"), counters.get("uncorrectable_blocks"))


def _modes(value: str) -> tuple[str, ...]:
    return tuple(normalize_fec_mode(token) for token in _MODE_TOKEN.findall(value))


def _parse_json(text: str, interface: str) -> FecInfo:
    """`ethtool --json --show-fec`: [{"ifname", "config": [...], "active": [...], "statistics"}]."""
    document = load_json(TOOL, text)
    if not isinstance(document, list):
        raise ParseError(TOOL, "expected a JSON list", text)
    entry = next((e for e in document if isinstance(e, dict) and e.get("ifname") == interface), None)
    if entry is None:
        raise ParseError(TOOL, f"no entry with \"ifname\": \"{interface}\": the output is not about {interface}", text)
    modes = {key: json_field(TOOL, entry, key, list, text) for key in ("config", "active")}
    if not all(modes.values()) or not all(isinstance(m, str) for ms in modes.values() for m in ms):
        raise ParseError(TOOL, f"FEC modes are not non-empty lists of names: {modes!r}", text)
    statistics = json_field(TOOL, entry, "statistics", dict, text, optional=True) or {}
    totals = {}
    for key in _STATISTICS:
        counter = json_field(TOOL, statistics, key, dict, text, optional=True)
        totals[key] = None if counter is None else json_field(TOOL, counter, "total", int, text)
    return FecInfo(
        interface=interface,
        configured=tuple(normalize_fec_mode(m) for m in modes["config"]),
        active=tuple(normalize_fec_mode(m) for m in modes["active"]),
        corrected_blocks=totals["corrected_blocks"],
        uncorrectable_blocks=totals["uncorrectable_blocks"],
    )


FEC = Probe("ethtool --show-fec", "a lane's configured and active FEC", "ethtool --show-fec {interface}",
            parse_fec, ("interface",), seen_on=("DGX Spark", "E810"),
            unseen="no `ethtool --show-fec` of a Jetson AGX Thor was found")
# with -I: the corrected and uncorrectable block counters, read before and after load
FEC_STATS = Probe("ethtool -I --show-fec", "a lane's FEC block counters", "ethtool -I --show-fec {interface}",
                  parse_fec, ("interface",), seen_on=("E810", "Linux 6.18"),
                  unseen="no `ethtool -I --show-fec` of a Jetson AGX Thor or a DGX Spark was found")
