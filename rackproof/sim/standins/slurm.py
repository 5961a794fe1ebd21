"""sinfo and scontrol ping, minimal: a Slurm controller on the head node and every node idle.
(Step 9 of the chapter; the rack runs no real slurmctld.)"""

from __future__ import annotations

import sys

from . import model


def _nodes(m: dict) -> list[str]:
    return list(m.get("cluster_nodes") or [m["node"]])


def run(tool: str, args: list[str]) -> int:
    m = model()
    nodes = _nodes(m)
    head = nodes[0]
    if tool == "scontrol":
        if args[:1] == ["ping"]:
            print(f"Slurmctld(primary) at {head} is UP")
            return 0
        if args[:2] == ["show", "config"]:
            print(f"SLURM_VERSION = 23.11.4\nSlurmctldHost[0] = {head}\nClusterName = {m.get('cluster', 'cluster')}")
            return 0
        sys.stderr.write("scontrol: this simulated node answers `scontrol ping` and `scontrol show config`\n")
        return 1
    # sinfo
    if "-N" in args or "--Node" in args:
        print("NODELIST   NODES PARTITION STATE ")
        for n in nodes:
            print(f"{n:<10} {1:>5} thor*     idle  ")
        return 0
    compact = _compact(nodes)
    print("PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST")
    print(f"thor*        up 1-00:00:00 {len(nodes):>6}   idle {compact}")
    return 0


def _compact(nodes: list[str]) -> str:
    prefix = nodes[0].rsplit("-", 1)[0]
    nums = [n.rsplit("-", 1)[1] for n in nodes if n.rsplit("-", 1)[0] == prefix]
    if len(nums) == len(nodes) and all(x.isdigit() for x in nums):
        return f"{prefix}-[{nums[0]}-{nums[-1]}]" if len(nums) > 1 else nodes[0]
    return ",".join(nodes)
