"""journalctl as a simulated node's journal answers it. The nodes' namespaces share the host's
kernel, so the host's journal and ring buffer are never read: a node's kernel lines are its
boot's ordinary noise (formats.kernellog.BOOT_NOISE, dated from the host kernel's boot, which is
the nodes' too) and the lines a fault planted in its model ("kernel_log": Xid, AER, link flaps).

Only what the suite's probe asks is modelled: `--no-pager --output=short-iso --lines=N` and the
matches `_TRANSPORT=kernel + SYSLOG_IDENTIFIER=systemd-journald`."""

from __future__ import annotations

import re
import sys

from . import model

KNOWN = {"--no-pager", "--output=short-iso", "_TRANSPORT=kernel", "+", "SYSLOG_IDENTIFIER=systemd-journald"}
_CX7 = re.compile(r"en[pP](?:(\d+)p)?(\d+)s(\d+)f(\d+)np\d+")


def _host_boot() -> float:
    with open("/proc/stat") as f:
        return float(next(line.split()[1] for line in f if line.startswith("btime ")))


def pci_address(name: str) -> str:
    """A CX7 interface's PCI address from its predictable name (enp1s0f0np0: 0000:01:00.0,
    enP2p1s0f1np1: 0002:01:00.1)."""
    found = _CX7.fullmatch(name)
    if not found:
        return "0000:01:00.0"
    domain, bus, slot, function = found.groups()
    return f"{int(domain or 0):04x}:{int(bus):02x}:{int(slot):02x}.{function}"


def entries(m: dict, boot: float) -> list[tuple[float, str, str]]:
    """The node's kernel and journald lines, oldest first."""
    from rackproof_sim.formats.kernellog import BOOT_NOISE
    links = [(name, iface) for name, iface in sorted(m["interfaces"].items())
             if iface.get("kind") in ("lane", "cx7") and iface.get("cabled", True)]
    found = []
    for after, source, text in BOOT_NOISE[m["platform"]]:
        if "{" not in text:
            found.append((boot + after, source, text))
            continue
        for k, (name, iface) in enumerate(links):
            found.append((boot + after + k * 0.01, source, text.format(lane=name, device=pci_address(name),
                                                                      port=iface.get("rdma_device", name))))
    found += [(line["at"], line["source"], line["text"]) for line in m.get("kernel_log", [])]
    return sorted(found, key=lambda entry: entry[0])


def run(tool: str, args: list[str]) -> int:
    lines = None
    for arg in args:
        if arg.startswith("--lines="):
            lines = int(arg.split("=", 1)[1])
        elif arg not in KNOWN:
            sys.stderr.write(f"journalctl: rackproof sim models only the suite's kernel log query, not {arg!r}\n")
            return 1
    m = model()
    from rackproof_sim.formats.kernellog import render_entries
    found = entries(m, _host_boot())
    sys.stdout.write(render_entries(m["node"], found[-lines:] if lines else found))
    return 0
