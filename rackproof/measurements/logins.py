"""SSH on the rack: every node to all its peers, the Spark guide's ssh over CX7, and the login methods each sshd offers."""

from __future__ import annotations

import time

from rackproof.judging import addressing

from rackproof.measuring import plan, sshmesh

from rackproof.nodes import racklife
from rackproof.nodes.host import ProbeFailed
from rackproof.measuring.plan import Phase
from rackproof.probes.sshcheck import OFFERED_METHODS, SSH_HOSTNAME, sshd_answered
from rackproof.nodes.remote import ConnectionLost, NoAnswer

# a node's own ssh to its sshd that did not reach it is asked again after these pauses (seconds)
SSHD_ASKED_AGAIN_AFTER = (1.0, 2.0)


class SshdNotReached(ConnectionLost):
    """A node's own ssh that never reached its sshd, asked again: a busy node's handshake outlasting
    the connect timeout, a transient as a dropped connection is. The check is cut short (the run
    INCOMPLETE: run again), never a failure of the node nor a limit of an acceptance."""

    def __init__(self, node: str, command: str, said: str, times: int):
        self.node, self.command, self.again, self.reason = node, command, True, f"ssh: {said}"
        NoAnswer.__init__(self, f"{node}: `{command}` did not reach sshd (ssh: {said}), asked {times} times: whether "
                                "it takes passwords is not known")


def _offered_methods(node, ctx: plan.Context) -> dict:
    """Which login methods sshd offers on each of the node's cluster addresses, asked from the
    node itself. sshd not reached (on a busy rack the handshake can outlast the connect timeout)
    is asked again after a pause, twice; still unreached, whether it takes passwords is not
    known: SshdNotReached, the check cut short, never a failure of the node."""
    addresses = addressing.cluster_addresses([node.spec])
    seconds = f"{ctx.cluster.ssh.connect_timeout:g}"
    for pause in (*SSHD_ASKED_AGAIN_AFTER, None):
        try:
            return node.read_each(OFFERED_METHODS, addresses, seconds=seconds)
        except ProbeFailed as e:
            if sshd_answered(e.result.stdout):
                raise
            if pause is None:
                said = next((line.strip() for line in reversed(e.result.stdout.splitlines()) if line.strip()),
                            "no output")
                raise SshdNotReached(node.name, e.result.command, said, len(SSHD_ASKED_AGAIN_AFTER) + 1) from None
            time.sleep(pause)


def _ssh_mesh(pairs: list[tuple], ctx: plan.Context) -> dict:
    """The mesh at once; a row whose ssh met its peer's sshd restarting or the peer away is asked
    again, alone, within the connect budget (rackproof.nodes.racklife)."""
    ssh, names = ctx.cluster.ssh, {n.name: n.ssh_name for n in ctx.cluster.nodes}
    rows = sshmesh.rows({n: ctx.hosts[n] for n in names}, names, pairs, ssh.connect_timeout, ssh.fanout, ctx.log)
    seconds = ssh.connect_timeout
    rows = racklife.mesh_again(rows, lambda pair: ctx.hosts[pair[0]].run(
        SSH_HOSTNAME, timeout=seconds * 3, seconds=f"{seconds:g}", peer=names[pair[1]]), ssh.connect_budget, ctx.log,
        gone=lambda node: ctx.hosts[node].remote.unreachable is not None)
    # a row still without an answer over a path that drops full-size frames names that path
    return sshmesh.through_black_holes(rows, ctx.hosts, ctx.cluster, ctx.log)


def _ssh_over_cx7(pair, ctx: plan.Context) -> tuple:
    """The Spark guide's `ssh <cx7-ip> hostname` from the pair's first node to the second's CX7
    address on a subnet of its own: (that address, the result), (None, None) when there is none."""
    address = addressing.cx7_address_from(pair.src.spec, pair.dst.spec)
    if address is None:
        return None, None
    timeout = ctx.cluster.ssh.connect_timeout
    return address, pair.src.run(SSH_HOSTNAME, timeout=timeout * 3, seconds=f"{timeout:g}", peer=address)


NODE_OFFERED_METHODS = plan.each("node.offered_methods", Phase.FACTS, "network_node", _offered_methods)
PAIR_SSH = plan.Entry("pair.ssh", Phase.MESH, "pair", _ssh_mesh)
CX7_PAIR_SSH = plan.each("cx7_pair.ssh", Phase.MESH, "cx7_ssh_pair", _ssh_over_cx7)
