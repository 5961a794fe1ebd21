"""Stand-ins for the tools whose answers a namespace cannot give: they read the node's model
file (RACKPROOF_SIM_MODEL, baked into each wrapper in the node's /usr/local/bin) and the real
state of the node's links (/sys/class/net), and print what the real tool prints.

Each prints with its tool's renderer in rackproof_sim.formats, whose tests parse what it prints
with the product's parser (rackproof.probes: pure functions over the real tools' formats) and
compare it with the real samples.

Run as `python3 -m rackproof_sim.standins TOOL ARGS...`; `STANDINS` lists them.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from pathlib import Path

STANDINS = {
    "ethtool": "ethtool",
    "ibdev2netdev": "rdma",
    "ib_write_bw": "rdma",
    "ib_write_lat": "rdma",
    "nvidia-smi": "gpu",
    "nvpmodel": "gpu",
    "jetson_clocks": "gpu",
    "dpkg-query": "packages",
    "mpirun": "nccl",
    "all_gather_perf": "nccl",
    "all_reduce_perf": "nccl",
    "systemctl": "sharing",
    "chronyc": "sharing",
    "docker": "container",
    "nvidia-ctk": "container",
    # the RDMA devices' sysfs files (/sys/class/infiniband); any other grep is the real one
    "grep": "infiniband",
    "uname": "release",
}

# the tools a measurement runs: they run for seconds, are signalled and listed as processes of
# their own, so each runs as one (the others answer from the node's stand-in server: .server)
MEASURING = frozenset({"ib_write_bw", "ib_write_lat", "mpirun", "all_gather_perf", "all_reduce_perf"})
THOR_TOOLS = ["ethtool", "nvidia-smi", "nvpmodel", "jetson_clocks", "dpkg-query", "systemctl", "chronyc", "uname"]
SPARK_TOOLS = ["ethtool", "ibdev2netdev", "ib_write_bw", "ib_write_lat", "nvidia-smi", "dpkg-query", "mpirun",
               "all_gather_perf", "all_reduce_perf", "chronyc", "docker", "nvidia-ctk", "uname", "grep"]

# the kernel's journal (issue 43): a node's own, never the host's (the namespaces share its kernel)
STANDINS["journalctl"] = "kernellog"
THOR_TOOLS.append("journalctl")
SPARK_TOOLS.append("journalctl")


def model() -> dict:
    path = os.environ.get("RACKPROOF_SIM_MODEL")
    if not path:
        raise SystemExit("rackproof sim stand-in: RACKPROOF_SIM_MODEL is not set")
    with open(path) as f:
        return json.load(f)


def sysfs(iface: str, attr: str) -> str | None:
    try:
        return Path(f"/sys/class/net/{iface}/{attr}").read_text().strip()
    except OSError:
        return None


def exists(iface: str) -> bool:
    return Path(f"/sys/class/net/{iface}").exists()


def link_up(iface: str) -> bool:
    """The real link state: administratively up and carrier (operstate up)."""
    return sysfs(iface, "operstate") == "up"


def ipv4_of(iface: str) -> str | None:
    """The first IPv4 address on iface (from `ip -j addr`)."""
    import subprocess
    try:
        out = subprocess.run(["ip", "-j", "-4", "addr", "show", "dev", iface], capture_output=True,
                             text=True, timeout=5).stdout
        for link in json.loads(out or "[]"):
            for info in link.get("addr_info", []):
                return info.get("local")
    except (OSError, ValueError, subprocess.TimeoutExpired):
        pass
    return None


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] not in STANDINS:
        sys.stderr.write(f"usage: python3 -m rackproof_sim.standins {{{','.join(STANDINS)}}} ARGS...\n")
        raise SystemExit(2)
    tool, args = argv[0], argv[1:]
    module = importlib.import_module(f"{__name__}.{STANDINS[tool]}")
    try:
        code = module.run(tool, args)
    except BrokenPipeError:
        code = 0
    sys.stdout.flush()
    raise SystemExit(code or 0)
