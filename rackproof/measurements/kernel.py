"""The kernel's own reports on every node: its log read once per node after the load, so that
what the run's own load brought counts, judged over the run and the window before it
([expect] kernel_log_window_hours; rackproof.kernelreports)."""

from __future__ import annotations

from rackproof import kernelreports, plan
from rackproof.plan import Phase

NODE_KERNEL_LOG = plan.each("node.kernel_log", Phase.AFTER_LOAD, "node", kernelreports.read)
