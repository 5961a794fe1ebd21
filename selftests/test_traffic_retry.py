"""One stream measured once more when it came in short: a moment's load is not a slow lane,
and a slow lane fails both attempts (every attempt kept, the best last)."""

import pytest

from rackproof import traffic
from rackproof.probes.iperf import IperfResult

FLOOR = 225e6


def rate(bps: float) -> IperfResult:
    return IperfResult(bps, bps, 0, 1, 5.0, "10.10.0.11", "10.10.0.12", 5201, False)


@pytest.fixture
def answers(monkeypatch):
    given = []
    monkeypatch.setattr(traffic, "iperf3", lambda *args, **kw: rate(given.pop(0)))
    return given


def attempts(answers, *figures):
    answers.extend(figures)
    return [r.received_bps for r in traffic.one_stream_attempts(None, None, "10.10.0.12", FLOOR, 5)]


def test_a_rate_over_the_floor_is_measured_once(answers):
    assert attempts(answers, 239e6) == [239e6]


def test_a_short_first_attempt_is_measured_again_and_the_best_comes_last(answers):
    assert attempts(answers, 201e6, 238e6) == [201e6, 238e6]


def test_a_slow_lane_is_short_both_times(answers):
    assert attempts(answers, 95e6, 97e6)[-1] < FLOOR
