"""Step 4: every node reaches every other by name over SSH, without a password, as the same user."""

import pytest

from rackproof.judging.capabilities import MULTI_NODE, SSH_MESH
from rackproof.judging.failure import Failure
from rackproof.measurements.diagnosis import PAIR_SSH_NAME_LEADS
from rackproof.measurements.logins import CX7_PAIR_SSH, PAIR_SSH
from rackproof.measurements.nodes import NODE_LOGIN
from rackproof.probes.sshcheck import classify_ssh_failure, unreached_host


pytestmark = pytest.mark.capability(SSH_MESH, blocks=True)


@pytest.mark.step(4)
def test_passwordless_ssh(pair, inventory, guards, planned):
    result = planned(PAIR_SSH)
    unreached = unreached_host(result.stderr) if not result.ok else None
    led_to = planned(PAIR_SSH_NAME_LEADS) if unreached else ()
    address = next((a for a in led_to if a in {c.ip for c in pair.dst.spec.cx7}), None)
    if address:
        # the name leads over the CX7 link (a Spark's /etc/hosts), which did not carry it: the
        # link's failure, which costs multi-node work only; keys and logins are not in question
        guards(MULTI_NODE)
        raise Failure(pair.where, f"`ssh {pair.dst.spec.ssh_name} hostname` run on {pair.src.name} goes to {address}, "
                      f"a CX7 address of {pair.dst.name}, and the CX7 link did not carry it: "
                      f"{classify_ssh_failure(result.exit_status, result.stderr)}",
                      cause="the CX7 link is down or unaddressed (see test_cx7_interface_up and "
                            "test_cx7_ping_on_its_subnet); SSH by name rides it")
    if not result.ok:
        raise Failure(pair.where, f"`ssh -o BatchMode=yes {pair.dst.spec.ssh_name} hostname` run on {pair.src.name} "
                      f"as {inventory.cluster.user} failed (exit {result.exit_status}): "
                      f"{classify_ssh_failure(result.exit_status, result.stderr)}. "
                      f"Stderr: {result.stderr.strip() or '(empty)'}")
    if result.stdout.strip() != pair.dst.name:
        raise Failure(pair.where, f"hostname answered by {pair.dst.spec.ssh_name}", pair.dst.name,
                      result.stdout.strip(), f"the name {pair.dst.spec.ssh_name} resolves on {pair.src.name} to "
                      "another machine (check /etc/hosts)")

@pytest.mark.step(4)
def test_same_login_on_every_node(node, inventory, planned):
    found = planned(NODE_LOGIN)
    if found != inventory.cluster.user:
        raise Failure(node.name, "login name", inventory.cluster.user, found,
                      "every node needs the same user name; the SSH settings and distributed recipes rely on it")


@pytest.mark.step(4)
@pytest.mark.platform("spark")
@pytest.mark.capability(MULTI_NODE)
def test_passwordless_ssh_over_cx7(cx7_ssh_pair, inventory, planned):
    """The Spark guide's `ssh <cx7-ip> hostname`, from every node to every other: the path
    multi-node launches take (single-node launches never use it; the mesh by name guards them)."""
    src, dst = cx7_ssh_pair.src, cx7_ssh_pair.dst
    address, result = planned(CX7_PAIR_SSH)
    if address is None:
        raise Failure(cx7_ssh_pair.where, f"{dst.name} has no CX7 address on a subnet of {src.name}'s",
                      cause="the two ends of a CX7 link need addresses on one subnet (40-cx7.yaml on both nodes)")
    if not result.ok or result.stdout.strip() != dst.name:
        raise Failure(cx7_ssh_pair.where, f"`ssh -o BatchMode=yes {address} hostname` (over CX7) run on {src.name} as "
                      f"{inventory.cluster.user}", dst.name,
                      f"exit {result.exit_status}: {classify_ssh_failure(result.exit_status, result.stderr)}"
                      if not result.ok else result.stdout.strip(),
                      "the CX7 address is not in known_hosts (connect once by address), or sshd does not listen on it")
