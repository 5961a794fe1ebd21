"""What a namespace cannot have for step 9: a slice holder's user service manager
(`systemctl --user -M LOGIN@ show ...`, its transient units from the node's model) and
chrony's view of the clock (`chronyc tracking`, the modelled offset), in the real formats."""

from __future__ import annotations

import sys

from . import model
from rackproof_sim.formats.chrony import render_tracking
from rackproof.probes.systemd import UNLIMITED, UserUnit
from rackproof_sim.formats.systemd import render_systemctl_show

REFERENCE = "C0A84D01 (192.168.77.1)"   # the house network's time server


def run(tool: str, args: list[str]) -> int:
    m = model()
    if tool == "chronyc":
        if args != ["tracking"]:
            sys.stderr.write("rackproof sim stand-in: only `chronyc tracking` is modelled\n")
            return 1
        sys.stdout.write(render_tracking(m["clock_offset_s"], REFERENCE))
        return 0
    machine = args[args.index("-M") + 1] if "-M" in args[:-1] else ""
    if "--user" not in args or "show" not in args or not machine.endswith("@"):
        sys.stderr.write("rackproof sim stand-in: only `systemctl --user -M LOGIN@ show ...` is modelled\n")
        return 1
    jobs = m.get("user_jobs", {}).get(machine[:-1], [])
    sys.stdout.write(render_systemctl_show([UserUnit(j["unit"], True, "active", j["runtime_max"] or UNLIMITED)
                                            for j in jobs]))
    return 0
