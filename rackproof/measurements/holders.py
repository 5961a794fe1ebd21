"""The slice holders on each node: their accounts, processes, sudo rights, homes and jobs."""

from __future__ import annotations

from rackproof.judging import sharing

from rackproof.measuring import plan
from rackproof.measuring.plan import Phase
from rackproof.probes.accounts import PASSWD, PROCESS_OWNERS
from rackproof.probes.netplan import MODE_OWNER
from rackproof.probes.sudo import SUDO_RULES
from rackproof.probes.system import CLOCK
from rackproof.probes.systemd import USER_JOBS


def _homes(node, ctx: plan.Context) -> tuple[dict, dict]:
    """The slice holders' accounts on the node, and each of their homes' mode and owner."""
    accounts = sharing.with_logins(node, ctx.cluster.slices.holders)
    return accounts, node.read_each(MODE_OWNER, sorted({a.home for a in accounts.values()}))


NODE_HOLDER_ACCOUNTS = plan.each("node.holder_accounts", Phase.FACTS, "node",
                                 lambda node, ctx: node.read_each(PASSWD, ctx.cluster.slices.holders))
NODE_HOLDER_PROCESSES = plan.each("node.holder_processes", Phase.FACTS, "node",
                                  lambda node, ctx: (node.read(CLOCK), node.read(PROCESS_OWNERS)))
NODE_HOLDER_SUDO = plan.each("node.holder_sudo", Phase.FACTS, "node", lambda node, ctx: node.read_each(
    SUDO_RULES, sharing.with_logins(node, ctx.cluster.slices.holders)))
NODE_HOLDER_HOMES = plan.each("node.holder_homes", Phase.FACTS, "node", _homes)
NODE_USER_JOBS = plan.each("node.user_jobs", Phase.FACTS, "node", lambda node, ctx: node.read_each(
    USER_JOBS, sharing.with_logins(node, ctx.cluster.slices.holders)))
