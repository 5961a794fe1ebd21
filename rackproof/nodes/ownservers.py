"""The measurement servers (iperf3, ib_write_bw) this run has started and not yet stopped, by
node, port and pid: the only ones the closed-network check lets listen. Any other, a person's
own `iperf3 -s` on every address included, is a listener like any other.

Each server is an empty file `NODE@PORT@PID` in the run's private folder (rackproof.nodes.runfolder),
so that every xdist worker sees the servers the others started; without a folder (the library
used on its own) they are kept in memory. A server whose stop got no answer stays noted: it is
still the run's, and dies at the end of its bounded lifetime.

A server started ahead of its measurement (rackproof.measuring.traffic.ready: the next round's, while a
round measures) is also kept here, in this process, until a measurement takes it.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path

from rackproof.nodes.remote import Evidence


@dataclass(frozen=True)
class Ready:
    """A server started ahead, listening, that no measurement has taken yet."""
    port: int
    pid: int            # the pid to stop it by
    listener: int       # the pid that listens
    since: float        # time.monotonic() when it listened
    evidence: tuple[Evidence, ...]   # its start, for the measurement that takes it


class OwnServers:
    def __init__(self, directory: Path | None = None):
        self.directory = directory
        self._here: set[tuple[str, int, int]] = set()
        self._ready: dict[tuple[str, object], list[Ready]] = {}
        self._starting: set[tuple[str, int]] = set()
        self._lock = threading.Lock()

    def started(self, node: str, port: int, pid: int) -> None:
        if self.directory is None:
            self._here.add((node, port, pid))
            return
        self.directory.mkdir(mode=0o700, exist_ok=True)
        (self.directory / f"{node}@{port}@{pid}").touch(mode=0o600)

    def stopped(self, node: str, port: int, pid: int) -> None:
        if self.directory is None:
            self._here.discard((node, port, pid))
            return
        (self.directory / f"{node}@{port}@{pid}").unlink(missing_ok=True)

    def on(self, node: str) -> frozenset[tuple[int, int]]:
        """(port, pid) of the run's servers on `node` now."""
        if self.directory is None:
            here = list(self._here)     # a copy: other threads add and remove meanwhile
            return frozenset((port, pid) for name, port, pid in here if name == node)
        try:
            names = os.listdir(self.directory)
        except FileNotFoundError:
            return frozenset()
        found = set()
        for name in names:
            parts = name.split("@")
            if len(parts) == 3 and parts[0] == node and parts[1].isdigit() and parts[2].isdigit():
                found.add((int(parts[1]), int(parts[2])))
        return frozenset(found)

    def reserve(self, node: str, ports: list[int]) -> int | None:
        """The first of `ports` that no server of the run holds or is starting on `node` (in this
        process), kept for the start about to be tried there until `release`; None if none is."""
        with self._lock:
            busy = {port for port, _ in self.on(node)} | {port for name, port in self._starting if name == node}
            port = next((port for port in ports if port not in busy), None)
            if port is not None:
                self._starting.add((node, port))
            return port

    def release(self, node: str, port: int) -> None:
        """The start tried on `port` ended (its server noted as started, or it failed)."""
        with self._lock:
            self._starting.discard((node, port))

    def readied(self, node: str, what: object, server: Ready) -> None:
        """A server started ahead on `node`, for a measurement that asks for `what`."""
        with self._lock:
            self._ready.setdefault((node, what), []).append(server)

    def take(self, node: str, what: object) -> Ready | None:
        """The oldest server started ahead on `node` for `what`, no longer kept here; None if none."""
        with self._lock:
            waiting = self._ready.get((node, what))
            return waiting.pop(0) if waiting else None

    def untaken(self) -> list[tuple[str, Ready]]:
        """(node, server) of every server started ahead that no measurement took, no longer kept here."""
        with self._lock:
            found = [(node, server) for (node, _), waiting in self._ready.items() for server in waiting]
            self._ready.clear()
        return found
