"""How a failed check speaks: where, what was expected, what was found, and the usual cause."""

from __future__ import annotations

from .safetext import one_line


def mismatch(where: str, what: str, expected: object, found: object, cause: str = "") -> str:
    # a value read from a node stays on this line, whatever it holds
    text = f"{where}: {what}: expected {one_line(str(expected))}, found {one_line(str(found))}."
    return f"{text} Usual cause: {cause}" if cause else text


# Why a 25 GbE lane settles lower, from the Thor chapter and the samples' notes.
SLOW_LANE_CAUSES = {
    10000: ("the switch port (or its group of four ports) is still set to 10G, or this Thor's QSFP "
            "port was never set to 25G at flash time (ODMDATA mgbeN-speed-3; the port comes up at 10GbE by default)"),
}
