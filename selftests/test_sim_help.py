"""`rackproof sim --help` and `rackproof sim fault --help` list every fault kind the simulator can
plant, and no kind it cannot: a person trying the suite finds each one there."""

import re
import subprocess
import sys

from rackproof_sim import faults
from rackproof_sim.cli import FAULT_HELP

# "  KIND ARGS   what it does": a kind, then its arguments or the column gap; section titles
# ("step 9 (thor5: ...):") are not kinds
KIND_LINE = re.compile(r"^  ([a-z][a-zA-Z0-9-]*)(?= [A-Z\[]|\s{2,}|$)", re.M)


def kinds_in(text: str) -> list[str]:
    return KIND_LINE.findall(text)


def test_the_help_lists_exactly_the_kinds_the_simulator_plants():
    listed = kinds_in(FAULT_HELP)
    assert len(listed) == len(set(listed)), "a kind listed twice"
    assert set(listed) == set(faults.FAULT_KINDS), (sorted(set(faults.FAULT_KINDS) - set(listed)), sorted(set(listed) - set(faults.FAULT_KINDS)))


def test_both_help_pages_show_the_list():
    for args in (["sim", "--help"], ["sim", "fault", "--help"]):
        shown = subprocess.run([sys.executable, "-m", "rackproof.cli", *args], capture_output=True, text=True,
                               timeout=60).stdout
        assert set(kinds_in(shown)) >= set(faults.FAULT_KINDS), args


def test_a_kind_left_out_of_the_help_is_found():
    assert "lldpd-missing" not in kinds_in(FAULT_HELP.replace("  lldpd-missing ", "  "))
