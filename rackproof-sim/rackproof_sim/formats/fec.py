"""`ethtool [-I] --show-fec IFACE` as ethtool prints it (parsed by rackproof.probes.fec)."""

from __future__ import annotations

from rackproof.probes.fec import FecInfo


def render_fec(info: FecInfo) -> str:
    """`ethtool [-I] --show-fec IFACE` as current (netlink) ethtool prints it."""
    lines = [f"FEC parameters for {info.interface}:"]
    lines.append("Supported/Configured FEC encodings: " + " ".join(info.configured))
    lines.append("Active FEC encoding: " + " ".join(info.active))
    totals = zip(("corrected_blocks", "uncorrectable_blocks"), (info.corrected_blocks, info.uncorrectable_blocks))
    counters = [(key, value) for key, value in totals if value is not None]
    if counters:
        lines.append("Statistics:")
        lines += [f"  {key}: {value}" for key, value in counters]
    return "\n".join(lines) + "\n"
