"""An inline SVG bar chart per measurement group: one bar per figure against its floor (a
solid mark) and target (a dashed mark), coloured by its verdict; beside it, when the run history
has them, the figure's last runs as a small line (this run's the dot at its end)."""

from __future__ import annotations

from html import escape

from .style import GREY, MEASUREMENT_COLORS, RED

LABEL_W, BAR_W, VALUE_W, ROW_H, TOP = 240, 440, 130, 22, 26
TREND_W = 90


def _x(value: float, scale: float) -> float:
    return LABEL_W + max(value, 0) / scale * BAR_W


def _mark(x: float, y: float, label: str, dashed: bool) -> str:
    dash = ' stroke-dasharray="3,2"' if dashed else ""
    return (f'<line x1="{x:.1f}" y1="{y + 1}" x2="{x:.1f}" y2="{y + ROW_H - 1}" stroke="{RED}" stroke-width="2"{dash}>'
            f'<title>{escape(label)}</title></line>')


def trend_line(values: list[float], x: float, y: float, subject: str, unit: str) -> str:
    """The figure's last runs, oldest first, scaled to its own range within one row."""
    low, high = min(values), max(values)
    span = (high - low) or 1.0
    step = (TREND_W - 10) / max(len(values) - 1, 1)
    xy = [(x + i * step, y + ROW_H - 5 - (v - low) / span * (ROW_H - 10)) for i, v in enumerate(values)]
    shown = ", ".join(f"{v:g}" for v in values)
    return (f'<g class="trend" data-subject="{escape(subject)}" data-values="{escape(shown)}">'
            f'<title>{escape(subject)}, the last {len(values)} runs: {escape(shown)} {escape(unit)}</title>'
            f'<polyline fill="none" stroke="#57606a" stroke-width="1.2" '
            f'points="{" ".join(f"{a:.1f},{b:.1f}" for a, b in xy)}"/>'
            f'<circle cx="{xy[-1][0]:.1f}" cy="{xy[-1][1]:.1f}" r="2.2" fill="#57606a"/></g>')


def bar_chart(group: dict, trends: dict[tuple[str, str], list[float]] | None = None) -> str:
    """`trends`: (reference, subject) -> the figure's last values from the run history."""
    trends = trends or {}
    rows = group["rows"]
    width = LABEL_W + BAR_W + VALUE_W + (TREND_W if trends else 0)
    unit = group["unit"]
    limits = [r["value"] for r in rows if r["value"] is not None]
    for r in rows:
        if r["expectation"]:
            limits += [r["expectation"]["floor"], r["expectation"]["target"] or 0]
    scale = max(limits + [0]) * 1.08 or 1.0
    height = TOP + len(rows) * ROW_H + 8
    parts = [
        f'<svg class="chart" data-kind="{escape(group["kind"])}" xmlns="http://www.w3.org/2000/svg" '
        f'width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        f'role="img" aria-label="{escape(group["kind"])} against the floor">',
        f'<text x="{LABEL_W}" y="14" font-size="11" fill="#57606a">0</text>',
        f'<text x="{LABEL_W + BAR_W}" y="14" font-size="11" fill="#57606a" text-anchor="end">{scale:.3g} {escape(unit)}</text>',
        f'<line x1="{LABEL_W}" y1="{TOP - 4}" x2="{LABEL_W}" y2="{height - 4}" stroke="#8c959f"/>',
    ]
    if any(r["expectation"] for r in rows):
        parts.append(f'<text x="{LABEL_W + BAR_W + 8}" y="14" font-size="11" fill="{RED}">| floor &#x2506; target</text>')
    for i, r in enumerate(rows):
        y = TOP + i * ROW_H
        # what fits beside the bar; a long one keeps its two ends (a link's source and destination)
        subject = r["subject"] if len(r["subject"]) <= 34 else r["subject"][:16] + "…" + r["subject"][-17:]
        parts.append(f'<text x="{LABEL_W - 8}" y="{y + 15}" font-size="12" text-anchor="end">'
                     f'<title>{escape(r["subject"])}</title>{escape(subject)}</text>')
        if r["value"] is None:
            parts.append(f'<text x="{LABEL_W + 6}" y="{y + 15}" font-size="12" font-style="italic" fill="{GREY}">'
                         f'no figure: the check {escape(r["outcome"])}</text>')
            continue
        end = _x(r["value"], scale)
        color = MEASUREMENT_COLORS.get(r["verdict"], MEASUREMENT_COLORS[None])
        parts.append(f'<rect class="bar" data-subject="{escape(r["subject"])}" data-verdict="{r["verdict"] or ""}" '
                     f'x="{LABEL_W}" y="{y + 4}" width="{end - LABEL_W:.1f}" height="{ROW_H - 8}" fill="{color}">'
                     f'<title>{escape(r["subject"])}: {r["value"]:g} {escape(unit)} ({r["verdict"] or "not judged"})</title></rect>')
        exp = r["expectation"]
        marks = []
        if exp:
            marks.append(_x(exp["floor"], scale))
            parts.append(_mark(marks[-1], y, f"floor {exp['floor']:g} {unit}", dashed=False))
            if exp["target"] is not None:
                marks.append(_x(exp["target"], scale))
                parts.append(_mark(marks[-1], y, f"target {exp['target']:g} {unit}", dashed=True))
        # the figure right of its bar and of the marks, so that neither hides it
        parts.append(f'<text x="{max([end] + marks) + 5:.1f}" y="{y + 15}" font-size="11">{r["value"]:g}</text>')
        if len(values := trends.get((r.get("reference"), r["subject"]), [])) > 1:
            parts.append(trend_line(values, LABEL_W + BAR_W + VALUE_W, y, r["subject"], unit))
    parts.append("</svg>")
    return "".join(parts)
