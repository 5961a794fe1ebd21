"""What lldpd on a node heard on each of its interfaces, read once per node for the cabling check
(rackproof.judging.cabling judges each lane and CX7 interface against cluster.toml)."""

from __future__ import annotations

from rackproof.judging.cabling import WHAT
from rackproof.judging.failure import NotVerified
from rackproof.nodes.host import Host, ProbeFailed
from rackproof.probes.lldp import NEIGHBOURS, Neighbour, newest_by_interface, unavailable


def heard(host: Host, login: str) -> dict[str, Neighbour]:
    """interface -> the newest announcement lldpd heard on it; NotVerified when the node cannot
    tell (no lldpd, or `login` may not ask it)."""
    try:
        neighbours = host.read(NEIGHBOURS)
    except ProbeFailed as e:
        reason = unavailable(e.result.exit_status, e.result.stdout + e.result.stderr, login)
        if reason is None:
            raise
        raise NotVerified(host.name, WHAT, *reason) from None
    return newest_by_interface(neighbours)
