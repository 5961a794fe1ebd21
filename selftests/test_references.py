"""Every figure is judged against a named reference whose bound follows from [expect]: the
table gives finite, positive bounds for the example inventories, converts units in one place,
and a simulated rack's lane rate is the simulator's [expect] setting, not a product field."""

import math
from pathlib import Path

import pytest

from rackproof.inventory.model import Expect, InventoryError, load_inventory, parse_inventory
from rackproof.inventory.references import REFERENCES, SETTINGS, convert, first_token_wait_s, lane_gbps, reference

EXAMPLES = Path(__file__).parents[1] / "examples"
COUNTS = {"bond.rate": {"lanes": 4}, "bond.rate.lane_down": {"lanes": 4}, "bond.rate.lane_back": {"lanes": 4},
          "bond.rate.lane_down_ceiling": {"lanes": 4}, "tokens": {"floor": 30.0}}


@pytest.mark.parametrize("example", sorted(p.name for p in EXAMPLES.glob("*.toml")))
def test_every_bound_is_finite_and_positive(example):
    expect = load_inventory(EXAMPLES / example).expect
    for name, ref in REFERENCES.items():
        e = ref.expectation(expect, **COUNTS.get(name, {}))
        assert e is None or (math.isfinite(e.floor) and e.floor > 0), name


def test_the_thor_shelf_references():
    expect = load_inventory(EXAMPLES / "thor5.toml").expect
    assert reference("lane.rate").expectation(expect).floor == pytest.approx(22.5)
    assert reference("bond.rate").expectation(expect, lanes=4).floor == pytest.approx(90)
    assert reference("bond.rate.lane_down").expectation(expect, lanes=4).floor == pytest.approx(67.5)
    ceiling = reference("lane.one_stream_ceiling").expectation(expect)
    assert ceiling.verdict(35) == "failed" and ceiling.verdict(23.5) == "passed"   # 1.3 lanes: 32.5
    assert reference("first_token").expectation(expect).verdict(6000) == "failed"
    assert reference("tokens").expectation(expect) is None        # no floor given: recorded only
    assert reference("rtt").expectation(expect) is None


def test_a_lane_rate_in_expect_scales_the_rate_references_only():
    text = (EXAMPLES / "thor5.toml").read_text().replace("[expect]", "[expect]\nlane_rate_gbps = 0.25")
    expect = parse_inventory(text).expect
    assert lane_gbps(expect) == 0.25 and expect.lane_speed_mbps == 25000   # ethtool still says 25000Mb/s
    assert reference("bond.rate").expectation(expect, lanes=4).floor == pytest.approx(0.9)
    assert reference("roce.port").expectation(expect).floor == expect.roce_floor_gbps


def with_expect(lines: str):
    return parse_inventory((EXAMPLES / "thor5.toml").read_text().replace("[expect]", f"[expect]\n{lines}")).expect


@pytest.mark.parametrize("lines, wait", [("", 30), ("first_token_seconds = 10", 40),
                                         ("first_token_seconds = 2\nfirst_token_wait_seconds = 8", 8)])
def test_a_chat_waits_well_beyond_the_first_token_bound(lines, wait):
    assert first_token_wait_s(with_expect(lines)) == wait


def test_a_wait_for_the_first_token_within_its_bound_is_refused():
    with pytest.raises(InventoryError, match=r"expect: first_token_wait_seconds \(5\) must be above "
                                             r"first_token_seconds \(5\)"):
        with_expect("first_token_wait_seconds = 5")


def test_units_are_converted_in_one_place():
    assert convert(23.5e9, "bit/s", "Gbit/s") == pytest.approx(23.5)
    assert convert(0.042, "s", "ms") == pytest.approx(42)
    assert convert(20100, "ms", "s") == pytest.approx(20.1)
    assert convert(7.0, "GB/s", "GB/s") == 7.0
    with pytest.raises(ValueError):
        convert(1.0, "Gbit/s", "GB/s")


def test_a_measurement_compares_its_raw_figure_with_the_bound_in_its_own_unit():
    expect = load_inventory(EXAMPLES / "thor5.toml").expect   # 25 GbE lanes, floors at 90%
    assert reference("lane.rate").bound_in("bit/s", expect) == pytest.approx(22.5e9)
    assert reference("bond.rate").bound_in("bit/s", expect, lanes=4) == pytest.approx(90e9)


def test_kinds_and_units_are_the_report_s():
    kinds = {(r.kind, r.unit) for r in REFERENCES.values()}
    assert ("lane rate", "Gbit/s") in kinds and ("bonded rate", "Gbit/s") in kinds and ("RoCE", "Gb/s") in kinds
    assert all(r.rule for r in REFERENCES.values())


def test_every_bound_s_setting_is_the_inventory_s_field():
    made = {name for name, field in Expect.model_fields.items() if "setting" in (field.json_schema_extra or {})}
    assert made == {s.name for s in SETTINGS}
    for setting in SETTINGS:
        field = Expect.model_fields[setting.name]
        assert field.default == setting.default and field.description == setting.doc
        assert field.annotation == (float if setting.default is not None else float | None)   # a figure's bound
    assert {r.setting for r in REFERENCES.values() if r.setting} <= set(SETTINGS)


def _outside(setting):
    """A value just outside the setting's range, and the one line cluster.toml gets for it."""
    def n(x):
        return f"{x:.0f}" if float(x).is_integer() else f"{x:g}"
    if setting.gt is not None:
        yield setting.gt, f"should be greater than {n(setting.gt)}"
    if setting.ge is not None:
        yield setting.ge - 0.5, f"should be greater than or equal to {n(setting.ge)}"
    if setting.lt is not None:
        yield setting.lt, f"should be less than {n(setting.lt)}"
    if setting.le is not None:
        yield setting.le * 2, f"should be less than or equal to {n(setting.le)}"


@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: s.name)
def test_a_setting_s_range_is_what_cluster_toml_is_checked_against(setting):
    assert setting.le is not None or setting.lt is not None   # no absurd magnitude
    for value, line in _outside(setting):
        with pytest.raises(InventoryError) as e:
            with_expect(f"{setting.name} = {value!r}")
        assert e.value.problems == [f"expect.{setting.name}: {line}"]
    assert getattr(with_expect(""), setting.name) == setting.default
