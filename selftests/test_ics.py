"""The shared calendar's .ics export read as reservations (rackproof.inventory.ics, and [slices] calendar
in cluster.toml). Real exports: ics_google_calendar_export_icalendar_tests.ics (Google Calendar
70.9054) and ics_thunderbird_export_icalendar_tests.ics (Thunderbird), both from the test
calendars of the icalendar library (collective/icalendar, src/icalendar/tests/calendars:
alarm_google_future.ics, alarm_thunderbird_future.ics). Their events name no node (no
LOCATION), so they are refused, naming the event. Calendars with reservations are written here
with the same library, as the simulated rack writes its own."""

import datetime
from pathlib import Path

import icalendar
import pytest
from hypothesis import given, settings, strategies as st

from rackproof.inventory.ics import CalendarError, parse_calendar
from rackproof.inventory.model import InventoryError, load_inventory
from rackproof.judging.sharing import overlaps

SAMPLES = Path(__file__).parent / "samples"
UTC = datetime.timezone.utc
AT = datetime.datetime(2026, 12, 4, 7, 0, tzinfo=UTC)


def calendar(*events: dict) -> bytes:
    cal = icalendar.Calendar()
    cal.add("prodid", "-//rackproof selftest//EN")
    cal.add("version", "2.0")
    for k, fields in enumerate(events):
        event = icalendar.Event()
        event.add("uid", f"{k}@selftest")
        for key, value in fields.items():
            event.add(key, value)
        cal.add_component(event)
    return cal.to_ical()


def slot(person="mira", node="thor-3", start=0, hours=6, **more) -> dict:
    return {"summary": f"{person}: fine-tune", "location": node, "dtstart": AT + datetime.timedelta(hours=start),
            "dtend": AT + datetime.timedelta(hours=start + hours), **more}


@pytest.mark.parametrize("name", ["ics_google_calendar_export_icalendar_tests.ics",
                                  "ics_thunderbird_export_icalendar_tests.ics"])
def test_real_exports_without_a_node_are_refused_naming_the_event(name):
    with pytest.raises(CalendarError, match=r"event 1 \(event with alarms\).*LOCATION"):
        parse_calendar((SAMPLES / name).read_bytes())


def test_reservations_with_their_time_zone():
    amsterdam = datetime.datetime(2026, 12, 4, 14, 0, tzinfo=__import__("zoneinfo").ZoneInfo("Europe/Amsterdam"))
    rows = parse_calendar(calendar(slot(), {"summary": "kofi", "location": "thor-3", "dtstart": amsterdam,
                                            "duration": datetime.timedelta(hours=4)}))
    assert [(r.person, r.node) for r in rows] == [("mira", "thor-3"), ("kofi", "thor-3")]
    assert rows[1].end - rows[1].start == datetime.timedelta(hours=4) and rows[1].start.utcoffset()


@pytest.mark.parametrize("event, says", [
    (slot(rrule={"freq": "daily"}), "repeats"),
    ({"summary": "mira", "location": "thor-3", "dtstart": datetime.date(2026, 12, 4),
      "dtend": datetime.date(2026, 12, 5)}, "whole days"),
    ({"summary": "mira", "location": "thor-3", "dtstart": datetime.datetime(2026, 12, 4, 7),
      "dtend": datetime.datetime(2026, 12, 4, 9)}, "without a time zone"),
    ({"summary": "mira", "dtstart": AT, "dtend": AT}, "LOCATION"),
])
def test_what_a_slice_cannot_be(event, says):
    with pytest.raises(CalendarError, match=says):
        parse_calendar(calendar(event))


def test_garbage_is_one_error():
    with pytest.raises(CalendarError, match="not an iCalendar file"):
        parse_calendar(b"\x00\xffgarbage")


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400) | st.text(max_size=400).map(lambda t: ("BEGIN:VCALENDAR\r\n" + t).encode()))
def test_any_bytes_give_rows_or_a_calendar_error(data):
    try:
        rows = parse_calendar(data)
    except CalendarError:
        return
    assert all(r.start.tzinfo and r.end.tzinfo for r in rows)


def inventory_with(tmp_path: Path, ics: bytes, extra: str = "") -> Path:
    (tmp_path / "slices.ics").write_bytes(ics)
    text = (Path(__file__).parents[1] / "examples" / "thor5.toml").read_text()
    text = text.split("\n[slices]")[0]   # the example's own calendar table is replaced
    path = tmp_path / "cluster.toml"
    path.write_text(text + f'\n[slices]\nholders = ["mira", "kofi"]\ncalendar = "{tmp_path / "slices.ics"}"\n{extra}')
    return path


def test_the_calendars_reservations_join_the_files_and_are_judged_together(tmp_path):
    extra = 'reservations = [{ person = "kofi", node = "thor-3", start = 2026-12-04T12:00:00Z, ' \
            'end = 2026-12-04T15:00:00Z }]\n'
    inventory = load_inventory(inventory_with(tmp_path, calendar(slot()), extra))
    found = overlaps(inventory.slices.reservations)
    assert [(o.first.person, o.second.person) for o in found] == [("mira", "kofi")]


@pytest.mark.parametrize("event, says", [(slot(node="thor-9"), "no node named thor-9"),
                                         (slot(person="eve"), "eve is not in slices.holders"),
                                         (slot(hours=-1), "before it starts")])
def test_a_bad_row_is_one_line_naming_the_event(tmp_path, event, says):
    with pytest.raises(InventoryError) as raised:
        load_inventory(inventory_with(tmp_path, calendar(event)))
    (line,) = raised.value.problems
    assert line.startswith("slices.calendar (") and "event 1" in line and says in line, line


def test_a_missing_calendar_is_one_line(tmp_path):
    path = inventory_with(tmp_path, b"")
    (tmp_path / "slices.ics").unlink()
    with pytest.raises(InventoryError) as raised:
        load_inventory(path)
    assert raised.value.problems == [f"slices.calendar ({tmp_path / 'slices.ics'}): cannot read it: "
                                     "No such file or directory"]
