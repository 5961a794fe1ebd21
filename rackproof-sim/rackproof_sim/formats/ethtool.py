"""`ethtool IFACE` as ethtool prints it (parsed by rackproof.probes.ethtool)."""

from __future__ import annotations

from rackproof.probes.ethtool import LinkInfo


def render_ethtool(info: LinkInfo) -> str:
    """`ethtool IFACE` as the netlink-era tool prints it: tab-indented, real line order.

    Lines for fields that are None are left out (except Speed/Duplex, printed as Unknown!),
    so parse_ethtool(render_ethtool(info), info.interface) == info.
    """
    lines = [f"Settings for {info.interface}:"]
    lines += _render_link_modes("Supported link modes:", info.supported_link_modes)
    lines += _render_link_modes("Advertised link modes:", info.advertised_link_modes)
    lines.append(f"\tSpeed: {info.speed_mbps}Mb/s" if info.speed_mbps is not None else "\tSpeed: Unknown!")
    if info.lanes is not None:
        lines.append(f"\tLanes: {info.lanes}")
    lines.append(f"\tDuplex: {info.duplex}" if info.duplex is not None else "\tDuplex: Unknown! (255)")
    if info.auto_negotiation is not None:
        lines.append(f"\tAuto-negotiation: {'on' if info.auto_negotiation else 'off'}")
    if info.port is not None:
        lines.append(f"\tPort: {info.port}")
    if info.link_detected is not None:
        lines.append(f"\tLink detected: {'yes' if info.link_detected else 'no'}")
    return "\n".join(lines) + "\n"


def _render_link_modes(label: str, modes: tuple[str, ...]) -> list[str]:
    # ethtool pads the label to 24 columns and lines up one mode per continuation line under it.
    column = 24
    first, *rest = modes or ("Not reported",)
    return [f"\t{label:<{column}}{first}"] + [f"\t{'':<{column}}{mode}" for mode in rest]
