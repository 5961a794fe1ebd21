"""Figures a check measured, and their verdict against what the inventory expects.

In the manner of ReFrame's performance references, kept simpler: an Expectation is a
hard floor (below it: failed), optionally a target above it (between them: warned),
for figures where higher is better; `better="lower"` flips both (latency, time to first token).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Literal

Verdict = Literal["passed", "warned", "failed"]


class NotAFigure(ValueError):
    """A value or a bound that is not a finite number: comparing it could never fail
    (`nan < floor` is false, every value is under `inf`), so it is refused, not judged."""

    def __init__(self, what: str, value: object):
        self.what, self.value = what, value
        super().__init__(f"{what} is {value!r}, not a finite number: nothing can be judged against it")


def _finite(what: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise NotAFigure(what, value)
    return float(value)


@dataclass(frozen=True)
class Expectation:
    floor: float
    target: float | None = None
    better: Literal["higher", "lower"] = "higher"

    def __post_init__(self):
        # a floor of 0 or below can never fail a rate, a duration or a ratio: refused like nan
        if _finite("the floor", self.floor) <= 0:
            raise NotAFigure("the floor", self.floor)
        if self.target is not None and _finite("the target", self.target) <= 0:
            raise NotAFigure("the target", self.target)

    def verdict(self, value: float) -> Verdict:
        sign = 1 if self.better == "higher" else -1
        if sign * value < sign * self.floor:
            return "failed"
        if self.target is not None and sign * value < sign * self.target:
            return "warned"
        return "passed"

    def describe(self, unit: str) -> str:
        word = "at least" if self.better == "higher" else "at most"
        text = f"{word} {self.floor:g} {unit}"
        return text + (f" (target {self.target:g} {unit})" if self.target is not None else "")


@dataclass(frozen=True)
class Measurement:
    kind: str          # the group it is charted in: "lane rate", "bonded rate", "RoCE", "tokens/s", ...
    subject: str       # what was measured: "thor-1 -> thor-2", "thor-3 mgbe0_0", "qwen3-8b via agent"
    value: float
    unit: str
    expectation: Expectation | None = None   # None: recorded for the report, not judged
    reference: str = ""  # its reference key ("lane.rate"): with the subject, what the run history keys it by

    def __post_init__(self):
        _finite(f"{self.kind} of {self.subject}", self.value)

    @property
    def verdict(self) -> Verdict | None:
        return self.expectation.verdict(self.value) if self.expectation else None

    def as_dict(self) -> dict:
        data = asdict(self)
        data["verdict"] = self.verdict
        return data

    def __str__(self) -> str:
        text = f"{self.subject}: {self.value:g} {self.unit}"
        return text + (f" (expected {self.expectation.describe(self.unit)})" if self.expectation else "")
