"""A run on one screen of Markdown, where CI shows it: appended to $GITHUB_STEP_SUMMARY when that
is set (GitHub Actions' job summary), else summary.md in the report folder.

Messages are node output: hostile. Each is one line, clipped, with every character Markdown or
HTML could act on escaped, so that it cannot forge a heading, a link, an image or a table row.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

from rackproof.probes.safetext import one_line

from . import verdict

SHOWN = 10          # problems listed; the rest are counted (one screen)
CLIP = 160          # characters of a message
FILE = "summary.md"
# what could start emphasis, code, a link or image, a heading or a table cell inside a line (< > & are HTML-escaped)
_MARKDOWN = re.compile(r"([\\`*_\[\]#!|~])")


def _text(value: object, clip: int = CLIP) -> str:
    text = one_line(str(value))
    if len(text) > clip:
        text = text[:clip - 1] + "…"
    return _MARKDOWN.sub(r"\\\1", html.escape(text, quote=False))


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


def markdown(doc: dict, folder: Path) -> str:
    run, result = doc["run"], doc["verdict"]
    counts = ", ".join(f"{n} {outcome}" for outcome, n in doc["counts"].items() if n)
    how = f"replay of {_text(run['replay'])}" if run["replay"] else "live"
    lines = [f"## rackproof: {_text(verdict.line(result))}", "",
             _text(result["summary"], 600), "",
             "| | |", "|---|---|",
             f"| cluster | {_text(run['cluster'])}, step {_text(run['step'])}, {how} |",
             f"| ticket | {_text(run['ticket'] or '(none given)')} (operator {_text(run['operator'] or '(none given)')}) |",
             f"| checks | {_text(counts or 'none')} |",
             f"| report | {_text(folder)} |", ""]
    problems = [t for t in doc["tests"] if t["outcome"] in ("failed", "error", "not verified")]
    if problems:
        lines.append(f"**{len(problems)} not passed**" + (f" (the first {SHOWN})" if len(problems) > SHOWN else ""))
        lines += [f"- {_text(t['outcome'])}: {_text(t['id'], 100)}: {_text(_first_line(t['message']))}"
                  for t in problems[:SHOWN]]
        lines.append("")
    if result["drift"]:
        lines.append("**Drift from the run history**")
        lines += [f"- {_text(verdict.drift_line(d))}" for d in result["drift"][:SHOWN]]
        lines.append("")
    return "\n".join(lines) + "\n"


def write(doc: dict, folder: Path, step_summary: str | None) -> Path:
    """Where the summary went: appended to `step_summary` (GitHub's file) when given, else (or
    when that cannot be written: the terminal then names the folder's file) summary.md in the
    report folder."""
    text = markdown(doc, folder)
    if step_summary:
        try:
            with open(step_summary, "a", encoding="utf-8") as f:
                f.write(text)
            return Path(step_summary)
        except OSError:
            pass
    (folder / FILE).write_text(text, encoding="utf-8")
    return folder / FILE
