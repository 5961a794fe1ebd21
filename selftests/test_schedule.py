"""Which throughput tests run together: rounds in which every node sends once and receives
once, and the locks that keep tests sharing a node (and everything, during a disruptive check)
apart."""

from __future__ import annotations

import shutil
import threading
import time
from collections import Counter
from itertools import permutations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rackproof.inventory.kinds import covering_round, derangements
from rackproof.measuring.schedule import WHOLE_RACK, LockBusy, holding, remove_when_idle

nodes = st.integers(min_value=2, max_value=40).map(lambda n: [f"thor-{i}" for i in range(1, n + 1)])


@given(nodes)
def test_every_ordered_pair_once_in_n_minus_one_rounds(names):
    rounds = derangements(names)
    pairs = [pair for rnd in rounds for pair in rnd]
    assert sorted(pairs) == sorted(permutations(names, 2))
    assert len(rounds) == len(names) - 1


@given(nodes)
def test_in_a_round_every_node_sends_once_and_receives_once(names):
    for rnd in derangements(names):
        assert sorted(src for src, _ in rnd) == sorted(names)
        assert sorted(dst for _, dst in rnd) == sorted(names)
        assert all(src != dst for src, dst in rnd)


def test_five_thors_take_four_rounds_of_five_pairs():
    rounds = derangements([f"thor-{i}" for i in range(1, 6)])
    assert [len(r) for r in rounds] == [5] * 4
    assert rounds[0][0] == ("thor-1", "thor-2") and rounds[3][0] == ("thor-1", "thor-5")


@given(nodes)
def test_the_covering_round_measures_every_node_sending_and_receiving(names):
    (rnd,) = covering_round(names)
    assert Counter(src for src, _ in rnd) == Counter(dst for _, dst in rnd) == Counter(names)


def test_one_node_or_none_has_no_pairs():
    assert derangements(["thor-1"]) == covering_round(["thor-1"]) == covering_round([]) == []


def _second_holder_waits(tmp_path, first: dict, second: dict) -> list[str]:
    """The order of events when a second holder asks while the first holds (threads: flock
    locks belong to an open file, so two opens in one process exclude each other too)."""
    events, holds = [], threading.Event()

    def first_holder():
        with holding(tmp_path, **first):
            events.append("first holds")
            holds.set()
            # long enough for the second to ask; if it got in meanwhile, the order shows it
            threading.Event().wait(0.3)
            events.append("first releases")

    t = threading.Thread(target=first_holder)
    t.start()
    holds.wait(5)
    with holding(tmp_path, **second):
        events.append("second holds")
    t.join()
    return events


def test_two_tests_sharing_a_node_do_not_overlap(tmp_path):
    events = _second_holder_waits(tmp_path, {"names": ["thor-2", "thor-1"]}, {"names": ["thor-1", "thor-5"]})
    assert events == ["first holds", "first releases", "second holds"]


def test_tests_sharing_no_node_run_together(tmp_path):
    events = _second_holder_waits(tmp_path, {"names": ["thor-1", "thor-2"]}, {"names": ["thor-3", "thor-4"]})
    assert events == ["first holds", "second holds", "first releases"]


def test_a_disruptive_test_waits_for_every_other_and_the_others_may_share(tmp_path):
    shared, alone = {"names": [WHOLE_RACK], "shared": True}, {"names": [WHOLE_RACK], "shared": False}
    assert _second_holder_waits(tmp_path, shared, shared) == ["first holds", "second holds", "first releases"]
    assert _second_holder_waits(tmp_path, shared, alone) == ["first holds", "first releases", "second holds"]
    assert _second_holder_waits(tmp_path, alone, shared) == ["first holds", "first releases", "second holds"]


def test_the_lock_folder_stays_while_another_run_is_in_a_test_and_goes_with_the_last(tmp_path):
    locks = tmp_path / "locks"
    with holding(locks, [WHOLE_RACK], shared=True):   # another run on the same cluster, mid-test
        remove_when_idle(locks)
        assert locks.is_dir()
        with holding(locks, ["thor-2"]):
            pass
    remove_when_idle(locks)
    assert not locks.exists()


def test_a_lock_folder_removed_by_another_run_is_made_again(tmp_path):
    locks = tmp_path / "locks"
    with holding(locks, ["thor-1"]):
        pass
    remove_when_idle(locks)
    with holding(locks, ["thor-1", "thor-2"]):
        assert {p.name for p in locks.iterdir()} == {"thor-1.lock", "thor-2.lock"}


def test_no_lock_is_waited_on_past_its_bound(tmp_path):
    with holding(tmp_path, ["thor-1"]):
        started = time.monotonic()
        with pytest.raises(LockBusy, match=r"the lock of thor-1 in .* was not free within 0.3 s"):
            with holding(tmp_path, ["thor-2", "thor-1"], wait=0.3):
                pass
        assert time.monotonic() - started < 5
    with holding(tmp_path, ["thor-1"], wait=0.3):   # free again: taken at once
        pass


def test_a_lock_whose_file_another_run_removed_while_it_waited_is_taken_on_the_file_there_now(tmp_path):
    """A run waits on @rack while another holds it and then removes the idle folder: the waiter
    must not hold a lock on the removed file (a third run would take the new one beside it)."""
    locks = tmp_path / "locks"
    events = []
    first_holds, first_done = threading.Event(), threading.Event()

    def first():
        with holding(locks, [WHOLE_RACK]):
            first_holds.set()
            time.sleep(0.3)                 # the waiter has opened the file and waits on it
            shutil.rmtree(locks)            # as remove_when_idle does, holding it alone
        first_done.set()

    thread = threading.Thread(target=first)
    thread.start()
    first_holds.wait(5)
    with holding(locks, [WHOLE_RACK], wait=5):
        events.append("second holds")
        third = threading.Thread(target=lambda: _try(locks, events))
        third.start()
        third.join(5)
    thread.join(5)
    assert first_done.is_set()
    assert events == ["second holds", "third kept out"]


def _try(locks, events):
    try:
        with holding(locks, [WHOLE_RACK], wait=0.3):
            events.append("third holds beside the second")
    except LockBusy:
        events.append("third kept out")
