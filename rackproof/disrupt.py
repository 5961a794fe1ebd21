"""What a disruptive check does to a node, and always undoes.

Taking a bond member down is the one change the suite makes to a cluster (only with
--allow-disruptive). It is undone three ways: when the check ends, whatever happened; by a
dead man's switch on the node itself, so that a controller that dies or loses its SSH session
mid-check still leaves the lane up; and the check waits until the bond has taken it back.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from typing import Iterator

from .host import Host, ProbeFailed
from .probe import Probe
from .probes.bonding import BONDING
from .probes.ip import LINK_SET

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
