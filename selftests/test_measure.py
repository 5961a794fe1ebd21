"""A figure or a bound that is not a finite number is refused, never judged: `nan < floor` is
false and every value is under `inf`, so either would make a check that cannot fail."""

import math

import pytest

from rackproof.inventory.figures import Expectation, Measurement, NotAFigure


@pytest.mark.parametrize("floor", [0, 0.0, -1, -22.5, math.nan, math.inf, -math.inf, "22.5", None, True])
def test_a_floor_that_cannot_fail_is_refused(floor):
    with pytest.raises(NotAFigure, match="the floor"):
        Expectation(floor)


@pytest.mark.parametrize("target", [0, -1, math.nan, math.inf])
def test_a_target_that_cannot_fail_is_refused(target):
    with pytest.raises(NotAFigure, match="the target"):
        Expectation(22.5, target)


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, None, "23.5"])
def test_a_figure_that_is_not_a_finite_number_is_refused(value):
    with pytest.raises(NotAFigure, match="lane rate of thor-1 -> thor-2"):
        Measurement("lane rate", "thor-1 -> thor-2", value, "Gbit/s", Expectation(22.5))


def test_finite_figures_are_judged_on_both_sides_of_the_floor():
    floor = Expectation(22.5, 23.5)
    assert [Measurement("lane rate", "a -> b", v, "Gbit/s", floor).verdict for v in (22.4, 23.0, 23.6)] == [
        "failed", "warned", "passed"]
    assert Expectation(2.0, better="lower").verdict(2.5) == "failed"


def test_a_figure_is_judged_as_measured_not_as_rounded():
    """A simulated bond of four 25 Mbit/s lanes has a floor of 0.9 x 4 x 0.025 Gbit/s (a hair over
    0.09 in floating point); 90.5 Mbit/s is over it and 89.9 Mbit/s under, whatever the report prints."""
    from rackproof.inventory.model import Expect
    from rackproof.inventory.references import measured
    expect = Expect(lane_rate_gbps=0.025)
    over = measured("bond.rate", "thor-1 -> thor-3", 90.5e6, "bit/s", expect, lanes=4)
    under = measured("bond.rate", "thor-1 -> thor-3", 89.9e6, "bit/s", expect, lanes=4)
    assert (over.verdict, over.value, under.verdict) == ("passed", pytest.approx(0.0905, rel=1e-12), "failed")
