"""uname: a namespace shares the machine's kernel, so `uname -r` prints the node's modelled release
(a Thor's L4T kernel, a Spark's DGX OS kernel); anything else is the real uname's answer."""

from __future__ import annotations

import subprocess
import sys

from . import model
from rackproof_sim.formats.release import render_kernel

REAL = "/usr/bin/uname"


def run(tool: str, args: list[str]) -> int:
    if args != ["-r"]:
        return subprocess.call([REAL, *args])
    sys.stdout.write(render_kernel(model()["release"]["kernel"]))
    return 0
