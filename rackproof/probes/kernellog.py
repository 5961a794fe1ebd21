"""The kernel's own reports (and journald's word on the previous shutdown), read from the journal:
`date +%s` (the node's clock, which the journal's times are in), then
`journalctl --no-pager --output=short-iso --lines=N _TRANSPORT=kernel + SYSLOG_IDENTIFIER=systemd-journald`,
the newest N entries. Both target platforms (JetPack 7 on Ubuntu 24.04, DGX OS 7) keep a journal;
the login reads it as a member of adm or systemd-journal (Ubuntu's first user is in adm), else
through the sudoers line `rackproof sudoers` writes. dmesg is not used: dmesg_restrict=1 on both
keeps it from the login, and the ring buffer loses the oldest lines.

A line is classified by what the drivers print (their printk formats, cited in
selftests/samples/SOURCES.md): an NVIDIA Xid with its number and meaning, a PCIe AER error and its
severity, an mlx5 firmware/health/command error, an nvethernet (mgbe) error, a link down on an
interface (a flap, unless the interface had not come up yet since the boot), an unclean previous
shutdown. Everything else is the kernel's ordinary noise and is not judged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from . import ParseError
from rackproof.probes.probe import Probe

MAX_LINES = 20000      # the newest entries read: a healthy node's journal since boot is a few thousand
MAX_TEXT_LINES = MAX_LINES * 8   # printed lines (a message may span several): more is not journalctl's answer

_ARGS = f"--no-pager --output=short-iso --lines={MAX_LINES} _TRANSPORT=kernel + SYSLOG_IDENTIFIER=systemd-journald"
# short-iso: "%Y-%m-%dT%H:%M:%S" and the offset, "+0000" up to systemd 254, "+00:00" from 255
_ENTRY = re.compile(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)([+-]\d\d):?(\d\d) (\S+) ([^\s\[\]:]+)(?:\[(\d+)\])?: ?(.*)")
_MARKER = re.compile(r"-- (?:(Boot) ([0-9a-f]{32})|No entries|(?:Logs|Journal) begins? at .*|Reboot) --")


class JournalError(ParseError):
    """journalctl's answer that is not its short-iso output."""

    def __init__(self, reason: str, text: str = ""):
        super().__init__("journalctl", reason, text)


@dataclass(frozen=True)
class LogLine:
    epoch: float          # seconds since 1970 (the node's clock)
    stamp: str            # as journalctl printed it
    source: str           # "kernel", "systemd-journald"
    text: str             # the message (a multi-line message joined with newlines)
    boot: int             # 0 for the oldest boot read, one more at each boot marker

    def __str__(self) -> str:
        return f"{self.stamp} {self.source}: {self.text}"


@dataclass(frozen=True)
class KernelLog:
    now: float                     # the node's clock when it was read
    lines: tuple[LogLine, ...]
    truncated: bool                # MAX_LINES entries came: older ones in the window may be missing


def parse_kernel_log(text: str) -> KernelLog:
    """`date +%s`'s line, then journalctl's entries and its own markers ("-- Boot ID --",
    "-- No entries --"); a line indented under an entry continues its message."""
    rows = text.split("\n", MAX_TEXT_LINES + 1)
    if len(rows) > MAX_TEXT_LINES + 1:
        raise JournalError(f"more than {MAX_TEXT_LINES} lines: not journalctl --lines={MAX_LINES}", text)
    first = rows[0].strip()
    if not (first.isascii() and first.isdigit()) or len(first) > 12:   # isdigit alone takes "²"
        raise JournalError("the first line is not the node's clock (date +%s)", text)
    lines: list[LogLine] = []
    boot = 0
    for row in rows[1:]:
        if not row.strip():
            continue
        if row[0] in " \t":
            if not lines:
                raise JournalError("an indented line before any entry", text)
            last = lines[-1]
            lines[-1] = LogLine(last.epoch, last.stamp, last.source, f"{last.text}\n{row.strip()}", last.boot)
            continue
        if marker := _MARKER.fullmatch(row.rstrip()):
            boot += bool(marker.group(1) and lines)
            continue
        entry = _ENTRY.fullmatch(row.rstrip("\r"))
        if entry is None:
            raise JournalError(f"not a short-iso entry: {row[:200]!r}", text)
        stamp, hours, minutes, _host, source, _pid, message = entry.groups()
        try:
            when = datetime.fromisoformat(f"{stamp}{hours}:{minutes}")
        except ValueError as e:
            raise JournalError(f"not a time: {stamp}{hours}{minutes}", text) from e
        lines.append(LogLine(when.timestamp(), row.split(" ", 1)[0], source, message, boot))
    return KernelLog(float(first), tuple(lines), len(lines) >= MAX_LINES)


KERNEL_LOG = Probe(
    "kernel log", f"the newest {MAX_LINES} of the kernel's lines and journald's, with the node's clock (Xid, AER, "
    "mlx5, mgbe, link flaps, unclean shutdowns)",
    f"date +%s; if id -nG | grep -qwE 'adm|systemd-journal'; then journalctl {_ARGS}; "
    f"else sudo -n journalctl {_ARGS}; fi",
    parse_kernel_log, timeout=60,
    unseen="journalctl's short-iso entries of a Jetson AGX Thor or a DGX Spark were not found in public: the "
           "format is systemd's (logs-show.c), the messages the drivers' own (samples: Xid, AER, mlx5, nvethernet)")
JOURNALCTL_ARGS = tuple(_ARGS.split())


# --- what a line reports -------------------------------------------------------------------

# NVIDIA's Xid catalogue (docs.nvidia.com/deploy/xid-errors): the ones a cluster meets
XID_MEANINGS = {
    8: "GPU stopped processing", 13: "Graphics Engine Exception", 31: "GPU memory page fault",
    32: "invalid or corrupted push buffer stream", 43: "GPU stopped processing (a reset channel)",
    45: "preemptive cleanup, due to previous errors", 48: "double-bit ECC error",
    61: "internal micro-controller breakpoint/warning", 62: "internal micro-controller halt",
    63: "ECC page retirement or row remapping recorded", 64: "ECC page retirement or row remapping failed",
    68: "video processor exception", 69: "graphics engine class error", 74: "NVLink error",
    79: "GPU has fallen off the bus", 92: "high single-bit ECC error rate", 94: "contained ECC error",
    95: "uncontained ECC error", 109: "context switch timeout", 119: "GSP RPC timeout", 120: "GSP error",
    154: "GPU recovery action changed",
}

_XID = re.compile(r"NVRM: Xid \((?:PCI:)?([0-9a-fA-F:.]+)\): (\d+)")
_FALLEN = re.compile(r"NVRM: (?:The NVIDIA GPU|GPU at) (\S+?)(?:\s|$).*fallen off the bus", re.S)
# drivers/pci/pcie/aer.c: "Uncorrected (Fatal) error received" (kernels before 6.x: "Corrected",
# "Uncorrected (Non-Fatal)"), "Uncorrectable (Fatal) error message received from" (6.x), and the
# per-device "PCIe Bus Error: severity=..."
_AER = re.compile(r"(?:AER: (?:Multiple )?|PCIe Bus Error: severity=)(Corrected|Correctable|Uncorrected|Uncorrectable)"
                  r"(?: \((Fatal|Non-Fatal)\))?")
_DEVICE = re.compile(r"^(\S+) ([0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.\d)(?: (\S+?))?: ")
# mlx5_core: health.c ("health compromised", "device's health compromised", "Fatal error", "assert_var"),
# cmd.c ("cmd_work_handler:...: ... timeout", "wait_func:... timeout"), en_main/en_rep: "TX timeout"
_MLX5_ERROR = re.compile(r"mlx5_health|health compromised|[Ff]atal error|assert_var|"
                         r"cmd_work_handler.*timeout|wait_func.*timeout|timeout\. Will cause a leak|"
                         r"TX timeout|firmware (?:error|fatal)|FW (?:fatal|error)|syndrome")
# nvethernet (ether_linux.c, osi): dev_err/netdev_err lines; its link messages are phylib's
_NVETHERNET_ERROR = re.compile(r"[Ff]ailed|[Ee]rror|[Tt]imeout|IRQ when NAPI|WARN")
# phylib's phy_print_status ("Link is Down", "Link is Up - 25Gbps/Full - flow control off") and
# mlx5e_update_carrier ("Link down", "Link up")
_LINK = re.compile(r"^(?:\S+ \S+ )?(\S+): Link (?:is )?(Down|Up|down|up)\b")
_UNCLEAN = re.compile(r"corrupted or uncleanly shut down|recovery complete|orphan cleanup on readonly fs")


@dataclass(frozen=True)
class Reported:
    """One line of the kernel's that a check judges."""
    kind: str            # "Xid", "AER fatal", "AER non-fatal", "AER corrected", "mlx5 error", "mgbe error",
                         # "link flap", "unclean shutdown"
    meaning: str         # "Xid 79 (GPU has fallen off the bus) on 0000:01:00"
    line: LogLine


def _link(text: str) -> tuple[str, bool] | None:
    found = _LINK.match(text)
    return (found.group(1), found.group(2).lower() == "up") if found else None


def classify(line: LogLine) -> Reported | None:
    """What the line reports, or None for the kernel's ordinary noise (link messages are judged
    with the lines around them: reported())."""
    text = line.text
    if line.source == "systemd-journald":
        return Reported("unclean shutdown", "the journal was not closed: the previous boot ended without a clean "
                        "shutdown (a crash, a hang, power lost)", line) if _UNCLEAN.search(text) else None
    if xid := _XID.search(text):
        number = int(xid.group(2))
        return Reported("Xid", f"Xid {number} ({XID_MEANINGS.get(number, 'see NVIDIA Xid catalogue')}) on "
                               f"{xid.group(1)}", line)
    if fallen := _FALLEN.search(text):
        return Reported("Xid", f"Xid 79 (GPU has fallen off the bus) on {fallen.group(1)}", line)
    device = _DEVICE.match(text)
    if aer := _AER.search(text):
        severity = "corrected" if aer.group(1).startswith("Correct") else (aer.group(2) or "Fatal").lower()
        where = f" on {device.group(2)} ({device.group(1)})" if device else ""
        return Reported(f"AER {severity}", f"PCIe AER {severity} error{where}", line)
    if device and device.group(1) == "mlx5_core" and _MLX5_ERROR.search(text):
        return Reported("mlx5 error", f"mlx5 firmware/command error on {device.group(2)}", line)
    if text.startswith("nvethernet ") and _NVETHERNET_ERROR.search(text) and not _link(text):
        return Reported("mgbe error", "nvethernet (mgbe) error", line)
    if line.source == "kernel" and _UNCLEAN.search(text) and text.startswith("EXT4-fs"):
        return Reported("unclean shutdown", "a file system needed its journal replayed: the previous boot ended "
                        "without a clean shutdown", line)
    return None


def reported(log: KernelLog, since: float, interfaces: set[str], allowed: list[re.Pattern]) -> list[Reported]:
    """Every line since `since` (node clock) that reports a fault, in order, but those an allowed
    pattern matches. A link down counts on the given interfaces only, and not while the
    interface has not yet come up since its boot (a link trains after the driver loads)."""
    found: list[Reported] = []
    came_up: set[tuple[int, str]] = set()
    booted: set[int] = {line.boot for line in log.lines if line.text.startswith("Linux version ")}
    for line in log.lines:
        link = _link(line.text)
        if link is not None and link[0] in interfaces:
            name, up = link
            if up:
                came_up.add((line.boot, name))
                continue
            if line.epoch < since or (line.boot in booted and (line.boot, name) not in came_up):
                continue
            event = Reported("link flap", f"{name} went down", line)
        else:
            if line.epoch < since:
                continue
            event = classify(line)
        if event is not None and not any(p.search(line.text) for p in allowed):
            found.append(event)
    return found
