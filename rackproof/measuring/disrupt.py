"""What the disruptive phase does to a node, and always undoes (rackproof.measuring.plan, Phase.DISRUPTIVE).

Taking a bond member down is the one change the suite makes to a cluster (only when the
lane-loss check is selected: --allow-disruptive). It is undone three ways: when the measurement
ends, whatever happened; by a dead man's switch on the node itself, so that a controller that
dies or loses its SSH session mid-measurement still leaves the lane up; and the measurement
waits until the bond has taken it back.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

from rackproof.measuring import bondrate, traffic
from rackproof.nodes.host import Host, ProbeFailed
from rackproof.inventory.model import ClusterAtStep
from rackproof.probes.probe import Probe
from rackproof.probes.bonding import BONDING, BondInfo
from rackproof.probes.ip import LINK_SET
from rackproof.probes.iperf import IperfResult

SUDO_HINT = ("the login must be able to run `sudo -n ip link set dev LANE down|up` without a password "
             "(a sudoers.d rule for these two commands is enough)")

# setsid: the sleeper leads its own process group, so one kill ends it and its sleep.
DOWN_UNTIL = Probe("lane down, back by itself", "takes the lane down and leaves a sleeper on the node that brings it "
                   "up after a while even if the suite never comes back (a dead man's switch)",
                   "{down} && {{ setsid sh -c {restore} >/dev/null 2>&1 </dev/null & echo $!; }}", timeout=30,
                   repeatable=False, unseen="its own answer (the sleeper's pid it echoes): no tool's format")
BACK_UP = Probe("lane back up", "ends the sleeper and brings the lane up", "kill -- -{switch} 2>/dev/null; {up}",
                timeout=30, repeatable=False, unseen="only its exit status is read")


@contextmanager
def lane_down(host: Host, lane: str, restore_after: float) -> Iterator[None]:
    """`lane` has no link on `host` for the duration; it is up again afterwards, and at the
    latest `restore_after` seconds after it went down even if nobody comes back to say so."""
    up = LINK_SET.command(lane=lane, state="up")
    result = host.run(DOWN_UNTIL, down=LINK_SET.command(lane=lane, state="down"),
                      restore=f"sleep {restore_after:g}; {up}")
    if not result.ok:
        host.run(LINK_SET, lane=lane, state="up")  # in case it went down and only the switch failed to start
        raise ProbeFailed(host.name, result, f"could not take {lane} down: {SUDO_HINT}")
    switch = result.stdout.split()[-1]
    try:
        yield
    finally:
        restored = host.run(BACK_UP, switch=switch, up=up)
        if not restored.ok:
            raise ProbeFailed(host.name, restored, f"could not bring {lane} back up: it comes back by itself at "
                              f"the latest {restore_after:g} s after it went down")


def wait_rejoined(host: Host, bond: str, lane: str, seconds: float, poll: float = 1.0):
    """Poll /proc/net/bonding until `lane` is up in the bond's active aggregator; returns the
    last view read and whether it rejoined within `seconds` (LACP needs a few PDUs)."""
    deadline = time.monotonic() + seconds
    while True:
        view = host.read(BONDING, bond=bond)
        member = next((s for s in view.slaves if s.name == lane), None)
        if member and member.mii_status == "up" and member.aggregator_id == view.active_aggregator_id:
            return view, True
        if time.monotonic() >= deadline:
            return view, False
        time.sleep(poll)


@dataclass(frozen=True)
class LaneLoss:
    """A member of the sender's bond taken down under four streams and brought back."""
    lane: str                               # the member taken down
    degraded: IperfResult                   # four streams while it was down
    view: BondInfo                          # the sender's bond as last read while it came back
    rejoined: bool                          # back in the active aggregator within expect.bond_rejoin_seconds
    back: tuple[IperfResult, ...] | None    # four streams once it rejoined (bondrate.attempts); None: it did not


def lane_loss(sender: Host, receiver: Host, cluster: ClusterAtStep) -> LaneLoss:
    """The sender's second bond member down for four iperf3 streams to the receiver, then up:
    its rejoining, and four streams again once it is back."""
    bond = sender.spec.bond
    lane, seconds = bond.lanes[1], cluster.expect.iperf_seconds
    with lane_down(sender, lane, restore_after=seconds + 60):
        degraded = traffic.iperf3(sender, receiver, receiver.spec.ip, streams=4, seconds=seconds)
    view, rejoined = wait_rejoined(sender, bond.name, lane, cluster.expect.bond_rejoin_seconds)
    return LaneLoss(lane, degraded, view, rejoined, bondrate.attempts(sender, receiver, cluster) if rejoined else None)
