"""A munge credential made on a node and decoded on the Slurm controller over ssh, and why the two
refuse each other when munge says so (the words judged by rackproof.judging.slurm)."""

from __future__ import annotations

from rackproof.judging.slurm import munge_finding
from rackproof.nodes.host import Host, ProbeFailed
from rackproof.probes.slurm import MUNGE_HERE, MUNGE_TO, MungeDecode


def decoded_on_controller(node: Host, controller: str, connect_timeout: float) -> MungeDecode:
    """A credential made on the node and decoded on the controller (on the controller itself:
    made and decoded there). Each node's key against the controller's: together, every node's
    key is the same."""
    if node.name == controller:
        return node.read(MUNGE_HERE)
    return node.read(MUNGE_TO, timeout=login_bound(connect_timeout), seconds=f"{connect_timeout:g}", peer=controller)


def login_bound(connect_timeout: float) -> float:
    """How long a credential decoded over ssh may take. ssh's ConnectTimeout bounds the connect
    and the key exchange; the login and unmunge after it answer within a second on a working node.
    A login that hangs after that (a path that drops full-size frames) would otherwise hold the
    run until sshd's LoginGraceTime (120 s on Debian and Ubuntu) or the command timeout, and once
    more when the cause is asked for."""
    return 2 * connect_timeout + 5


def refused_by_munge(node: Host, controller: str, connect_timeout: float) -> str | None:
    """Why the controller and the node refuse each other's requests, when munge says so: None
    when the node's credential decodes on the controller, or munge could not be asked (the munge
    check reports that itself)."""
    try:
        decoded = decoded_on_controller(node, controller, connect_timeout)
    except ProbeFailed:
        return None
    if decoded.ok:
        return None
    return (munge_finding(node.name, controller, decoded)
            or f"a munge credential made on {node.name} does not decode on {controller} (unmunge: {decoded.error})")
