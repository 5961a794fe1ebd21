"""After a rollback (`--expect-unchanged before.json`): every node is exactly as the snapshot
taken before the change found it, as the Spark guide's rollback design asks ("restore the
exact files"). The management path, SSH and routing are the suite's own checks of the run."""

import pytest

from rackproof import changes, snapshot
from rackproof.failure import Failure

pytestmark = [pytest.mark.against_snapshot, pytest.mark.capability("the cluster as it was before the change",
                                                                    blocks=True)]


def test_nothing_changed_since_the_snapshot(node, inventory, snapshot_before):
    found = changes.of_node(snapshot_before, node.name,
                            snapshot.node_facts(inventory.cluster.platform, node.spec, node))
    if found:
        raise Failure(node.name, f"{len(found)} difference{'s' * (len(found) != 1)} from the snapshot taken "
                      f"{snapshot_before.get('taken', 'before the change')}",
                      cause="the rollback did not restore everything the change altered",
                      details="\n".join(f"  {c.fact}: {c.words}" for c in found))
