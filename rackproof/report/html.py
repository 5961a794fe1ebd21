"""report.html, drawn from a results document: self-contained (inline CSS and SVG, no script,
no external asset), readable offline and printable. What a ticket reader needs comes first:
the verdict and why, what changed, the rack as built; then figures, nodes, every check with
its evidence folded until opened, and what was not checked.
"""

from __future__ import annotations

import datetime as dt
import html

from rackproof.inventory.model import FINISHED
from rackproof.probes.safetext import shown

from . import measurements, topology_svg, verdict as verdicts
from .charts import bar_chart
from .outcomes import OUTCOMES
from .style import CAPABILITY_COLORS, CSS, MEASUREMENT_COLORS, OUTCOME_COLORS, STATE_COLORS, VERDICT_COLORS

SECTIONS = [("verdict", "Verdict"), ("spark", "Spark minimal acceptance"), ("changes", "Changes"), ("topology", "Topology"), ("measurements", "Measurements"),
            ("configuration", "Configuration"), ("nodes", "Nodes"), ("checks", "Checks"), ("scope", "Scope"), ("waivers", "Waivers")]


def escape(text: str) -> str:
    """Text for the page: HTML-escaped, and control characters from a node shown as escapes."""
    return html.escape(shown(text))


def _anchor(test_id: str) -> str:
    return "test-" + topology_svg.slug(test_id)


def _short(test_id: str) -> str:
    return test_id.rpartition("::")[2]


def _link(test_id: str) -> str:
    return f'<a href="#{_anchor(test_id)}"><code>{escape(_short(test_id))}</code></a>'


def _badge(label: str, color: str, **data) -> str:
    attrs = "".join(f' data-{k}="{escape(str(v))}"' for k, v in data.items())
    return f'<span class="badge" style="background:{color}"{attrs}>{escape(label)}</span>'


def _outcome(outcome: str) -> str:
    return _badge(outcome, OUTCOME_COLORS[outcome], outcome=outcome)


def _state(state: str) -> str:
    return _badge(state, STATE_COLORS[state], state=state)


def _table(headers: list[str], rows: list[list[str]], cls: str = "") -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _time(iso: str) -> str:
    return iso.replace("T", " ")


def _setting(value) -> str:
    """An [expect] value as cluster.toml writes it."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value) if isinstance(value, str) else f"{value:g}" if isinstance(value, float) else str(value)


def _header(doc: dict, files: list[tuple[str, str]]) -> str:
    run, verdict = doc["run"], doc["verdict"]
    decision = verdict["decision"]
    rows = [
        ("Cluster", escape(run["cluster"])), ("Platform", escape(run["platform"])),
        ("Build step", f"{run['step']}" + (" (the finished cluster)" if run["step"] == FINISHED else "")),
        ("Verdict", f"<b>{escape(verdicts.line(verdict))}</b>"),
        ("Ticket", escape(run["ticket"]) or '<span class="muted">none given (--ticket)</span>'),
        ("Operator", escape(run["operator"]) or '<span class="muted">none given (--operator)</span>'),
        ("Start", escape(_time(run["started"]))), ("End", escape(_time(run["finished"]))),
        ("Duration", f"{run['duration_s']:.1f} s"),
        ("Inventory", f"<code>{escape(run['inventory']['path'])}</code><br>sha256 <code>{run['inventory']['sha256']}</code>"),
        ("rackproof", escape(run["rackproof_version"])),
        ("Command line", f"<code>{escape(run['command_line'])}</code>"),
    ]
    if run["replay"]:
        rows.append(("Answers from", f"recording <code>{escape(run['replay'])}</code> (not the live cluster)"))
    changed = run["expectations_changed"]
    rows.append(("Expectations changed by the inventory", "<br>".join(
        f"<code>{escape(c['setting'])} = {escape(_setting(c['value']))}</code> "
        f"<span class=\"muted\">(default {escape(_setting(c['default']))})</span>" for c in changed)
        or '<span class="muted">none: the platform\'s defaults</span>'))
    rows.append(("Workers", f"{run['xdist_workers']} (pytest-xdist)" if run["xdist_workers"] else "serial run"))
    rows.append(("Files", " · ".join(f'<a href="{escape(href)}">{escape(label)}</a>' for label, href in files)))
    counts = " ".join(f'{_outcome(o)} {doc["counts"][o]}' for o in OUTCOMES)
    nav = "".join(f'<a href="#{key}">{label}</a>' for key, label in SECTIONS
                  if key != "spark" or doc.get("spark_acceptance") is not None)
    return (f'<h1>rackproof acceptance report — {escape(run["cluster"])}</h1><nav>{nav}</nav>'
            f'<div id="verdict-banner" class="verdict" data-verdict="{escape(decision)}" '
            f'style="background:{VERDICT_COLORS[decision]}"><span class="decision">{escape(verdicts.line(verdict))}</span>'
            f'<span class="summary">{escape(verdict["summary"])}</span></div>'
            f'<p class="counts">{counts}</p><table class="header"><tbody>'
            + "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in rows) + _bundle_slot() + "</tbody></table>")


def _bundle_slot() -> str:
    """Where `rackproof bundle` writes the bundle's contents digest (rackproof.ticket.bundle: the page
    cannot hold the digest of a manifest that covers the page)."""
    return ('<tr><th>Bundle contents digest</th><td id="bundle-digest"><span class="muted">not bundled: '
            "<code>rackproof bundle</code> writes it here, and <code>rackproof verify</code> prints it</span></td></tr>")


def _why(cap: dict, shown: int = 5) -> str:
    """The checks that took a capability away: the first few with their message, then a count."""
    items = [f'<li>{_link(w["test"])} {escape(_clip(w["message"]))}</li>' for w in cap["why"][:shown]]
    if len(cap["why"]) > shown:
        items.append(f'<li class="muted">and {len(cap["why"]) - shown} more (see Checks)</li>')
    return f"<ul>{''.join(items)}</ul>"


def _clip(text: str, limit: int = 240) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _verdict(doc: dict) -> str:
    caps = doc["verdict"]["capabilities"]
    lists = []
    for title, blocks in (("What blocks the cluster", True), ("Limited capabilities", False)):
        hit = [c for c in caps if c["blocks"] == blocks and c["status"] in ("blocked", "limited", "unconfirmed")]
        if hit:
            lists.append(f"<h3>{title}</h3><ul>" + "".join(
                f'<li data-capability="{escape(c["name"])}" data-status="{c["status"]}"><b>{escape(c["name"])}</b>: '
                f'{"could not be confirmed" if c["status"] == "unconfirmed" else "failed"}{_why(c)}</li>' for c in hit) + "</ul>")
    rows = [[_badge(c["status"], CAPABILITY_COLORS[c["status"]], status=c["status"]), escape(c["name"]),
             "blocks the cluster" if c["blocks"] else "limits only this",
             escape(", ".join(f"{n} {o}" for o, n in c["counts"].items()))] for c in caps]
    if drifted := doc["verdict"].get("drift"):
        lists.append('<h3>Drifted from the run history</h3><ul id="drift">' + "".join(
            f'<li data-reference="{escape(d["reference"])}" data-subject="{escape(d["subject"])}">{_link(d["test"])} '
            f'{escape(verdicts.drift_line(d))}</li>' for d in drifted) + "</ul>")
    return (f'<h2 id="verdict">Verdict: {escape(verdicts.line(doc["verdict"]))}</h2>'
            f'<p>{escape(doc["verdict"]["summary"])}.</p>{_incomplete(doc["verdict"]["coverage"], doc["tests"])}{"".join(lists)}'
            "<h3>Capabilities</h3><p class='muted'>Each check guards a capability; a failure of a blocking one "
            "rejects the cluster, any other only takes that capability away. Checks that declare none count as blocking.</p>"
            + _table(["status", "capability", "if it fails", "checks"], rows))


def _incomplete(coverage: dict, tests: list[dict]) -> str:
    """What the run left out of its scope: a reviewer must see it before anything else."""
    if coverage["complete"]:
        return ""
    items = []
    if coverage["interrupted"]:
        items.append(f"<li>The run stopped early: {escape(coverage['interrupted'])}.</li>")
    if coverage["narrowed_by"]:
        items.append(f"<li>Narrowed by {escape(', '.join(coverage['narrowed_by']))}.</li>")
    not_run = coverage["not_run"]
    if not_run:
        listed = "".join(f"<li><code>{escape(_short(t))}</code></li>" for t in not_run)
        items.append(f"<li>{len(not_run)} check{'s' * (len(not_run) != 1)} of the scope did not run:"
                     f'<ul id="not-run">{listed}</ul></li>')
    rebooted = verdicts.rebooted_under(tests, tuple(coverage["cut_short"]))
    for (node, when), cut in _grouped(rebooted).items():
        listed = "".join(f"<li><code>{escape(_short(t))}</code></li>" for t in cut)
        items.append(f"<li>{len(cut)} check{'s' * (len(cut) != 1)} measured before {escape(node)} rebooted at "
                     f'{escape(when)}, never judged on those facts (run again):<ul class="rebooted">{listed}</ul></li>')
    if cut_short := [t for t in coverage["cut_short"] if t not in rebooted]:
        listed = "".join(f"<li><code>{escape(_short(t))}</code></li>" for t in cut_short)
        items.append(f"<li>{len(cut_short)} check{'s' * (len(cut_short) != 1)} cut short by a transient fault "
                     f'(a dropped SSH connection, a refused channel, a busy lock; run again):<ul id="cut-short">{listed}</ul></li>')
    return f'<div class="incomplete"><h3>This run is incomplete</h3><ul>{"".join(items)}</ul></div>'


def _grouped(rebooted: dict[str, tuple[str, str]]) -> dict[tuple[str, str], list[str]]:
    """The checks a reboot cut short, by (node, when)."""
    groups: dict[tuple[str, str], list[str]] = {}
    for test, reboot in rebooted.items():
        groups.setdefault(reboot, []).append(test)
    return groups


def _changes(doc: dict) -> str:
    base = doc["baseline"]
    if not base:
        return '<h2 id="changes">Changes</h2><p class="muted">No baseline given (--baseline results.json of an earlier run).</p>'
    parts = [f'<h2 id="changes">Changes since the baseline</h2><p>Baseline <code>{escape(base["path"])}</code>: '
             f'{escape(base["cluster"])}, {escape(_time(base["started"]))}, verdict {escape(base["verdict"])}. '
             f'Figures are flagged when they moved by more than {base["tolerance"]:.0%}.</p>']
    parts.append("<h3>New failures</h3>" + (_table(["check", "now", "before", "message"], [
        [_link(f["test"]), _outcome(f["outcome"]), escape(f["was"] or "not run"), escape(f["message"].splitlines()[0] if f["message"] else "")]
        for f in base["new_failures"]]) if base["new_failures"] else "<p>none</p>"))
    parts.append("<h3>Fixed</h3>" + (_table(["check", "now", "before"], [
        [_link(f["test"]), _outcome(f["outcome"]), escape(f["was"])] for f in base["fixed"]]) if base["fixed"] else "<p>none</p>"))
    parts.append("<h3>Figures that moved</h3>" + (_table(["kind", "subject", "before", "now", "change", ""], [
        [escape(m["kind"]), escape(m["subject"]), f'{m["before"]:g} {escape(m["unit"])}', f'{m["after"]:g} {escape(m["unit"])}',
         f'<b data-change="{m["change"]}">{m["change"]:+.1%}</b>', escape(m["direction"])] for m in base["moved"]])
        if base["moved"] else "<p>none</p>"))
    return "".join(parts)


def _what_changed(doc: dict) -> str:
    """--before: what the change did on each node, as a change reviewer reads it."""
    found = doc["what_changed"]
    if found is None:
        return ""
    head = (f'<h2 id="what-changed">What this change did</h2><p>Snapshot <code>{escape(found["snapshot"])}</code> '
            f'taken {escape(_time(found["before"]) if found["before"] else "before the change")}')
    if found["after"] is None:
        return head + f'; {escape(found["note"])}.</p>'
    head += f', compared with the cluster at {escape(_time(found["after"]))}.</p>'
    if not found["changes"]:
        return head + "<p>Nothing changed on any node.</p>"
    return head + _table(["node", "fact", "what changed"], [
        [escape(c["node"]), escape(c["fact"]), escape(c["words"])] for c in found["changes"]])


def _topology(doc: dict) -> str:
    topo = doc["topology"]
    outcomes = {t["id"]: t["outcome"] for t in doc["tests"]}
    lanes = []
    for node in topo["nodes"]:
        if not node["interfaces"]:
            lanes.append([escape(node["name"]), "—", "", "", "", _state("not checked"), ""])
        for iface in node["interfaces"]:
            where = (f'port {iface["switch_port"]}' if iface.get("switch_port") else
                     escape(iface.get("address", "")) if iface["kind"] == "cx7" else "not cabled")
            reported = ", ".join(f"{escape(k)} {escape(str(v))}" for k, v in iface["facts"].items())
            lanes.append([escape(node["name"]), f"<code>{escape(iface['name'])}</code>", where,
                          escape(iface.get("cable") or iface.get("rdma_device") or ""), reported or "—",
                          _state(iface["state"]), ", ".join(_link(t) for t in iface["tests"])])
    pairs = ""
    if topo["pairs"]:
        names = [n["name"] for n in topo["nodes"]]
        cell = {(p["src"], p["dst"]): p for p in topo["pairs"]}
        rows = []
        for src in names:
            cells = []
            for dst in names:
                p = cell.get((src, dst))
                if p:
                    cells.append(f'<td class="cell" data-src="{escape(src)}" data-dst="{escape(dst)}" data-state="{p["state"]}" '
                                 f'style="background:{STATE_COLORS[p["state"]]}" title="{escape(", ".join(_short(t) for t in p["tests"]))}">'
                                 f'{escape(p["state"])}</td>')
                else:
                    cells.append('<td class="muted">—</td>')
            rows.append(f"<tr><th>{escape(src)}</th>{''.join(cells)}</tr>")
        pairs = ("<h3>Pairs (from → to)</h3><table class='pairs'><thead><tr><th></th>"
                 + "".join(f"<th>{escape(n)}</th>" for n in names) + "</tr></thead><tbody>" + "".join(rows) + "</tbody></table>")
    return (f'<h2 id="topology">Topology as built (step {topo["step"]})</h2>'
            "<p class='muted'>Each lane, link, bond and node is coloured by the checks that touched it; hover for them. "
            "Dashed: joins at a later step.</p>"
            f'<div class="topology-box">{topology_svg.draw(topo, outcomes)}</div>{pairs}'
            "<h3>Lanes and links</h3>"
            + _table(["node", "interface", "switch port / address", "cable / RDMA device", "reported", "state", "checks"], lanes))


def _measurements(doc: dict) -> str:
    groups = measurements.groups(doc["tests"])
    if not groups:
        return '<h2 id="measurements">Measurements</h2><p class="muted">No check of this run measured a figure.</p>'
    found = doc.get("history")
    trends = {(t["reference"], t["subject"]): t["values"] for t in found["trends"]} if found else {}
    parts = ['<h2 id="measurements">Measurements</h2>' + (
        f'<p class="muted">Beside each bar, the figure\'s last {max(map(len, trends.values()), default=0)} runs '
        f'(of {found["runs"]} in <code>{escape(found["path"])}</code>), this run\'s the dot at the end.</p>'
        if trends else '<p class="muted">This run is not in a run history (a --replay run is not recorded).</p>')]
    parts.append(_per_link(doc))
    for group in groups:
        rows = []
        for r in group["rows"]:
            exp = r["expectation"] or {}
            value = f'{r["value"]:g}' if r["value"] is not None else f'<span class="muted">no figure ({escape(r["outcome"])})</span>'
            rows.append([escape(r["subject"]), value, escape(r["unit"]),
                         f'{exp["floor"]:g}' if exp else "—", f'{exp["target"]:g}' if exp.get("target") is not None else "—",
                         escape(exp.get("better", "")) + (" is better" if exp else ""),
                         _outcome(r["verdict"]) if r["verdict"] else escape(r["outcome"] if r["value"] is None else "not judged"),
                         _link(r["test"])])
        parts.append(f'<h3>{escape(group["kind"])} ({escape(group["unit"])})</h3>{bar_chart(group, trends)}'
                     + _table(["subject", "value", "unit", "floor", "target", "", "verdict", "check"], rows))
    return "".join(parts)


def _per_link(doc: dict) -> str:
    """Each CX7 link's RDMA figures in both directions on one row: a direction slower than the
    other stands out beside its twin."""
    links = measurements.per_link(doc["tests"])
    if not links:
        return ""

    def cell(r: dict | None) -> str:
        if r is None:
            return '<td class="muted">—</td>'
        if r["value"] is None:
            return f'<td class="muted">no figure ({escape(r["outcome"])})</td>'
        exp = r["expectation"] or {}
        bound = f' title="floor {exp["floor"]:g} {escape(r["unit"])}, {escape(exp.get("better", ""))} is better"' if exp else ""
        return (f'<td data-verdict="{escape(r["verdict"] or "")}" style="color:{MEASUREMENT_COLORS[r["verdict"]]}"{bound}>'
                f'<b>{r["value"]:g}</b> {escape(r["unit"])}</td>')
    rows = "".join(
        f'<tr><td>{escape(link["ends"][0])}<br>&#8644; {escape(link["ends"][1])}</td>'
        + "".join(cell(link["figures"].get((ref, way))) for ref in measurements.PER_LINK for way in ("forward", "back"))
        + "</tr>" for link in links)
    return ('<h3>RoCE per link and direction</h3><p class="muted">Each CX7 link (interface and RDMA device at both '
            "ends) with its ib_write_bw bandwidth and ib_write_lat latency each way: &#8594; from the first end to "
            "the second, &#8592; back; the tables below have each figure with its bound and check.</p>"
            '<table class="per-link"><thead><tr><th>link</th><th>bandwidth &#8594;</th><th>bandwidth &#8592;</th>'
            f"<th>latency &#8594;</th><th>latency &#8592;</th></tr></thead><tbody>{rows}</tbody></table>")


def _config_value(value: str) -> str:
    """A value as the table shows it: a long one (an image's digest) clipped, whole on hover."""
    if len(value) <= 48:
        return escape(value)
    return f'<span title="{escape(value)}">{escape(value[:28])}&#8230;</span>'


def _config_cell(cell: dict) -> str:
    state = cell["state"]
    if state == "unread":
        return f'<td class="unread" data-state="unread">unread: {escape(cell["unread"])}</td>'
    if state == "not asked":
        return '<td class="not-asked" data-state="not asked" title="no check of this run asked this node">—</td>'
    return f'<td class="{state}" data-state="{state}">{_config_value(cell["value"])}</td>'


def _configuration(doc: dict) -> str:
    """The golden-configuration table: a row per setting, a column per node, the odd cell marked."""
    rows = doc.get("configuration") or []
    head = '<h2 id="configuration">Configuration</h2>'
    if not rows:
        return head + '<p class="muted">No check of this run read a node\'s configuration.</p>'
    names = [node["name"] for node in doc["nodes"]]
    body = "".join(
        f'<tr data-setting="{escape(r["setting"])}"><th>{escape(r["setting"])}<br><code class="muted">'
        f'{escape(r["source"])}</code></th>' + "".join(_config_cell(r["cells"][n]) for n in names)
        + f'<td class="muted">{_config_value(r["expected"] or "—")} <small>({escape(r["basis"])})</small></td></tr>'
        for r in rows)
    odd = sum(cell["state"] == "odd" for r in rows for cell in r["cells"].values())
    unread = sum(cell["state"] == "unread" for r in rows for cell in r["cells"].values())
    return (head + '<p class="muted">What each node runs, as the run\'s checks read it: a cell marked &#8800; differs '
            "from the value the inventory pins, else from the one most nodes have (with no majority, every "
            "value differs); an unread cell says why, and is never taken for equal; — : no check asked that node. "
            f"{odd} odd, {unread} unread.</p>"
            + '<table class="configuration"><thead><tr><th>setting</th>'
            + "".join(f"<th>{escape(n)}</th>" for n in names) + "<th>expected</th></tr></thead>"
            f"<tbody>{body}</tbody></table>")


def _nodes(doc: dict) -> str:
    keys: list[str] = []
    for node in doc["nodes"]:
        keys += [k for k in node["facts"] if k not in keys]
    rows = []
    for node in doc["nodes"]:
        reach = node["reach"]
        status = (f'not joined (step {node["joins_at_step"]})' if not node["joined"] else
                  f'unreachable: {reach["reason"]}' if reach["status"] == "unreachable" else reach["status"])
        counts = ", ".join(f"{n} {o}" for o, n in node["counts"].items() if n) or "no check"
        rows.append([f'<b data-node="{escape(node["name"])}">{escape(node["name"])}</b>', escape(node["role"]),
                     escape(node["address"] or "—"), escape(status)]
                    + [escape(str(node["facts"].get(k, "—"))) for k in keys] + [escape(counts)])
    return ('<h2 id="nodes">Nodes</h2><p class="muted">Every node of the inventory, reached or not; '
            "facts are what the node itself reported.</p>" + _table(["node", "role", "address", "reached"] + keys + ["checks"], rows))


def evidence_html(records: list[dict], test_id: str) -> str:
    """The commands a check ran, each with its exit status and output, folded under one line
    (results.json's evidence records): in report.html and in pytest-html's page alike."""
    if not records:
        return '<div class="muted">no command ran on a node</div>'
    nodes = sorted({e["node"] for e in records})
    blocks = []
    for e in records:
        status = ", ".join(filter(None, (e["exit_status"] is not None and f'exit {e["exit_status"]}', e["note"])))
        when = dt.datetime.fromtimestamp(e["started"]).strftime("%H:%M:%S")
        out = f'<pre>{escape(e["stdout"]) or "<span class=muted>(no output)</span>"}</pre>'
        if e["stderr"].strip():
            out += f'<pre class="stderr">{escape(e["stderr"])}</pre>'
        blocks.append(f'<div class="cmd"><div class="cmdline"><b>{escape(e["node"])}</b> $ <code>{escape(e["command"])}</code>'
                      f' <span class="muted">— {escape(status)}, {e["duration"]:.2f} s, at {when}</span></div>{out}</div>')
    total = sum(e["duration"] for e in records)
    return (f'<details class="evidence" data-test="{escape(test_id)}"><summary>evidence: {len(records)} command'
            f'{"s" * (len(records) != 1)} on {escape(", ".join(nodes))}, {total:.2f} s</summary>{"".join(blocks)}</details>')


def _detail(test: dict) -> str:
    parts = [f'<div class="{field}">{escape(test[field])}</div>' for field in ("message", "hint") if test[field]]
    waiver = test["waiver"]
    if waiver:
        what = "waived" if waiver["status"] == "applied" else f'waiver expired on {waiver["expires"]} (counts as none)'
        parts.append(f'<div class="note">{escape(what)}: {escape(waiver["justification"])} — approved by '
                     f'{escape(waiver["approved_by"])}, until {escape(waiver["expires"])}</div>')
    for m in test["measurements"]:
        parts.append(f'<div class="muted">{escape(m["kind"])}: {escape(m["subject"])} {m["value"]:g} {escape(m["unit"])}'
                     + (f' ({m["verdict"]})' if m["verdict"] else "") + "</div>")
    return "".join(parts) + evidence_html(test["evidence"], test["id"])


def _checks(doc: dict) -> str:
    groups: dict[str, list[dict]] = {}
    for test in doc["tests"]:
        groups.setdefault(test["id"].partition("[")[0], []).append(test)
    parts = ['<h2 id="checks">Checks</h2>']
    for name, tests in groups.items():
        counts = ", ".join(f"{n} {o}" for o in OUTCOMES if (n := sum(t["outcome"] == o for t in tests)))
        rows = [f'<tr id="{_anchor(t["id"])}" data-outcome="{t["outcome"]}"><td>{_outcome(t["outcome"])}</td>'
                f'<td><code>{escape(_short(t["id"]))}</code></td>'
                f'<td>{escape((t["capability"] or {}).get("name", "—"))}</td><td>{t["duration"]:.2f} s</td>'
                f"<td>{_detail(t)}</td></tr>" for t in tests]
        parts.append(f'<h3><code>{escape(name)}</code> <span class="muted">— {escape(counts)}</span></h3>'
                     '<table class="checks"><thead><tr><th>outcome</th><th>test</th><th>capability</th><th>time</th>'
                     f'<th>details</th></tr></thead><tbody>{"".join(rows)}</tbody></table>')
    if not groups:
        parts.append("<p class='muted'>No check ran.</p>")
    return "".join(parts)


def _spark(doc: dict) -> str:
    """The Spark guide's five items, each with its state and the tests behind it (Spark only)."""
    items = doc.get("spark_acceptance")
    if items is None:
        return ""
    rows = [[_state(i["state"]), escape(i["item"]) + (f'<div class="muted">{escape(i["why"])}</div>' if i["why"] else ""),
             ", ".join(_link(t) for t in i["tests"]) or '<span class="muted">none ran</span>'] for i in items]
    return ('<h2 id="spark">Spark minimal acceptance</h2><p class="muted">The Spark guide\'s test before agents are '
            'pointed at a multi-node endpoint: an item passes only when every check behind it ran and passed.</p>'
            + _table(["state", "item", "tests"], rows, "spark-acceptance"))


def _scope(doc: dict) -> str:
    if not doc["scope"]:
        return '<h2 id="scope">Scope: not checked</h2><p>Every check of the suite ran.</p>'
    rows = [[f'<code>{escape(s["check"])}</code>', "<br>".join(escape(r) for r in s["reasons"]), str(s["count"])]
            for s in doc["scope"]]
    return ('<h2 id="scope">Scope: not checked</h2><p class="muted">Checks this run did not make, and why.</p>'
            + _table(["check", "why not", "items"], rows))


def _waivers(doc: dict) -> str:
    if not doc["waivers"]:
        return '<h2 id="waivers">Waivers</h2><p class="muted">No waiver file given (--waivers).</p>'
    rows = [[escape(w["status"]), f'<code>{escape(w["check"])}</code>', escape(w["node"] or "any"), escape(w["justification"]),
             escape(w["approved_by"]), escape(w["expires"]), ", ".join(_link(t) for t in w["tests"]) or "—"]
            for w in doc["waivers"]]
    return ('<h2 id="waivers">Waivers</h2>'
            + _table(["status", "check", "node", "justification", "approved by", "expires", "tests"], rows))


def render(doc: dict, files: list[tuple[str, str]]) -> str:
    """The page; `files` are (label, relative link) of the run's other files."""
    body = "".join(f(doc) for f in (_verdict, _spark, _what_changed, _changes, _topology, _measurements, _configuration, _nodes,
                                        _checks, _scope, _waivers))
    title = f'{verdicts.line(doc["verdict"])} — {doc["run"]["cluster"]} — rackproof'
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{escape(title)}</title><style>{CSS}</style></head><body>"
            + _header(doc, files) + body
            + f'<footer>rackproof {escape(doc["run"]["rackproof_version"])} · results schema {escape(doc["schema_version"])}'
            "</footer></body></html>\n")
