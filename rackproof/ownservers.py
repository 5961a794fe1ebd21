"""The measurement servers (iperf3, ib_write_bw) this run has started and not yet stopped, by
node, port and pid: the only ones the closed-network check lets listen. Any other, a person's
own `iperf3 -s` on every address included, is a listener like any other.

Each server is an empty file `NODE@PORT@PID` in the run's private folder (rackproof.runfolder),
so that every xdist worker sees the servers the others started; without a folder (the library
used on its own) they are kept in memory. A server whose stop got no answer stays noted: it is
still the run's, and dies at the end of its bounded lifetime.
"""

from __future__ import annotations

import os
from pathlib import Path


class OwnServers:
    def __init__(self, directory: Path | None = None):
        self.directory = directory
        self._here: set[tuple[str, int, int]] = set()

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
            return frozenset((port, pid) for name, port, pid in self._here if name == node)
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
