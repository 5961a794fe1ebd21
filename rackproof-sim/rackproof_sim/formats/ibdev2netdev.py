"""`ibdev2netdev` as MLNX OFED prints it (parsed by rackproof.probes.ibdev2netdev)."""

from __future__ import annotations

from rackproof.probes.ibdev2netdev import RdmaMap


def render_ibdev2netdev(maps: tuple[RdmaMap, ...]) -> str:
    return "".join(f"{m.device} port {m.port} ==> {m.netdev} ({'Up' if m.up else 'Down'})\n" for m in maps)
