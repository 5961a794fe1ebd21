"""The kernel's own reports on every node: its log read once per node after the load, so that
what the run's own load brought counts, judged over the run and the window before it
([expect] kernel_log_window_hours; rackproof.judging.kernelreports)."""

from __future__ import annotations

from rackproof.judging import kernelreports

from rackproof.measuring import plan
from rackproof.measuring.plan import Phase

NODE_KERNEL_LOG = plan.each("node.kernel_log", Phase.AFTER_LOAD, "node", kernelreports.read)
