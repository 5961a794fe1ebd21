"""A measurement between two nodes, declared once in its tool's module: a server the receiver
runs on a free port, the client the sender runs against it, and the tool both are (its package,
its platforms). rackproof.measuring.traffic runs any of them (servers started and always stopped, clients
on the sender), rackproof.nodes.prerequisites learns the tool from it, and the closed-network check
the process names of the run's own servers: a new measurement between nodes is its probe
module's declaration, its plan entry and its judge.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from functools import cache

from rackproof.probes.probe import Probe


@dataclass(frozen=True)
class Between:
    tool: str                      # the program server and client run: the server's process name too
    fix: str                       # what installs it (JetPack, DGX OS and Ubuntu alike)
    server: Probe                  # on the receiver, in the background; its template takes {port}
    client: Probe                  # on the sender, against that {port}; its parser reads the result
    together: bool = True          # several runs between two nodes at once (a port's links summed);
                                   # False: one after the other, so that no run loads another's path
    platforms: tuple[str, ...] = ("thor", "spark")
    minimum: tuple[int, ...] | None = None   # the oldest version whose options the probes use
    asked: str = "--version"       # what the survey runs it with to see it run (prerequisites.Tool)


@cache
def declared() -> tuple[Between, ...]:
    """Every measurement between nodes that a tool's module declares (found, not listed)."""
    from rackproof import probes
    modules = (importlib.import_module(f"{probes.__name__}.{m.name}") for m in pkgutil.iter_modules(probes.__path__))
    return tuple(dict.fromkeys(v for m in modules for v in vars(m).values() if isinstance(v, Between)))
