"""Colours and the stylesheet of report.html, in one place: the SVGs use the same colours."""

RED, ORANGE, PURPLE, GREEN, AMBER, GREY, SLATE = "#c62828", "#e65100", "#6a1b9a", "#2e7d32", "#f9a825", "#9e9e9e", "#607d8b"

STATE_COLORS = {"failed": RED, "error": ORANGE, "unconfirmed": ORANGE, "waived": PURPLE, "passed": GREEN,
                "not checked": GREY, "not verified": SLATE}
OUTCOME_COLORS = {"passed": GREEN, "warned": AMBER, "failed": RED, "error": ORANGE, "skipped": GREY, "waived": PURPLE,
                  "not verified": SLATE}
VERDICT_COLORS = {"ACCEPTED": GREEN, "ACCEPTED WITH LIMITS": AMBER, "REJECTED": RED, "INCOMPLETE": ORANGE}
CAPABILITY_COLORS = {"blocked": RED, "limited": AMBER, "unconfirmed": ORANGE, "available": GREEN, "not checked": GREY,
                     "not verified": SLATE}
MEASUREMENT_COLORS = {"passed": GREEN, "warned": AMBER, "failed": RED, None: SLATE}

CSS = """
:root { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; color: #1f2328; }
body { margin: 0 auto; max-width: 1280px; padding: 0 24px 48px; line-height: 1.4; }
h1 { font-size: 22px; margin: 20px 0 8px; }
h2 { font-size: 18px; margin: 32px 0 10px; padding-bottom: 4px; border-bottom: 1px solid #d0d7de; }
h3 { font-size: 15px; margin: 20px 0 6px; }
nav a { margin-right: 14px; font-size: 13px; }
code, pre { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, monospace; font-size: 12px; }
pre { background: #f6f8fa; border: 1px solid #d0d7de; border-radius: 4px; padding: 8px; overflow-x: auto;
      white-space: pre-wrap; word-break: break-word; margin: 4px 0 8px; }
table { border-collapse: collapse; width: 100%; font-size: 13px; margin: 6px 0; }
th, td { border: 1px solid #d0d7de; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f6f8fa; font-weight: 600; }
td:first-child { white-space: nowrap; }
table.header { width: auto; }
table.header th { width: 150px; }
.verdict { color: #fff; border-radius: 6px; padding: 14px 18px; margin: 12px 0; }
.verdict .decision { font-size: 26px; font-weight: 700; letter-spacing: .5px; display: block; }
.verdict .summary { font-size: 14px; }
.badge { display: inline-block; min-width: 62px; text-align: center; color: #fff; border-radius: 3px;
         padding: 1px 6px; font-size: 12px; font-weight: 600; }
.counts .badge { margin-right: 6px; }
.muted { color: #656d76; }
.message { white-space: pre-wrap; margin: 2px 0; }
.hint { color: #57606a; margin: 2px 0; }
.hint::before { content: "\\1F6C8  "; }
.note { color: #6a1b9a; margin: 2px 0; }
details.evidence { margin: 4px 0; }
details.evidence > summary { cursor: pointer; color: #0969da; font-size: 12px; }
.cmd { margin: 6px 0 0 12px; }
.cmdline { font-size: 12px; }
.stderr { border-color: #e65100; }
svg text { font-family: system-ui, "DejaVu Sans", sans-serif; }
svg.topology, svg.chart { max-width: 100%; height: auto; }
.topology .lane:hover path, .topology .lane:hover rect { stroke-width: 5; }
td.cell { text-align: center; color: #fff; font-weight: 600; }
.legend span { display: inline-block; margin-right: 14px; font-size: 12px; }
.legend i { display: inline-block; width: 12px; height: 12px; border-radius: 2px; margin-right: 4px; vertical-align: -1px; }
table.configuration td { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, monospace; font-size: 12px; }
table.configuration td.odd { background: #ffebe9; color: #c62828; font-weight: 700; }
table.configuration td.odd::before { content: "\\2260  "; }
table.configuration td.unread { color: #656d76; font-style: italic; font-family: inherit; }
table.configuration td.not-asked { color: #9e9e9e; text-align: center; }
footer { margin-top: 36px; font-size: 12px; color: #656d76; }
@media print { details.evidence { display: none; } nav { display: none; } }
"""
