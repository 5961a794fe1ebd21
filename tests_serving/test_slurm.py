"""Step 9: "Add Slurm when the calendar is no longer enough." One Thor runs the controller,
every Thor runs slurmd; each node answers the controller, takes a real job, shares munge's
key and a clock with the others, and the partition ends a job that gives no --time."""

import pytest

from rackproof.judging import slurm
from rackproof.judging.capabilities import SCHEDULED_JOBS
from rackproof.judging.failure import Failure
from rackproof.measurements.diagnosis import NODE_MUNGE_REFUSAL
from rackproof.measurements.jobs import NODE_CLOCK, NODE_MUNGE_DECODED, NODE_SLURM_CONTROLLERS, NODE_SLURM_JOB, \
    SLURM_PARTITION
from rackproof.probes.slurm import slurm_time_hours

pytestmark = [pytest.mark.step(9), pytest.mark.needs("slurm"), pytest.mark.capability(SCHEDULED_JOBS)]


def test_node_reaches_the_controller(node, inventory, planned):
    controllers = planned(NODE_SLURM_CONTROLLERS)
    if not any(c.up for c in controllers):
        refused = planned(NODE_MUNGE_REFUSAL)
        raise Failure(node.name, "scontrol ping", "the controller UP",
                      "; ".join(f"{c.role} {c.host} {'UP' if c.up else 'DOWN'}" for c in controllers),
                      f"{refused}; slurmctld refuses every request of {node.name}" if refused else
                      f"slurmctld not running on {inventory.slurm.controller}, or its port 6817 closed to {node.name}",
                      seen=refused is not None)


def test_node_takes_jobs(node, inventory, planned):
    controller = inventory.slurm.controller
    state, result = planned(NODE_SLURM_JOB)
    if state is None:
        raise Failure(node.name, "not a node of Slurm (sinfo does not list it)",
                      cause=f"add NodeName={node.name} to slurm.conf on every node and restart slurmctld")
    if not state.takes_jobs:
        reason = f", reason: {state.reason}" if state.reason else ""
        refused = planned(NODE_MUNGE_REFUSAL) if not state.responding else None
        raise Failure(node.name, "Slurm node state", "idle, mixed or allocated", f"{state.state}{reason}",
                      f"{refused}; slurmctld and the node's slurmd refuse each other" if refused else
                      "slurmd not running or not registered (not responding: *), or the node drained; "
                      f"`sudo scontrol update nodename={node.name} state=resume` once it is fixed",
                      seen=refused is not None)
    if not result.ok or result.stdout.strip() != node.name:
        refused = planned(NODE_MUNGE_REFUSAL)
        raise Failure(node.name, f"a one-node job (srun -w {node.name} hostname, from {controller})",
                      node.name, f"exit {result.exit_status}: {(result.stdout + result.stderr).strip() or '(nothing)'}",
                      f"{refused}; the node's slurmd refuses the controller's job launch" if refused else
                      "slurmd on the node not reachable from the controller (port 6818), or the job's user missing "
                      "there", seen=refused is not None)


def test_partition_has_a_time_limit(slurm_controller, inventory, planned):
    max_time = planned(SLURM_PARTITION).get("MaxTime", "UNLIMITED")
    hours, wanted = slurm_time_hours(max_time), inventory.slurm.max_time_hours
    if hours is None or (wanted is not None and hours > wanted):
        raise Failure(f"partition {inventory.slurm.partition}", "MaxTime",
                      "a time limit" + (f" of at most {wanted:g} h" if wanted is not None else ""), max_time,
                      "a job submitted without --time runs as long as MaxTime allows: set MaxTime= on the "
                      "PartitionName line of slurm.conf (and DefaultTime=), then `sudo scontrol reconfigure`")


def test_munge_credentials_decode_on_the_controller(node, inventory, planned):
    controller = inventory.slurm.controller
    decoded = planned(NODE_MUNGE_DECODED)
    if not decoded.ok:
        finding = slurm.munge_finding(node.name, controller, decoded)
        raise Failure(node.name, f"a munge credential made on {node.name}, decoded on {controller}", "Success (0)",
                      decoded.status, finding or slurm.USUAL_MUNGE_CAUSE, seen=finding is not None)


def test_clock_within_munges_limit(node, inventory, planned):
    slurm.clock_within_munges_limit(node.name, planned(NODE_CLOCK), inventory.expect.time_source == "local")
