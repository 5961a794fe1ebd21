"""A failed check as one record: where (node, interface, pair, port, cable), what, what was
expected and found, and the cause (the usual one, or the one the evidence shows). Tests raise
it; the plugin and the report read it field by field; its text is rendered here, once."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from rackproof.inventory.figures import Measurement
from rackproof.probes.safetext import one_line


@dataclass(eq=False)
class Failure(AssertionError):
    where: str                     # "" for the cluster as a whole
    what: str
    expected: str | None = None    # with `found`: the two sides of a comparison
    found: str | None = None
    cause: str = ""
    seen: bool = False             # the cause was read from this run's evidence, not the usual one
    details: str = ""              # lines shown under the message (a table of every node's value)

    def __post_init__(self):
        super().__init__(str(self))

    @property
    def statement(self) -> str:
        """Where, what, expected and found: the message without its cause."""
        text = f"{self.where}: {self.what}" if self.where else self.what
        if self.expected is not None:
            # a value read from a node stays on this line, whatever it holds
            text += f": expected {one_line(self.expected)}, found {one_line(str(self.found))}"
        if self.expected is not None or self.cause:
            text = text if text.endswith(".") else text + "."
        return text

    @property
    def hint(self) -> str:
        return f"{'Cause' if self.seen else 'Usual cause'}: {self.cause}" if self.cause else ""

    def __str__(self) -> str:
        text = " ".join(part for part in (self.statement, self.hint) if part)
        return f"{text}\n{self.details}" if self.details else text

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(eq=False)
class NotVerified(Exception):
    """A check that could not be made for a reason that is no fault of the cluster (the node runs
    no lldpd): neither passed nor failed. The report lists it in its scope with how to make it,
    and the verdict never says more than was proven."""
    where: str
    what: str                      # "cabling against cluster.toml (LLDP)"
    why: str                       # "lldpd is not running"
    how: str                       # what makes the check possible

    def __post_init__(self):
        super().__init__(str(self))

    def __str__(self) -> str:
        return f"{self.where}: {self.what} not verified: {self.why}. To verify it: {self.how}"


def judge(m: Measurement, where: str, cause: str, *, also: str = "", seen: bool = False) -> Measurement:
    """The measurement, if its figure met its reference; else the Failure naming both
    (`also`: what else the run showed, after the figure)."""
    if m.verdict == "failed":
        found = f"{m.value:g} {m.unit}" + (f" ({also})" if also else "")
        raise Failure(where, m.kind, m.expectation.describe(m.unit), found, cause, seen)
    return m


def together(failures: list[Failure | None]) -> Failure | None:
    """Several comparisons of one check as one failure (None when none failed)."""
    found = [f for f in failures if f]
    if len(found) <= 1:
        return found[0] if found else None
    return Failure("", "\n".join(map(str, found)))


# Why a 25 GbE lane settles lower, from the Thor chapter and the samples' notes.
SLOW_LANE_CAUSES = {
    10000: ("the switch port (or its group of four ports) is still set to 10G, or this Thor's QSFP "
            "port was never set to 25G at flash time (ODMDATA mgbeN-speed-3; the port comes up at 10GbE by default)"),
}
