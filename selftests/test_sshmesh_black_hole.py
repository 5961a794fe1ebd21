"""An SSH mesh row that got no answer over a path that drops full-size frames names that path:
with a LAG member's switch port at MTU 1400 the handshake passed, the key exchange stalled, and
two mesh checks said "sshd accepted the connection and never answered: hung or overloaded"."""

import pytest

from rackproof.measuring import pathmtu, sshmesh
from rackproof.judging.failure import Failure
from rackproof.inventory.model import FINISHED, ClusterAtStep, load_inventory
from rackproof.nodes.remote import Evidence, EvidenceLog, Result
from rackproof.nodes.together import Part
from selftests.suite import EXAMPLES

CLUSTER = ClusterAtStep(load_inventory(EXAMPLES / "thor5.toml"), FINISHED)
STALLED = Result("ssh -o BatchMode=yes thor-3 hostname", 124, "", "", 0.0)
REFUSED = Result("ssh -o BatchMode=yes thor-4 hostname", 255, "", "ssh: connect to host thor-4 port 22: Connection "
                                                                      "refused\n", 0.0)


def rows() -> dict:
    return {("thor-1", "thor-3"): Part(STALLED, None, []), ("thor-1", "thor-4"): Part(REFUSED, None, [])}


def test_a_stalled_row_over_a_path_dropping_full_size_frames_names_the_path(monkeypatch):
    asked = []

    def blocked(sender, receiver, cluster):
        asked.append((sender, receiver.name))
        cluster_log.add(Evidence("thor-1", "ping -M do ...", 1, "", "", 0.1, 0.0))
        return pathmtu.Blocked("thor-1", "thor-3", 1500, ("mgbe1_0",), False)
    cluster_log = EvidenceLog()
    monkeypatch.setattr(pathmtu, "blocked", blocked)
    found = sshmesh.through_black_holes(rows(), {"thor-1": "host thor-1"}, CLUSTER, cluster_log)
    assert asked == [("host thor-1", "thor-3")]              # the refused row is not asked about
    failure = found[("thor-1", "thor-3")].error
    assert isinstance(failure, Failure)
    assert str(failure).startswith("thor-1 -> thor-3: `ssh -o BatchMode=yes thor-3 hostname` run on thor-1 got no "
                                   "answer: thor-3's sshd accepted the connection, and the key exchange")
    assert "Cause: packets of the MTU (1500 bytes, don't-fragment) sent from thor-1 over thor-1 mgbe1_0" in str(failure)
    assert "hung or overloaded" not in str(failure)
    assert [e.command for e in found[("thor-1", "thor-3")].evidence] == ["ping -M do ..."]
    assert found[("thor-1", "thor-4")].value is REFUSED


def test_a_stalled_row_over_a_whole_path_stays_as_it_was(monkeypatch):
    monkeypatch.setattr(pathmtu, "blocked", lambda sender, receiver, cluster: None)
    found = sshmesh.through_black_holes(rows(), {"thor-1": "host thor-1"}, CLUSTER, EvidenceLog())
    assert found[("thor-1", "thor-3")].value is STALLED and found[("thor-1", "thor-3")].error is None
