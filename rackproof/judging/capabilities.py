"""What a failed check takes away from the cluster, as in the Cordatus preflight: a failing
SSH mesh blocks everything; a missing CX7 link makes multi-node work unavailable while
single-node serving still works; a slow engine limits that model."""

from __future__ import annotations

from rackproof.inventory.model import ClusterAtStep, Node

SSH_MESH = "SSH mesh between the nodes"
MULTI_NODE = "multi-node work over the CX7 link"
VERSIONS = "one engine build loads on every node (same JetPack/TensorRT)"
FULL_SPEED = "every node's GPU at full speed (seen by its driver, every Thor in one power mode)"


def lane(cluster: ClusterAtStep, node: Node) -> tuple[str, bool]:
    """A lane of a bond only limits bandwidth (the bond carries on with the others);
    a node's only cabled lane is its whole cluster network."""
    if cluster.bonded(node):
        return f"full bonded bandwidth of {node.name}", False
    return f"cluster network of {node.name}", True


def serving(model: str) -> tuple[str, bool]:
    return f"serving {model}", False
# step 9: what each of the sharing rules keeps (the chapter's "Time slices" and "A scheduler",
# the Spark guide's security notes)
SCHEDULED_JOBS = "scheduled jobs (Slurm)"
PRIVATE_SLICES = "private slices (one person's node, files and time window)"
CLOSED_NETWORK = "a closed cluster network"
# a Spark cluster's launches through sparkrun (the Cordatus preflight's "sparkrun runtime": the CLI
# and the container images on the head), with the cluster definition and sparkrun's own setup check
SPARKRUN = "sparkrun launches (the CLI, the images and the cluster definition on the head)"
# every plug in the port the plan (and its label) says: a swapped plug sends a person to the wrong
# port, and every other failure message names the planned port
CABLING = "cabling as planned (every plug in the port its label names, by LLDP)"
