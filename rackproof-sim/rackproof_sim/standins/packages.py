"""dpkg-query -W [-f FORMAT] PKG..., dpkg-query -s PKG: modelled packages (nvidia-jetpack,
tensorrt, ... on a Thor; the DGX OS ones on a Spark) from the node's model, every other name
from the real dpkg database."""

from __future__ import annotations

import re
import subprocess
import sys

from . import model

REAL = "/usr/bin/dpkg-query"
DEFAULT_FORMAT = r"${binary:Package}\t${Version}\n"


def _expand(fmt: str, pkg: str, version: str) -> str:
    fields = {"Package": pkg, "binary:Package": pkg, "Version": version, "db:Status-Abbrev": "ii ",
              "Status": "install ok installed", "db:Status-Status": "installed", "Architecture": "arm64",
              "Source": pkg, "Maintainer": "NVIDIA Corporation"}

    def field(match: re.Match) -> str:
        name, width = match[1], match[2]
        value = fields.get(name, "")
        if width:
            w = int(width[1:])
            value = value.rjust(w) if w > 0 else value.ljust(-w)
        return value

    out = re.sub(r"\$\{([^};]+)(;-?\d+)?\}", field, fmt)
    return out.replace("\\t", "\t").replace("\\n", "\n").replace("\\\\", "\\")


def run(tool: str, args: list[str]) -> int:
    m = model()
    packages = m["release"].get("packages", {})
    fmt = None
    action = None
    names = []
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-W", "--show"):
            action = "show"
        elif a in ("-s", "--status"):
            action = "status"
        elif a in ("-f", "--showformat"):
            i += 1
            fmt = args[i] if i < len(args) else ""
        elif a.startswith("--showformat="):
            fmt = a.split("=", 1)[1]
        elif a.startswith("-f") and len(a) > 2:
            fmt = a[2:]
        elif a.startswith("-"):
            return subprocess.call([REAL, *args])
        else:
            names.append(a)
        i += 1
    if action is None or not names:
        return subprocess.call([REAL, *args])
    modelled = [n for n in names if n in packages]
    others = [n for n in names if n not in packages]
    code = 0
    if action == "show":
        for n in modelled:
            sys.stdout.write(_expand(fmt if fmt is not None else DEFAULT_FORMAT, n, packages[n]))
        sys.stdout.flush()
        if others:
            code = subprocess.call([REAL, "-W", *(["-f", fmt] if fmt is not None else []), *others])
        return code
    for n in modelled:
        sys.stdout.write(f"Package: {n}\nStatus: install ok installed\nPriority: standard\nSection: metapackages\n"
                         f"Maintainer: NVIDIA Corporation\nArchitecture: arm64\nVersion: {packages[n]}\n"
                         f"Description: {n}\n\n")
    sys.stdout.flush()
    if others:
        code = subprocess.call([REAL, "-s", *others])
    return code
