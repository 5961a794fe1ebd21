"""Which throughput tests may run together: rounds of disjoint pairs, and the locks that keep
tests sharing a node (and everything, during a disruptive check) apart."""

from __future__ import annotations

import threading
from collections import Counter
from itertools import combinations

from hypothesis import given
from hypothesis import strategies as st

from rackproof.schedule import WHOLE_RACK, covering_pairs, holding, remove_when_idle, round_robin

nodes = st.integers(min_value=2, max_value=14).map(lambda n: [f"thor-{i}" for i in range(1, n + 1)])


@given(nodes)
def test_round_robin_meets_every_pair_once_in_rounds_of_disjoint_pairs(names):
    rounds = round_robin(names)
    pairs = [pair for rnd in rounds for pair in rnd]
    assert sorted(tuple(sorted(p)) for p in pairs) == sorted(combinations(sorted(names), 2))
    for rnd in rounds:
        members = [x for pair in rnd for x in pair]
        assert len(members) == len(set(members)), f"a node twice in one round: {rnd}"
    assert len(rounds) == (len(names) - 1 if len(names) % 2 == 0 else len(names))


@given(nodes)
def test_every_node_sends_and_receives_about_equally_often(names):
    rounds = round_robin(names)
    sends = Counter(src for rnd in rounds for src, _ in rnd)
    receives = Counter(dst for rnd in rounds for _, dst in rnd)
    if len(names) > 2:
        assert min(sends[n] for n in names) >= 1 and min(receives[n] for n in names) >= 1
    assert max(sends.values()) - min(sends[n] for n in names) <= 1


def test_five_thors_take_five_rounds_of_two_pairs_each_sending_twice():
    rounds = round_robin([f"thor-{i}" for i in range(1, 6)])
    assert [len(r) for r in rounds] == [2] * 5
    assert set(Counter(src for r in rounds for src, _ in r).values()) == {2}


@given(nodes)
def test_a_covering_set_touches_every_node_in_disjoint_rounds(names):
    rounds = covering_pairs(names)
    assert {x for rnd in rounds for pair in rnd for x in pair} == set(names)
    for rnd in rounds:
        members = [x for pair in rnd for x in pair]
        assert len(members) == len(set(members)), f"a node twice in one round, or paired with itself: {rnd}"
    assert sum(len(r) for r in rounds) <= len(names) // 2 + 1


def test_one_node_or_none_has_no_pairs():
    assert round_robin(["thor-1"]) == covering_pairs(["thor-1"]) == covering_pairs([]) == []


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
