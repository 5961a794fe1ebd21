"""The waiver file (`--waivers FILE`): a failure someone with authority has accepted, until a date.

    [[waiver]]
    check = "test_lane_fec"          # a check's name, or a full test id (file::name[params])
    node = "thor-2"                  # optional: only where the test involves this node
    justification = "switch port 5 is replaced in CHG-1240; FEC is set there"
    approved_by = "J. Doe (network lead)"
    expires = 2027-01-31             # last day it is valid; after it, it counts as no waiver

A waived check still runs and is reported; its failure does not fail the run. A waiver covers a
failed verdict, not an error: a check that could not run may hide anything.
"""

from __future__ import annotations

import datetime as dt
import tomllib
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rackproof.inventory.userinput import read_regular_file

MAX_BYTES = 1 << 20     # a waiver file is a few kilobytes; a bigger file is the wrong file


class WaiverError(Exception):
    """A waiver file that cannot be used; the message has one line per problem."""


class Waiver(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    check: str = Field(min_length=1)
    node: str | None = None
    justification: str = Field(min_length=1)
    approved_by: str = Field(min_length=1)
    expires: dt.date

    def matches(self, test_id: str, nodes: list[str]) -> bool:
        name = test_id.rpartition("::")[2]
        if "[" in self.check or "::" in self.check:
            same = test_id == self.check or test_id.endswith("::" + self.check) or name == self.check
        else:
            same = name.partition("[")[0] == self.check
        return same and (self.node is None or self.node in nodes)

    def expired(self, today: dt.date) -> bool:
        return self.expires < today

    def as_dict(self) -> dict:
        return self.model_dump(mode="json")


class _File(BaseModel):
    model_config = ConfigDict(extra="forbid")

    waiver: list[Waiver] = []


def _path(loc: tuple) -> str:
    """waiver[0].expires, as the inventory names its fields."""
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".")


def load_waivers(path: str | Path) -> list[Waiver]:
    path = Path(path)
    try:
        raw = read_regular_file(path, MAX_BYTES)
        if len(raw) > MAX_BYTES:
            raise WaiverError(f"{path}: larger than {MAX_BYTES >> 20} MiB; a waiver file is a few kilobytes")
        data = tomllib.loads(raw.decode())
        return _File.model_validate(data).waiver
    except OSError as e:
        problems = [f"cannot read it: {e.strerror}"]
    except UnicodeDecodeError:
        problems = ["not UTF-8 text"]
    except tomllib.TOMLDecodeError as e:
        problems = [f"not valid TOML: {e}"]
    except ValidationError as e:
        problems = [f"{_path(err['loc'])}: {err['msg']}" for err in e.errors()]
    raise WaiverError("\n".join(f"{path}: {p}" for p in problems))


def matching(waivers: list[Waiver], test_id: str, nodes: list[str]) -> list[Waiver]:
    return [w for w in waivers if w.matches(test_id, nodes)]


def active(waivers: list[Waiver], test_id: str, nodes: list[str], today: dt.date) -> Waiver | None:
    """The waiver that accepts this test's failure today, if any."""
    return next((w for w in matching(waivers, test_id, nodes) if not w.expired(today)), None)


def statuses(waivers: list[Waiver], tests: list[dict], today: dt.date) -> list[dict]:
    """Each waiver with what it did in this run: applied (it waived a failure), expired (it
    counts as no waiver), not needed (its checks passed or were not judged) or unmatched."""
    out = []
    for waiver in waivers:
        hits = [t for t in tests if waiver.matches(t["id"], t["nodes"])]
        if waiver.expired(today):
            status = "expired"
        elif any(t["outcome"] == "waived" for t in hits):
            status = "applied"
        else:
            status = "not needed" if hits else "unmatched"
        out.append({**waiver.as_dict(), "status": status, "tests": [t["id"] for t in hits]})
    return out
