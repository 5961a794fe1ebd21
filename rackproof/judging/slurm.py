"""Why a node's Slurm checks fail, read from munge: a credential made on the node that the
controller cannot decode is a finding of its own (another key, clocks apart, munged stopped),
and it is also why slurmctld refuses the node's requests (`scontrol ping` says DOWN) and the
node's slurmd refuses the controller's job launches, however well both daemons run. The
credential is decoded over ssh by rackproof.measuring.munge."""

from __future__ import annotations

from rackproof.judging.failure import Failure
from rackproof.probes.chrony import Tracking
from rackproof.probes.slurm import MUNGE_TTL_S, MungeDecode

USUAL_MUNGE_CAUSE = ("munge.key differs between the nodes (copy the controller's /etc/munge/munge.key, mode 400, "
                     "owner munge), or munged stopped, or the clocks disagree")


def munge_finding(node: str, controller: str, decoded: MungeDecode) -> str | None:
    """What unmunge's error says about the two nodes; None when the credential decoded, or when
    munge's words are none whose meaning is known here."""
    said = f"(unmunge: {decoded.error})"
    if decoded.ok:
        return None
    if decoded.error == "Invalid credential":
        return (f"{node}'s munge key differs from the controller's {said}: copy {controller}'s "
                f"/etc/munge/munge.key to {node} (mode 400, owner munge) and restart munged there")
    if decoded.error in ("Expired credential", "Rewound credential"):
        return (f"the clocks of {node} and {controller} are more than munge's {MUNGE_TTL_S} s apart {said}: "
                "see test_clock_within_munges_limit")
    if decoded.error.startswith("Failed to access"):
        return f"munged is not running on {controller} {said}"
    if decoded.error == "No credential specified":
        return f"munge made no credential on {node}: munged is not running there {said}"
    return None


def clock_within_munges_limit(node: str, tracking: Tracking, local_intended: bool) -> None:
    """The Failure naming the node unless chrony is synchronised to a time server (to the node's own
    clock only where the inventory says so: time_source = "local") and within munge's credential
    lifetime of it. A node following its local reference reads offset 0 against itself: never a pass."""
    local = tracking.local_reference and not local_intended
    if local or not tracking.synchronised or abs(tracking.offset_s) >= MUNGE_TTL_S:
        raise Failure(node, "clock against NTP time (chronyc tracking)",
                      f"synchronised{' (its local reference allowed)' if local_intended else ' to a time server'}, within "
                      f"{MUNGE_TTL_S} s (munge's credential lifetime)",
                      f"{tracking.offset_s:+.3f} s, leap status {tracking.leap_status}, reference {tracking.reference}"
                      + (f", stratum {tracking.stratum}" if tracking.stratum is not None else ""),
                      ("not synchronised to a time server: chrony follows the node's own clock (Reference ID "
                       "7F7F0101), its servers unreachable (`chronyc sources`: ^?); fix the route or the server, or "
                       "set time_source = \"local\" if the cluster has none on purpose" if local else
                       "chrony has no reachable time source" if not tracking.synchronised else
                       "the clock was set by hand or chrony follows another source than the other nodes "
                       "(`chronyc sources`; `sudo chronyc makestep`)")
                      + ": this node's munge credentials expire or are rewound elsewhere, and Slurm refuses its jobs")
