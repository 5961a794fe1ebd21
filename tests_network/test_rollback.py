"""Change control. Before a change on a Spark pair, the rollback is ready: the netplan files it
may touch are backed up exactly (the Spark guide: "back up the affected files and note their
hashes, owner and permissions"), and the controller does not reach the nodes over the CX7 link
a change may break. After a rollback (`--expect-unchanged before.json`), every node is exactly
as the snapshot taken before the change found it ("restore the exact files"); the management
path, SSH and routing are the suite's own checks of the run."""

import ipaddress
import posixpath

import pytest

from rackproof.ticket import changes
from rackproof.judging.failure import Failure
from rackproof.measurements.cx7 import CX7_NODE_BACKUPS, CX7_NODE_MANAGEMENT_PATH
from rackproof.measurements.nodes import NODE_SNAPSHOT
from rackproof.probes.netplan import CX7_NETPLAN

READY = pytest.mark.capability("a rollback that keeps the management path")


@pytest.mark.against_snapshot
@pytest.mark.capability("the cluster as it was before the change", blocks=True)
def test_nothing_changed_since_the_snapshot(node, snapshot_before, planned):
    found = changes.of_node(snapshot_before, node.name, planned(NODE_SNAPSHOT))
    if found:
        raise Failure(node.name, f"{len(found)} difference{'s' * (len(found) != 1)} from the snapshot taken "
                      f"{snapshot_before.get('taken', 'before the change')}",
                      cause="the rollback did not restore everything the change altered",
                      details="\n".join(f"  {c.fact}: {c.words}" for c in found))


@READY
@pytest.mark.step(2)
@pytest.mark.platform("spark")
@pytest.mark.needs("rollback")
def test_cx7_netplan_files_are_backed_up(cx7_node, inventory, planned):
    folder = inventory.inventory.rollback.backup_dir
    live, naming, backups = planned(CX7_NODE_BACKUPS)
    problems = [f"{path} cannot be read by the login: whether it names a CX7 interface is not known"
                for path in naming.unreadable]
    for path in dict.fromkeys(p for p in (CX7_NETPLAN, *naming.naming) if p in live):
        copy = backups.get(posixpath.join(folder, posixpath.basename(path)))
        original = live[path]
        if copy is None:
            problems.append(f"{path} has no copy in {folder}")
        elif original.sha256 is None or copy.sha256 is None:
            problems.append(f"{path} or its copy cannot be hashed by the login (sudo -n sha256sum)")
        elif copy != original:
            problems.append(f"{path}: the copy in {folder} differs (sha256 {copy.sha256[:12]} vs {original.sha256[:12]}, "
                            f"mode {copy.mode} vs {original.mode}, owner {copy.owner}:{copy.group} vs "
                            f"{original.owner}:{original.group})")
    if problems:
        raise Failure(cx7_node.name, "; ".join(problems),
                      cause=f"back up each file before the change, keeping owner and mode: sudo cp -p FILE {folder}/")


@READY
@pytest.mark.step(2)
@pytest.mark.platform("spark")
def test_management_path_does_not_ride_on_the_cx7_link(cx7_node, planned):
    seen, route = planned(CX7_NODE_MANAGEMENT_PATH)
    if seen is None:
        if cx7_node.spec.local:
            pytest.skip(f"the controller runs on {cx7_node.name}: it needs no way in")
        raise Failure(cx7_node.name, "the suite's commands did not come over SSH (no SSH_CONNECTION)")
    cx7 = {c.name: ipaddress.ip_interface(c.address).network for c in cx7_node.spec.cx7}
    on_cx7 = [name for name, net in cx7.items() if ipaddress.ip_address(seen.server) in net]
    if route.dev in cx7 or on_cx7:
        raise Failure(cx7_node.name, f"the controller ({seen.client}) reaches it at {seen.server}, and the node "
                      f"answers over {route.dev}: the management path rides on the CX7 link a change may break",
                      cause="reach the nodes by their management address (the node's ssh name in cluster.toml), so "
                            "that a CX7 mistake is not a lock-out")
