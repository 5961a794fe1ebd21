"""The shared calendar the chapter starts step 9 with, as its iCalendar export (.ics) read by
the icalendar library: each event is a reservation. Its LOCATION names the node, its SUMMARY
begins with the holder's login ("mira" or "mira: fine-tune"), DTSTART and DTEND give the
window with their time zone. An event that repeats (RRULE) or spans whole days is refused:
a slice is a window of hours on one node, and a calendar exports each one as its own event.
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass

MAX_EVENTS = 10_000


class CalendarError(ValueError):
    """A calendar that cannot be read as reservations; the message names the event."""


@dataclass(frozen=True)
class CalendarRow:
    person: str
    node: str
    start: datetime.datetime
    end: datetime.datetime


def parse_calendar(data: bytes) -> list[CalendarRow]:
    import icalendar   # here: most inventories name no calendar, and the library costs every run's start 25 ms

    try:
        calendar = icalendar.Calendar.from_ical(data)
    except Exception as e:  # noqa: BLE001 - the library raises ValueError and others for a broken file
        raise CalendarError(f"not an iCalendar file: {str(e)[:200]}") from None
    events = calendar.walk("VEVENT")
    if len(events) > MAX_EVENTS:
        raise CalendarError(f"{len(events)} events; a shelf's calendar holds at most {MAX_EVENTS}")
    return [_row(k, event) for k, event in enumerate(events)]


def _row(k: int, event) -> CalendarRow:
    summary = str(event.get("SUMMARY", "")).strip()
    where = f"event {k + 1} ({summary[:60] or 'no SUMMARY'})"
    if event.get("RRULE"):
        raise CalendarError(f"{where} repeats (RRULE): give each window as its own event")
    login = re.match(r"[^\s:,;]+", summary)
    node = str(event.get("LOCATION", "")).strip()
    if not login or not node:
        raise CalendarError(f"{where}: SUMMARY must begin with the holder's login and LOCATION name the node")
    try:
        start = event.decoded("DTSTART")
        end = event.decoded("DTEND") if event.get("DTEND") else start + event.decoded("DURATION")
    except Exception:  # noqa: BLE001 - a missing or unreadable time, whichever the library raises
        raise CalendarError(f"{where}: DTSTART and DTEND (or DURATION) must be times") from None
    for moment in (start, end):
        if not isinstance(moment, datetime.datetime):
            raise CalendarError(f"{where} lasts whole days: a slice is a window of hours")
        if moment.tzinfo is None:
            raise CalendarError(f"{where} has a time without a time zone (a floating time)")
    return CalendarRow(login[0], node, start, end)
