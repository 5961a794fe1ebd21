"""NCCL across the CX7 nodes: the inventory's nccl-tests collective, after the RoCE rounds, and
the NCCL settings each node would add to it."""

from __future__ import annotations

from rackproof.judging import ncclsetup

from rackproof.measuring import plan, schedule
from rackproof.measuring.plan import Phase
from rackproof.probes.nccl import NCCL_TEST


def _nccl(nodes, ctx: plan.Context):
    """The inventory's nccl-tests collective over every CX7 node, one rank each, started by
    mpirun from the first node over its first CX7 interface, with the inventory's NCCL settings
    and NCCL's debug lines; the nodes held against other runs."""
    specs = [host.spec for host in nodes]
    addresses = ",".join(f"{n.cx7[0].address.split('/')[0]}:1" for n in specs)
    settings = [arg for name, value in ncclsetup.inventory_settings(ctx.cluster.expect).items()
                for arg in ("-x", f"{name}={value}")]
    with schedule.holding(ctx.node_locks, sorted(n.name for n in specs)):
        return nodes[0].read(NCCL_TEST, ranks=len(specs), hosts=addresses, interface=specs[0].cx7[0].name,
                             settings=settings, test=ctx.cluster.expect.nccl_test)


# after the RoCE rounds: the collective loads every CX7 link at once
CX7_NCCL = plan.each("cx7.nccl", Phase.LOAD, "cx7_cluster", _nccl)

# what each CX7 node adds: its login's environment, ~/.nccl.conf, /etc/nccl.conf, its CX7 MTUs
CX7_NCCL_SETTINGS = plan.each("cx7.nccl_settings", Phase.FACTS, "cx7_cluster",
                              lambda nodes, ctx: tuple(ncclsetup.read_node(host) for host in nodes))
