"""rackproof.judging.linkhealth: what a lane's counters did under load, and when that fails. The
simulated rack's marginal cable (selftests/test_acceptance_two_nodes_sim.py) shows the whole path."""

import pytest

from rackproof.judging.failure import Failure, NotVerified
from rackproof.inventory.model import Expect
from rackproof.judging.linkhealth import Change, Counters, _grown, fail_on_errors
from rackproof.measuring.linkhealth import LoadLedger, since_load

WHERE = "thor-2 mgbe0_0 (switch sw-25g port 5, cable thor-2/1)"


def change(**given) -> Change:
    return Change(**({"received": 2 * 10**9, "sent": 10**9, "crc": 0, "symbol": None, "dropped": 0, "pause": 0,
                      "corrected": 30, "uncorrectable": 0} | given))


def test_a_healthy_lane_passes_and_its_corrected_rate_is_per_gb_carried():
    fail_on_errors(change(), WHERE)
    assert change().corrected_per_gb == 10.0
    assert change(corrected=None).corrected_per_gb is None


@pytest.mark.parametrize("given, found", [({"uncorrectable": 3}, "3 uncorrectable FEC blocks"),
                                          ({"crc": 5}, "5 CRC/FCS errors")])
def test_an_uncorrectable_block_or_a_crc_error_fails_with_the_deltas(given, found):
    with pytest.raises(Failure) as caught:
        fail_on_errors(change(**given), WHERE)
    text = str(caught.value)
    assert text.startswith(f"{WHERE}: error counters under load: expected no uncorrectable FEC block and no CRC/FCS "
                           f"error, found {found} (2000 MB received and 1000 MB sent, ")
    assert "symbol errors: not counted by the driver" in text and "over-bent DAC" in text


def test_a_counter_that_went_back_started_again():
    assert _grown(10, 25) == 15 and _grown(10, 4) == 4 and _grown(None, 4) is None


def test_no_load_in_this_run_is_not_verified():
    with pytest.raises(NotVerified, match="no throughput test carried load over it in this run"):
        since_load(LoadLedger(), host=type("H", (), {"name": "thor-2"})(), lane="mgbe0_0", where=WHERE,
                   expect=Expect())


def test_the_ledger_keeps_what_was_noted_or_why_not(monkeypatch):
    import rackproof.measuring.linkhealth as linkhealth
    from rackproof.nodes.host import ProbeFailed
    from rackproof.nodes.remote import Result

    noted = Counters(1, 2, 0, None, 0, 0, 5, 0, "nvethernet")
    answers = iter([{"mgbe1_0": noted},
                    ProbeFailed("thor-3", Result("ethtool -S mgbe0_0", 1, "", "", 0.1), "exited with status 1")])

    def read(host, lanes):
        answer = next(answers)
        if isinstance(answer, Exception):
            raise answer
        return answer
    monkeypatch.setattr(linkhealth, "read", read)
    ledger = LoadLedger()
    assert ledger.before("thor-2", "mgbe1_0") is None
    ledger.note(type("H", (), {"name": "thor-2"})(), ["mgbe1_0"])
    ledger.note(type("H", (), {"name": "thor-3"})(), ["mgbe0_0"])
    assert ledger.before("thor-2", "mgbe1_0") == noted and ledger.before("thor-2", "mgbe0_0") is None
    assert ledger.before("thor-3", "mgbe0_0").startswith("thor-3: `ethtool -S mgbe0_0`")


@pytest.mark.parametrize("given, missing", [
    ({"crc": None, "driver": "nvethernet"},
     "no CRC/FCS counter in `ethtool -S` (driver nvethernet: mmc_rx_crc_error, rx_crc_errors)"),
    ({"crc": None, "driver": "e1000e"}, "no CRC/FCS counter in `ethtool -S` (driver e1000e: no name known)"),
    ({"corrected": None, "uncorrectable": None},
     "no FEC block counters (corrected_blocks, uncorrectable_blocks) in `ethtool -I --show-fec`"),
    ({"corrected": None}, "no FEC block counters"),
    ({"uncorrectable": None}, "no FEC block counters"),
])
def test_a_judged_counter_the_lane_did_not_print_is_not_verified_never_passed(given, missing):
    with pytest.raises(NotVerified) as caught:
        fail_on_errors(change(**given), WHERE)
    assert str(caught.value).startswith(f"{WHERE}: error counters under load not verified: {missing}")


def test_an_error_counted_still_fails_when_another_counter_is_missing():
    with pytest.raises(Failure, match="3 uncorrectable FEC blocks"):
        fail_on_errors(change(uncorrectable=3, crc=None), WHERE)


def test_a_lane_noted_unreadable_is_read_again_when_noted_again_and_a_read_one_never(monkeypatch):
    """A late node (away at the run's first load, rackproof.nodes.racklife) is noted again before its
    own load: what could not be read then is read now; counters already noted stay as they were."""
    import rackproof.measuring.linkhealth as linkhealth
    from rackproof.nodes.remote import NodeUnreachable

    host = type("H", (), {"name": "thor-2"})()
    asked, away = [], [True]

    def read(host, lanes):
        asked.append(list(lanes))
        if away[0]:
            raise NodeUnreachable("thor-2", "ssh to thor-2: 3 connect attempts failed")
        return {lane: Counters(len(asked), 0, 0, None, 0, 0, 0, 0, "nvethernet") for lane in lanes}
    monkeypatch.setattr(linkhealth, "read", read)
    ledger = LoadLedger()
    ledger.note(host, ["mgbe0_0", "mgbe1_0"])
    assert ledger.before("thor-2", "mgbe0_0") == "thor-2 is unreachable: ssh to thor-2: 3 connect attempts failed"
    away[0] = False
    ledger.note(host, ["mgbe0_0", "mgbe1_0"])
    assert asked[-1] == ["mgbe0_0", "mgbe1_0"] and ledger.before("thor-2", "mgbe0_0").received == 2
    ledger.note(host, ["mgbe0_0", "mgbe1_0"])
    assert len(asked) == 2 and ledger.before("thor-2", "mgbe1_0").received == 2   # noted once read: kept
