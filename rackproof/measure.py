"""Figures a check measured, and their verdict against what the inventory expects.

In the manner of ReFrame's performance references, kept simpler: an Expectation is a
hard floor (below it: failed), optionally a target above it (between them: warned),
for figures where higher is better; `better="lower"` flips both (latency, time to first token).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Literal

Verdict = Literal["passed", "warned", "failed"]


@dataclass(frozen=True)
class Expectation:
    floor: float
    target: float | None = None
    better: Literal["higher", "lower"] = "higher"

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
