"""`ethtool -S IFACE` as ethtool prints it (parsed by rackproof.probes.counters)."""

from __future__ import annotations


def render_ethtool_stats(counters: dict[str, int]) -> str:
    """`ethtool -S IFACE` as ethtool prints it (five spaces, name, colon, value)."""
    return "NIC statistics:\n" + "".join(f"     {name}: {value}\n" for name, value in counters.items())
