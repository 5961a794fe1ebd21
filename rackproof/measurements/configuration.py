"""What each node runs below its packages, for the check that compares it across the cluster and
the report's golden-configuration table: the kernel's release and the system firmware's version."""

from __future__ import annotations

from rackproof.measuring import plan
from rackproof.measuring.plan import Phase
from rackproof.probes.release import BIOS, KERNEL

from .nodes import reads

NODES_KERNEL = plan.of_every_node("nodes.kernel", Phase.FACTS, "every_node", reads(KERNEL))
NODES_FIRMWARE = plan.of_every_node("nodes.firmware", Phase.FACTS, "every_node", reads(BIOS))
