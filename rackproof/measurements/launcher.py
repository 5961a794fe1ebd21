"""sparkrun on the head: its version, the cluster's definition, its image and its setup check."""

from __future__ import annotations

from rackproof.measuring import plan
from rackproof.measuring.plan import Phase
from rackproof.probes import sparkrun
from rackproof.probes.docker import IMAGE_ID

from .nodes import reads


def _sparkrun_definition(head, ctx: plan.Context) -> tuple:
    """sparkrun on the head: its version (None: not installed), the cluster's definition (None:
    no such cluster, or no sparkrun to ask) and, with a definition, every node's interfaces
    (where each host it names is)."""
    version, definition = _version_and_definition(head, ctx)
    return version, definition, _interfaces_of_every_node(ctx) if definition is not None else {}


def _version_and_definition(head, ctx: plan.Context) -> tuple:
    version = head.read(sparkrun.SPARKRUN_VERSION)
    return version, head.read(sparkrun.CLUSTER_SHOW, cluster=ctx.cluster.sparkrun.cluster) if version is not None \
        else None


def _interfaces_of_every_node(ctx: plan.Context) -> dict:
    return {name: host.interfaces() for name, host in ctx.hosts.items()}


def _sparkrun_setup_check(node, ctx: plan.Context) -> tuple:
    """The head's sparkrun version and definition, its `sparkrun setup check` of the cluster
    (None: it does not know the cluster), and with a report every node's interfaces (where each
    host it checked is)."""
    head = ctx.hosts[ctx.cluster.nodes[0].name]
    version, definition = _version_and_definition(head, ctx)
    if definition is None:
        return version, None, None, {}
    report = head.read(sparkrun.SETUP_CHECK, cluster=definition.name)
    return version, definition, report, _interfaces_of_every_node(ctx) if report is not None else {}


SPARKRUN_VERSION = plan.each("sparkrun.version", Phase.FACTS, "sparkrun_head", reads(sparkrun.SPARKRUN_VERSION))
SPARKRUN_DEFINITION = plan.each("sparkrun.definition", Phase.FACTS, "sparkrun_head", _sparkrun_definition)
SPARKRUN_FABRIC = plan.each("sparkrun.fabric", Phase.FACTS, "sparkrun_fabric", _sparkrun_definition)
SPARKRUN_IMAGE = plan.each("sparkrun.image", Phase.FACTS, "sparkrun_image",
                           lambda image, ctx: image.host.read(IMAGE_ID, image=image.image))
SPARKRUN_SETUP_CHECK = plan.each("sparkrun.setup_check", Phase.FACTS, "sparkrun_node", _sparkrun_setup_check)
