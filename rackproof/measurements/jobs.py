"""Slurm on the rack: each node's controllers, its state and a real job, the partition, munge's credentials and the clock they need."""

from __future__ import annotations

from rackproof.measuring import munge, plan
from rackproof.measuring.plan import Phase
from rackproof.probes.chrony import TRACKING
from rackproof.probes.slurm import PARTITION, SCONTROL_PING, SINFO_NODES, SRUN_HOSTNAME

from .nodes import reads


def _slurm_job(node, ctx: plan.Context) -> tuple:
    """Slurm's state of the node (sinfo, on the controller) and, when it says the node takes
    jobs, a real one-node job there (srun -w NODE hostname, from the controller)."""
    controller = ctx.hosts[ctx.cluster.slurm.controller]
    state = controller.read(SINFO_NODES).get(node.name)
    return state, controller.run(SRUN_HOSTNAME, seconds=10, node=node.name) if state and state.takes_jobs else None


NODE_CLOCK = plan.each("node.clock", Phase.FACTS, "node", reads(TRACKING))
NODE_SLURM_CONTROLLERS = plan.each("node.slurm_controllers", Phase.FACTS, "node", reads(SCONTROL_PING))
NODE_SLURM_JOB = plan.each("node.slurm_job", Phase.FACTS, "node", _slurm_job)
SLURM_PARTITION = plan.each("slurm.partition", Phase.FACTS, "slurm_controller", lambda controller, ctx: controller.read(
    PARTITION, partition=ctx.cluster.slurm.partition))
NODE_MUNGE_DECODED = plan.each("node.munge_decoded", Phase.FACTS, "node", lambda node, ctx: munge.decoded_on_controller(
    node, ctx.cluster.slurm.controller, ctx.cluster.ssh.connect_timeout))
