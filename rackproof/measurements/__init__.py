"""The measurement plan's entries (rackproof.measuring.plan), one module per subject; a check imports the
entry it judges and asks for its result with `planned(ENTRY)`. The plugin runs the entries the
selected checks name (rackproof.checks.entries_named), in ALL's order.

    nodes     what each node is: its name, addresses, routes, resolver, software, settings
    configuration  what each node runs below its packages: kernel, system firmware (issue 43)
    holders   the slice holders' accounts, processes, rights, homes and jobs
    jobs      Slurm: each node's controllers, state and a real job, the partition, munge, clock
    lanes     the bonded lanes: link, cabling, FEC, bond state, throughput, counters under load
    cx7       the CX7 ports: link, RDMA, addresses, cabling, pings, RoCE, latency, netplan, backups
    cx7hardware  the hardware behind each CX7 link: PCIe link, firmware, GID index, MTU (issue 43)
    nccl      the NCCL collective over every CX7 node, after the RoCE rounds, with NCCL's own set-up
              lines; what each CX7 node adds to it (NCCL_* settings, CX7 MTUs) as facts
    logins    SSH: the mesh between nodes, over CX7, and the login methods sshd offers
    launcher  sparkrun on the head: its version, the cluster's definition, image and setup check
    engines   the engines and the agent: listeners, answers, streams, keys, comparisons
    kernel    the kernel's own reports on every node, read once after the load
    diagnosis the causes a failed measurement asks for, after the others: packets of the MTU per
              bond member, the members' link, munge on the controller, an engine's health, names
"""

from __future__ import annotations

from rackproof.measuring.plan import Entry

from . import configuration, cx7, cx7hardware, diagnosis, engines, holders, jobs, lanes, launcher, logins, nccl, nodes

# every entry, each once, in its module's order: the loads run in this order (the lanes'
# streams, then the CX7 rounds, then the collective), the engines' answers before the agent's
ALL: list[Entry] = list(dict.fromkeys(value for module in (nodes, configuration, holders, jobs, lanes, cx7hardware, cx7,
                                                     nccl, logins, launcher, engines, diagnosis)
                                      for value in vars(module).values() if isinstance(value, Entry)))
# the kernel's own reports (issue 43): after the load, so that what the load brought counts
from . import kernel  # noqa: E402
ALL += [value for value in vars(kernel).values() if isinstance(value, Entry)]
