"""The memory across runs: every run's verdict and every figure it measured, in a local SQLite
database, keyed by cluster, reference key (`lane.rate`) and subject (`thor-1 -> thor-2`).

A slow slide (a lane from 24.9 to 23.1 Gbit/s over ten builds, an engine at half its tokens/s
after a driver update) stays above its floor and so passes every single run; against the recent
median of the same figure it shows, before it has lost much of its margin above its floor (`drift`).
"""

from __future__ import annotations

import sqlite3
import statistics
from dataclasses import dataclass
from pathlib import Path

from rackproof.probes.safetext import one_line

USER_VERSION = 30001          # PRAGMA user_version: tells our database from any other SQLite file
BUSY_TIMEOUT_S = 10           # another run writing at the same moment: wait this long at most
SCHEMA = """
CREATE TABLE runs (id INTEGER PRIMARY KEY, cluster TEXT NOT NULL, started TEXT NOT NULL, step INTEGER,
                   verdict TEXT NOT NULL, ticket TEXT NOT NULL, operator TEXT NOT NULL, inventory_sha256 TEXT NOT NULL);
CREATE TABLE figures (run INTEGER NOT NULL REFERENCES runs(id), reference TEXT NOT NULL, subject TEXT NOT NULL,
                      kind TEXT NOT NULL, value REAL NOT NULL, unit TEXT NOT NULL);
CREATE INDEX figures_by_key ON figures (reference, subject);
"""


class HistoryError(Exception):
    """A history database that cannot be read or written: one line naming the file and why."""


@dataclass(frozen=True)
class Point:
    started: str
    verdict: str
    value: float


@dataclass(frozen=True)
class Drift:
    """A figure worse than its recent median by more than `share` of it (its threshold)."""

    reference: str
    subject: str
    value: float
    median: float
    unit: str
    runs: int          # how many earlier figures the median is of
    share: float       # the share that was allowed

    @property
    def change(self) -> float:
        return (self.value - self.median) / abs(self.median)

    def as_dict(self) -> dict:
        return {"reference": self.reference, "subject": self.subject, "value": self.value, "median": self.median,
                "unit": self.unit, "runs": self.runs, "share": self.share, "change": round(self.change, 4)}


def _connect(path: str | Path, write: bool) -> sqlite3.Connection:
    where = one_line(str(path))
    if not write and not Path(path).is_file():
        raise HistoryError(f"{where}: no history database there (a run writes it)")
    try:
        if write:   # the default lies beside the reports, whose folder a first run makes
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        # mode=ro: reading never creates a file; uri so that the path is taken as it is
        uri = Path(path).resolve().as_uri() + ("?mode=rwc" if write else "?mode=ro")
        db = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_S)
        version = db.execute("PRAGMA user_version").fetchone()[0]
        tables = db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        if version == 0 and tables == 0 and write:
            with db:
                db.executescript(SCHEMA + f"PRAGMA user_version = {USER_VERSION};")
        elif version != USER_VERSION:
            db.close()
            raise HistoryError(f"{where}: not a rackproof history database (user_version {version})")
        return db
    except OSError as e:
        raise HistoryError(f"{where}: no folder for the history database ({e.strerror})") from None
    except sqlite3.Error as e:
        raise HistoryError(f"{where}: not a readable history database ({one_line(str(e))})") from None


def check(path: str | Path) -> None:
    """Open (or create) the database once: a broken file is refused before a run measures anything."""
    _connect(path, write=True).close()


def append(path: str | Path, doc: dict) -> int:
    """Add a results document's verdict and figures (those with a reference key); the run's id."""
    run = doc["run"]
    db = _connect(path, write=True)
    try:
        with db:
            cursor = db.execute(
                "INSERT INTO runs (cluster, started, step, verdict, ticket, operator, inventory_sha256) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (run["cluster"], run["started"], run["step"], doc["verdict"]["decision"], run["ticket"] or "",
                 run["operator"] or "", run["inventory"]["sha256"]))
            figures = [(cursor.lastrowid, m["reference"], m["subject"], m["kind"], m["value"], m["unit"])
                       for t in doc["tests"] for m in t["measurements"] if m.get("reference")]
            db.executemany("INSERT INTO figures VALUES (?, ?, ?, ?, ?, ?)", figures)
        return cursor.lastrowid
    except sqlite3.Error as e:
        raise HistoryError(f"{one_line(str(path))}: cannot record the run ({one_line(str(e))})") from None
    finally:
        db.close()


def points(path: str | Path, cluster: str | None = None, reference: str | None = None, subject: str | None = None,
           last: int = 20) -> dict[tuple[str, str, str, str], list[Point]]:
    """{(cluster, reference, subject, unit): its last `last` points, oldest first}; filters optional."""
    db = _connect(path, write=False)
    try:
        rows = db.execute(
            "SELECT r.cluster, f.reference, f.subject, f.unit, r.started, r.verdict, f.value FROM figures f "
            "JOIN runs r ON r.id = f.run WHERE (? IS NULL OR r.cluster = ?) AND (? IS NULL OR f.reference = ?) "
            "AND (? IS NULL OR f.subject = ?) ORDER BY r.id",
            (cluster, cluster, reference, reference, subject, subject)).fetchall()
    except sqlite3.Error as e:
        raise HistoryError(f"{one_line(str(path))}: cannot read it ({one_line(str(e))})") from None
    finally:
        db.close()
    found: dict[tuple[str, str, str, str], list[Point]] = {}
    for cluster_, ref, subj, unit, started, verdict, value in rows:
        found.setdefault((cluster_, ref, subj, unit), []).append(Point(started, verdict, value))
    return {key: series[-last:] for key, series in found.items()}


def section(path: str | Path, doc: dict, runs: int = 5) -> dict:
    """results.json's `history`: the file, how many runs of the cluster it holds, and each figure of
    this run (already appended) with the values drift judged it by: its `runs` earlier values
    ([history] runs, the window of the median) and this run's, oldest first."""
    cluster = doc["run"]["cluster"]
    series = points(path, cluster, last=runs + 1)
    db = _connect(path, write=False)
    try:
        recorded = db.execute("SELECT count(*) FROM runs WHERE cluster = ?", (cluster,)).fetchone()[0]
    except sqlite3.Error as e:
        raise HistoryError(f"{one_line(str(path))}: cannot read it ({one_line(str(e))})") from None
    finally:
        db.close()
    keys = dict.fromkeys((m["reference"], m["subject"], m["unit"]) for t in doc["tests"] for m in t["measurements"]
                         if m.get("reference"))
    trends = [{"reference": ref, "subject": subj, "unit": unit,
               "values": [p.value for p in series.get((cluster, ref, subj, unit), [])]} for ref, subj, unit in keys]
    return {"path": str(path), "runs": recorded, "trends": trends}


# A figure with a floor drifts once it has lost this part of its margin above the floor (its
# median's distance to it): the warning comes while most of the margin is left, before a run fails.
MARGIN_WARNS = 1 / 3
# However much the figure's own runs spread, it drifts before it has lost this part of its margin.
MARGIN_AT_MOST = 1 / 2


def threshold(recent: list[float], floor: float | None, share: float) -> float:
    """How far below the median of `recent` a figure may fall before it drifts, as a share of the
    median: `share` ([history] drift_share) for a figure without a floor; with one, a third of its
    margin above the floor, or twice the widest spread of its recent values around their median
    when that is more (a noisy figure does not warn on its noise), never more than half the margin
    nor more than `share`. A lane at 95.6% of its line rate with its floor at 90% drifts 1.95%
    below its median (a fixed 5% would warn only after the floor had failed)."""
    median = statistics.median(recent)
    if floor is None:
        return share
    margin = (median - floor) / median
    spread = max(abs(v - median) for v in recent) / median
    return min(share, margin * MARGIN_AT_MOST, max(margin * MARGIN_WARNS, 2 * spread))


def drift(earlier: list[float], value: float, reference: str, subject: str, unit: str, share: float, runs: int,
          floor: float | None = None, least: int = 3) -> Drift | None:
    """The drift of `value` against the median of the last `runs` earlier values, when it dropped
    below it by more than its `threshold` (its floor's margin, at most `share`); None with fewer
    than `least` earlier values, or when the median is not above the floor (those runs failed:
    nothing to drift from). Only for figures where higher is better (rates, tokens/s): counts where
    lower is better (corrected FEC blocks, a first token's delay) swing by a large share from one
    run to the next by themselves."""
    recent = earlier[-runs:]
    if len(recent) < least:
        return None
    median = statistics.median(recent)
    if median <= 0 or (floor is not None and median <= floor):
        return None
    found = Drift(reference, subject, value, median, unit, len(recent), round(threshold(recent, floor, share), 4))
    return found if -found.change > found.share else None
