"""`systemctl show` of user units as systemd prints it (parsed by rackproof.probes.systemd)."""

from __future__ import annotations

from rackproof.probes.systemd import UserUnit


def render_systemctl_show(units: list[UserUnit]) -> str:
    """As systemctl prints the four properties: the service's own (RuntimeMaxUSec) before the
    unit's (Id, ActiveState, Transient)."""
    blocks = [f"RuntimeMaxUSec={u.runtime_max}\nId={u.id}\nActiveState={u.active_state}\n"
              f"Transient={'yes' if u.transient else 'no'}\n" for u in units]
    return "\n".join(blocks)
