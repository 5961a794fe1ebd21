"""grep over the RDMA devices' sysfs files (/sys/class/infiniband), which a namespace cannot have:
their PCIe link and GID table come from the node's model (formats/rdmasysfs.py), the addresses
in the GID table from the real interface. Any other grep is the real one, as it was called.

What the probe asks (rackproof.probes.rdmasysfs) is answered as GNU grep does: -s, -H, -v, -x
and a pattern, the files' globs expanded here (the shell found no such files), "PATH:LINE" for
each line selected, exit 2 when a file could not be read (an empty slot's type: EINVAL), else 0
when a line was selected, 1 when none.
"""

from __future__ import annotations

import fnmatch
import re
import subprocess
import sys

from . import ipv4_of, model

ROOT = "/sys/class/infiniband/"
GREP = "/usr/bin/grep"


def run(tool: str, args: list[str]) -> int:
    if not any(a.startswith(ROOT) for a in args):
        return subprocess.run([GREP, *args]).returncode
    flags, rest = set(), []
    for a in args:
        if a.startswith("-") and not rest and len(a) > 1 and set(a[1:]) <= set("sHvx"):
            flags |= set(a[1:])
        else:
            rest.append(a)
    if len(rest) < 2:
        sys.stderr.write("Usage: grep [OPTION]... PATTERNS [FILE]...\n")
        return 2
    pattern, paths = re.compile(rest[0]), rest[1:]
    tree = _tree(model())
    selected, failed = False, False
    for path in [p for asked in paths for p in (sorted(fnmatch.filter(tree, asked), key=_natural) or [asked])]:
        content = tree.get(path)
        if content is None:
            failed = True
            if "s" not in flags:
                why = "Invalid argument" if path in tree else "No such file or directory"
                sys.stderr.write(f"grep: {path}: {why}\n")
            continue
        matched = bool(pattern.fullmatch(content) if "x" in flags else pattern.search(content))
        if matched != ("v" in flags):
            selected = True
            sys.stdout.write(f"{path}:{content}\n" if "H" in flags or len(paths) > 1 else f"{content}\n")
    return 2 if failed else 0 if selected else 1


def _natural(path: str) -> tuple:
    head, _, last = path.rpartition("/")
    return (head, int(last)) if last.isdigit() else (head, -1)


def _tree(m: dict) -> dict[str, str | None]:
    """Every CX7 function's files, from the model (pcie_width, gid_ipv6_first: what faults change)."""
    from rackproof.probes.rdmasysfs import PcieLink
    from rackproof_sim.formats.rdmasysfs import files
    tree: dict[str, str | None] = {}
    for name, spec in m["interfaces"].items():
        if spec.get("kind") != "cx7":
            continue
        pcie = PcieLink("32.0 GT/s PCIe", spec.get("pcie_width", 4), "32.0 GT/s PCIe", 4)
        address = ipv4_of(name)
        addresses = [*spec.get("gid_ipv6_first", []), *([address] if address else [])]
        tree.update(files(spec["rdma_device"], name, pcie, spec["mac"], addresses))
    return tree
