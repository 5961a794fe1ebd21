"""`--record DIR` and `--anonymise`: where the run's answers are recorded, and the masked copy a
site sends with a bug report (rackproof.ticket.anonymise), written by the controller when the run ends.

With --anonymise nothing unmasked reaches DIR: the answers are recorded in the run's private
folder (its xdist workers' too) and only their masked copy is written to DIR."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from rackproof.ticket.anonymise import AnonymiseError, Anonymiser, anonymise_recording
from rackproof.inventory.model import printable
from .options import INVENTORY, inventory_file
from .params import RUN_FOLDER


def check(config: pytest.Config) -> None:
    """--anonymise asks for a new --record folder."""
    if not config.getoption("anonymise") or hasattr(config, "workerinput"):
        return
    record = config.getoption("record")
    if not record:
        raise pytest.UsageError("--anonymise masks a recording: give --record DIR too (a new folder)")
    if Path(record).exists():
        raise pytest.UsageError(f"--record {record}: already there; --anonymise writes a new folder")
    if config.getoption("replay"):
        raise pytest.UsageError("--anonymise records a live run: a --replay run records nothing")


def folder(config: pytest.Config) -> Path | None:
    """Where this process records the run's answers (None: not recording)."""
    if not config.getoption("record"):
        return None
    if config.getoption("anonymise"):
        return config.stash[RUN_FOLDER] / "recording"
    return Path(config.getoption("record"))


def write_anonymised(config: pytest.Config) -> None:
    """The controller, at the end: the masked copy into --record DIR; a problem is one line."""
    if (not config.getoption("anonymise") or hasattr(config, "workerinput") or INVENTORY not in config.stash
            or RUN_FOLDER not in config.stash):
        return
    recorded = config.stash[RUN_FOLDER] / "recording"
    target = config.getoption("record")
    try:
        recorded.mkdir(exist_ok=True)   # a run that asked nothing still leaves its inventory
        inventory_text = inventory_file(config).read_text(encoding="utf-8")
        nodes, answers = anonymise_recording(recorded, target, Anonymiser(config.stash[INVENTORY]), inventory_text)
    except (AnonymiseError, OSError) as e:
        print(f"rackproof: --anonymise: no recording written to {printable(target)}: {printable(str(e))}",
              file=sys.stderr)
        return
    print(f"rackproof: {printable(target)}: the run's {answers} answers from {nodes} nodes, names, addresses, MACs, "
          "serial numbers and keys masked", file=sys.stderr)
