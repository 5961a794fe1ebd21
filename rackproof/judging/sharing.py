"""The chapter's rules for sharing the shelf (step 9) as data the checks judge by: whole-node
slices from a calendar, a time limit on every job, Slurm when the calendar is not enough, and
a cluster network that stays closed (the Spark guide's security notes).
"""

from __future__ import annotations

import datetime
import time
from dataclasses import dataclass
from itertools import combinations
from typing import Callable

from rackproof.inventory.model import ClusterAtStep, Reservation
from rackproof.probes.accounts import PASSWD
from rackproof.probes.sockets import Listener, scope
from rackproof.probes.systemd import UNLIMITED, UserUnit

# what may listen on a cluster address or on every address without being named in
# [closed_network] allow: sshd, Slurm's daemons and srun's I/O port during a job. The suite's
# own measurement servers (the tools of probes._between's declarations) are allowed by port and pid,
# as this run started them (ownservers).
ALWAYS_ALLOWED = ("sshd", "slurmctld", "slurmd", "slurmstepd", "srun")
# A listener is judged as it is seen again this much later: a measurement server another of the
# run's processes has just started is noted a moment after it listens, a listener ss shows
# without its process opened its socket between ss's look at /proc and its look at the sockets
# (the suite's own srun from the Slurm controller opens four on every address for a moment), and
# a client holds a socket on every address while it asks (the suite's own `getent hosts`, its
# DNS query on 0.0.0.0/udp, caught once on a simulated thor-1).
SETTLE_S = 1.0


@dataclass(frozen=True)
class Overlap:
    first: Reservation
    second: Reservation

    def __str__(self) -> str:
        return (f"{self.first.person} ({_span(self.first)}) and {self.second.person} ({_span(self.second)}) "
                f"both hold {self.first.node}")


def _span(r: Reservation) -> str:
    return f"{r.start.isoformat(timespec='minutes')} to {r.end.isoformat(timespec='minutes')}"


def overlaps(reservations: list[Reservation]) -> list[Overlap]:
    """Every two reservations of one node whose windows share a moment (an end at another's
    start is a hand-over, not an overlap)."""
    by_node: dict[str, list[Reservation]] = {}
    for r in reservations:
        by_node.setdefault(r.node, []).append(r)
    found = []
    for node_reservations in by_node.values():
        ordered = sorted(node_reservations, key=lambda r: r.start)
        for a, b in combinations(ordered, 2):
            if b.start < a.end:
                found.append(Overlap(a, b))
    return found


def holding_now(reservations: list[Reservation], node: str, now: datetime.datetime) -> list[Reservation]:
    """The reservations whose window is open on the node at `now`: one, or none; more than one
    is an overlap, which test_reservations_do_not_overlap reports."""
    return [r for r in reservations if r.node == node and r.start <= now < r.end]


def without_time_limit(units: tuple[UserUnit, ...]) -> list[str]:
    """The running jobs (systemd-run's transient services) that nothing will stop."""
    return [u.id for u in units if u.running_job and u.runtime_max == UNLIMITED]


def allowed_programs(cluster: ClusterAtStep) -> dict[str, set[int] | None]:
    """program -> the ports it may listen on openly (None: any port)."""
    allowed: dict[str, set[int] | None] = {name: None for name in ALWAYS_ALLOWED}
    for rule in cluster.closed_network.allow:
        if rule.port is None or allowed.get(rule.command, set()) is None:
            allowed[rule.command] = None
        else:
            allowed.setdefault(rule.command, set()).add(rule.port)
    return allowed


def listening_openly(read: Callable[[], tuple[Listener, ...]], own: Callable[[], frozenset[tuple[int, int]]],
                     cluster_addresses: set[str], engine_ports: set[int],
                     allowed: dict[str, set[int] | None]) -> list[Listener]:
    """The unexpected listeners (below) that read() lists, the run's own servers (port, pid) of
    own() left out, each counted only as read() lists it again SETTLE_S later (a short-lived
    process has ended, and the run's own server is noted, by then). A listener still there is
    judged as the second look shows it, without a process if ss still names none."""
    found = unexpected_listeners(read(), cluster_addresses, engine_ports, allowed, own())
    if not found:
        return found
    time.sleep(SETTLE_S)
    seen = {_where(listener) for listener in found}
    return [listener for listener in unexpected_listeners(read(), cluster_addresses, engine_ports, allowed, own())
            if _where(listener) in seen]


def _where(listener: Listener) -> tuple[str, str, int]:
    return listener.proto, listener.local_address, listener.port


def unexpected_listeners(listeners: tuple[Listener, ...], cluster_addresses: set[str], engine_ports: set[int],
                         allowed: dict[str, set[int] | None],
                         own: frozenset[tuple[int, int]] = frozenset()) -> list[Listener]:
    """Listeners on every address or on a cluster address that no rule allows and that are not
    one of the run's own servers (port, pid). An engine's or the agent's own port is allowed on
    the cluster address (the guide wants engines there)."""
    unexpected = []
    for listener in listeners:
        where = scope(listener.local_address)
        if where == "loopback" or (where == "specific" and listener.local_address not in cluster_addresses):
            continue
        if (listener.port, listener.pid) in own:
            continue
        ports = allowed.get(listener.process or "", set())
        if ports is None or listener.port in ports:
            continue
        if where == "specific" and listener.port in engine_ports:
            continue
        unexpected.append(listener)
    return unexpected


def with_logins(host, holders: list[str]) -> dict:
    """login -> its account on `host` (a rackproof.nodes.host.Host), for the slice holders that have a
    login there (a missing one is test_holders_have_logins' failure, not every other check's)."""
    return {login: account for login, account in host.read_each(PASSWD, holders).items() if account}
