"""How a failed check speaks: where, what was expected, what was found, and the usual cause."""

from __future__ import annotations


def mismatch(where: str, what: str, expected: object, found: object, cause: str = "") -> str:
    text = f"{where}: {what}: expected {expected}, found {found}."
    return f"{text} Usual cause: {cause}" if cause else text


# Why a 25 GbE lane settles lower, from the Thor chapter and the samples' notes.
SLOW_LANE_CAUSES = {
    10000: ("the switch port (or its group of four ports) is still set to 10G, or this Thor's QSFP "
            "port was never set to 25G at flash time (ODMDATA mgbeN-speed-3; the port comes up at 10GbE by default)"),
}
