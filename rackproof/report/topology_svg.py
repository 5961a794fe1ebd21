"""The rack drawn as an inline SVG from a results document's topology: the switch with its
numbered ports and each node's lanes cabled to them (or a Spark pair's direct QSFP cable with
its logical links), the bonds, and the house network the controller comes in by. Every wire,
port, interface, bond and node is coloured by its state and carries data-* attributes
(data-node, data-lane, data-port, data-state, ...) so that a browser test can find it.
"""

from __future__ import annotations

import re
from html import escape

from .style import GREY, STATE_COLORS
from .topology import state as worst

MARGIN, PORT_W, PORT_H, PORT_GAP = 24, 28, 22, 4
NIC_W, NIC_H, NIC_PITCH = 34, 16, 50
NODE_MIN_W, NODE_H, NODE_GAP = 150, 112, 22
PAIR_NODE_W, PAIR_NODE_H, PAIR_GAP = 250, 150, 300


def slug(*parts: str) -> str:
    """An id-safe name: lane-thor-3-mgbe1_0."""
    return "-".join(re.sub(r"[^A-Za-z0-9_-]", "_", p) for p in parts)


def _attrs(**data) -> str:
    """data-* attributes; None values are left out."""
    return "".join(f' data-{k.replace("_", "-")}="{escape(str(v))}"' for k, v in data.items() if v is not None)


def _title(subject: str, state: str, tests: list[str], outcomes: dict[str, str], extra: str = "") -> str:
    lines = [f"{subject}: {state}" + (f" ({extra})" if extra else "")]
    lines += [f"{outcomes.get(t, '?')}: {t.rpartition('::')[2]}" for t in tests]
    return f"<title>{escape(chr(10).join(lines))}</title>"


def _color(state: str) -> str:
    return STATE_COLORS[state]


class _Canvas:
    def __init__(self):
        self.parts: list[str] = []

    def add(self, text: str) -> None:
        self.parts.append(text)

    def text(self, x: float, y: float, text: str, size: int = 11, anchor: str = "middle", **style) -> None:
        extra = "".join(f' {k.replace("_", "-")}="{v}"' for k, v in style.items())
        self.add(f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}"{extra}>{escape(text)}</text>')


def _node_box(c: _Canvas, node: dict, role: str, x: float, y: float, w: float, h: float, outcomes: dict) -> None:
    dashed = "" if node["joined"] else ' stroke-dasharray="6,4" opacity="0.6"'
    stroke = _color(node["state"]) if node["state"] != "not checked" else "#57606a"
    c.add(f'<g class="node" id="node-{slug(node["name"])}"{_attrs(node=node["name"], state=node["state"])}>'
          + _title(node["name"], node["state"], node["tests"], outcomes) +
          f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h}" rx="6" fill="#ffffff" '
          f'stroke="{stroke}" stroke-width="2"{dashed}/></g>')
    status = role if node["joined"] else f"joins at step {node['joins_at_step']}"
    c.text(x + w / 2, y + h - 34, node["name"], 14, font_weight="700")
    c.text(x + w / 2, y + h - 20, node["address"] or "", 11, fill="#57606a")
    c.text(x + w / 2, y + h - 7, status, 10, fill="#57606a")


def _house(c: _Canvas, nodes: list[tuple[dict, float, float]], bar_y: float, width: float) -> None:
    """The house network: a bar, and each node's way in from the controller."""
    for node, cx, bottom in nodes:
        state = node["house"]
        c.add(f'<g class="house"{_attrs(node=node["name"], state=state)}>'
              f'<title>{escape(node["name"])} from the controller (SSH): {state}</title>'
              f'<line x1="{cx:.1f}" y1="{bottom:.1f}" x2="{cx:.1f}" y2="{bar_y:.1f}" stroke="{_color(state)}" '
              f'stroke-width="3"/></g>')
    c.add(f'<rect x="{MARGIN}" y="{bar_y:.1f}" width="{width - 2 * MARGIN:.1f}" height="20" rx="4" fill="#eaeef2" stroke="#8c959f"/>')
    c.text(width / 2, bar_y + 14, "house network — the controller reaches each node over SSH", 11, fill="#424a53")


def _legend(c: _Canvas, y: float) -> None:
    x = MARGIN
    for state, color in STATE_COLORS.items():
        c.add(f'<rect x="{x}" y="{y}" width="14" height="10" rx="2" fill="{color}"/>')
        c.text(x + 18, y + 9, state, 11, anchor="start")
        x += 26 + 7 * len(state)


def _switched(topology: dict, outcomes: dict) -> tuple[_Canvas, float, float]:
    """Nodes in a row under the switch, each lane wired to its port."""
    c = _Canvas()
    switch = topology["switch"]
    nodes = topology["nodes"]
    widths = [max(NODE_MIN_W, len(n["interfaces"]) * NIC_PITCH + 20) for n in nodes]
    row_w = sum(widths) + NODE_GAP * (len(nodes) - 1)
    ports = switch["ports"] if switch else 0
    # spread the ports over the row of nodes, so that cables run as straight as they can
    pitch = max(PORT_W + PORT_GAP, (row_w - 24) / ports) if ports else 0
    switch_w = ports * pitch + 2 * 12 - (pitch - PORT_W)
    width = max(row_w, switch_w) + 2 * MARGIN
    sw_x, sw_y, sw_h = (width - switch_w) / 2, 20, 56
    node_y = sw_y + sw_h + 130
    port_at: dict[int, float] = {p: sw_x + 12 + (p - 1) * pitch + PORT_W / 2 for p in range(1, ports + 1)}
    port_state: dict[int, tuple[str, dict, dict]] = {}
    x = (width - row_w) / 2
    placed = []
    for node, w in zip(nodes, widths):
        role = "head" if node is nodes[0] else "worker"
        _node_box(c, node, role, x, node_y, w, NODE_H, outcomes)
        start = x + (w - len(node["interfaces"]) * NIC_PITCH) / 2 + NIC_PITCH / 2
        centers = {}
        for k, iface in enumerate(node["interfaces"]):
            cx = start + k * NIC_PITCH
            centers[iface["name"]] = cx
            _wire(c, node, iface, cx, node_y, port_at, switch, outcomes)
            if iface.get("switch_port") in port_at and iface["connected"]:
                port_state[iface["switch_port"]] = (iface["state"], node, iface)
        if node["bond"]:
            _bond(c, node, centers, node_y, outcomes)
        placed.append((node, x + w / 2, node_y + NODE_H))
        x += w + NODE_GAP
    if switch:
        c.add(f'<g class="switch"{_attrs(switch=switch["name"])}><rect x="{sw_x:.1f}" y="{sw_y}" width="{switch_w:.1f}" '
              f'height="{sw_h}" rx="6" fill="#24292f"/></g>')
        c.text(sw_x + 10, sw_y + 15, f"{switch['name']} · {ports} ports · {switch['port_speed_mbps'] // 1000}G · FEC {switch['fec']}",
               11, anchor="start", fill="#ffffff")
        for p, cx in port_at.items():
            state, node, iface = port_state.get(p, ("not checked", None, None))
            fill = _color(state) if node else "#57606a"
            who = f"{node['name']} {iface['name']}" if node else "free"
            c.add(f'<g class="port" id="port-{p}"{_attrs(port=p, state=state if node else "free", node=node and node["name"], lane=iface and iface["name"])}>'
                  f'<title>port {p}: {escape(who)}</title>'
                  f'<rect x="{cx - PORT_W / 2:.1f}" y="{sw_y + 24}" width="{PORT_W}" height="{PORT_H}" rx="2" fill="{fill}"/></g>')
            c.text(cx, sw_y + 24 + 15, str(p), 10, fill="#ffffff", font_weight="600")
    bar_y = node_y + NODE_H + 44
    _house(c, placed, bar_y, width)
    return c, width, bar_y + 34


def _wire(c: _Canvas, node: dict, iface: dict, cx: float, node_y: float, port_at: dict, switch: dict | None,
          outcomes: dict) -> None:
    state, port, joined = iface["state"], iface.get("switch_port"), iface["joined"]
    color = _color(state)
    extra = ("not cabled" if not iface["connected"] else
             f"switch {switch['name']} port {port}" if switch and port else "") + (
             f", cable {iface['cable']}" if iface.get("cable") else "") + (
             "" if joined else f", cabled at step {iface['joins_at_step']}")
    facts = ", ".join(f"{k} {v}" for k, v in iface["facts"].items())
    title = _title(f"{node['name']} {iface['name']}", state, iface["tests"], outcomes,
                   "; ".join(p for p in (extra.strip(", "), facts) if p))
    wire = ""
    if iface["connected"] and port in port_at:
        top = node_y - NIC_H / 2
        px, py = port_at[port], 20 + 24 + PORT_H
        mid = (top + py) / 2
        dash = "" if joined else ' stroke-dasharray="6,4"'
        wire = (f'<path class="wire" d="M{cx:.1f},{top:.1f} C{cx:.1f},{mid:.1f} {px:.1f},{mid:.1f} {px:.1f},{py:.1f}" '
                f'fill="none" stroke="{color}" stroke-width="3"{dash}/>')
        if iface.get("seen_port") in port_at:
            # where LLDP says the plug really is: the plan's line stays, the real one beside it
            rx = port_at[iface["seen_port"]]
            wire += (f'<path class="wire seen" d="M{cx:.1f},{top:.1f} C{cx:.1f},{mid:.1f} {rx:.1f},{mid:.1f} {rx:.1f},{py:.1f}" '
                     f'fill="none" stroke="{_color("failed")}" stroke-width="2" stroke-dasharray="2,3">'
                     f'<title>LLDP: in port {iface["seen_port"]}, the plan says {port}</title></path>')
    fill = color if iface["connected"] else "#ffffff"
    c.add(f'<g class="lane {iface["kind"]}" id="lane-{slug(node["name"], iface["name"])}"'
          f'{_attrs(node=node["name"], lane=iface["name"], port=port, seen_port=iface.get("seen_port"), cable=iface.get("cable"), state=state)}>'
          f'{title}{wire}<rect class="nic" x="{cx - NIC_W / 2:.1f}" y="{node_y - NIC_H / 2:.1f}" width="{NIC_W}" '
          f'height="{NIC_H}" rx="2" fill="{fill}" stroke="{color}" stroke-width="2"/></g>')
    c.text(cx, node_y + 20, iface["name"], 9, fill="#424a53")


def _bond(c: _Canvas, node: dict, centers: dict, node_y: float, outcomes: dict) -> None:
    bond = node["bond"]
    xs = [centers[m] for m in bond["lanes"] if m in centers]
    if not xs:
        return
    state = bond["state"]
    built = bond["joined"]
    dash = "" if built else ' stroke-dasharray="5,3"'
    left, right = min(xs) - NIC_PITCH / 2 + 3, max(xs) + NIC_PITCH / 2 - 3
    label = f"{bond['name']} · {bond['mode']}" + ("" if built else f" (step {bond['joins_at_step']})")
    c.add(f'<g class="bond" id="bond-{slug(node["name"], bond["name"])}"{_attrs(node=node["name"], bond=bond["name"], state=state)}>'
          + _title(f"{node['name']} {bond['name']}", state, bond["tests"], outcomes, ", ".join(bond["lanes"])) +
          f'<rect x="{left:.1f}" y="{node_y + 26:.1f}" width="{right - left:.1f}" height="18" rx="9" '
          f'fill="none" stroke="{_color(state) if built else GREY}" stroke-width="2"{dash}/></g>')
    c.text((left + right) / 2, node_y + 39, label, 10, fill="#24292f")


def _paired(topology: dict, outcomes: dict) -> tuple[_Canvas, float, float]:
    """Two nodes side by side, the direct cable's logical links between their interfaces."""
    c = _Canvas()
    a, b = topology["nodes"][:2]
    width = 2 * PAIR_NODE_W + PAIR_GAP + 2 * MARGIN
    ax, bx, y = MARGIN, MARGIN + PAIR_NODE_W + PAIR_GAP, 30
    _node_box(c, a, "head", ax, y, PAIR_NODE_W, PAIR_NODE_H, outcomes)
    _node_box(c, b, "worker", bx, y, PAIR_NODE_W, PAIR_NODE_H, outcomes)
    ends = {(n["name"], i["name"]): i for n in (a, b) for i in n["interfaces"]}
    cables = topology["cables"]
    overall = worst(link["state"] for link in cables)
    left, right = ax + PAIR_NODE_W, bx
    c.add(f'<g class="cable" id="cable-qsfp"{_attrs(cable="qsfp", state=overall)}><title>direct QSFP cable: {overall}</title>'
          f'<rect x="{left - 6:.1f}" y="{y + 12}" width="{right - left + 12:.1f}" height="{len(cables) * 40 + 8}" rx="12" '
          f'fill="#f6f8fa" stroke="{_color(overall)}" stroke-width="2"/></g>')
    c.text((left + right) / 2, y + 12 + len(cables) * 40 + 24, "QSFP cable (ConnectX-7), one logical link per interface pair", 10,
           fill="#57606a")
    for k, link in enumerate(cables):
        ly = y + 34 + k * 40
        ia, ib = ends[tuple(link["a"])], ends[tuple(link["b"])]
        state = link["state"]
        c.add(f'<g class="link"{_attrs(a=":".join(link["a"]), b=":".join(link["b"]), state=state)}>'
              f'<title>{escape(" ↔ ".join(":".join(e) for e in (link["a"], link["b"])))}: {state}</title>'
              f'<line x1="{left:.1f}" y1="{ly}" x2="{right:.1f}" y2="{ly}" stroke="{_color(state)}" stroke-width="4"/></g>')
        c.text((left + right) / 2, ly - 6, f"{ia.get('address', '')}  ↔  {ib.get('address', '')}", 10, fill="#424a53")
        for node, iface, edge, anchor in ((a, ia, left, "end"), (b, ib, right, "start")):
            c.add(f'<g class="lane cx7" id="lane-{slug(node["name"], iface["name"])}"'
                  f'{_attrs(node=node["name"], lane=iface["name"], rdma=iface.get("rdma_device"), state=iface["state"])}>'
                  + _title(f"{node['name']} {iface['name']}", iface["state"], iface["tests"], outcomes, iface.get("address", "")) +
                  f'<rect x="{edge - 8:.1f}" y="{ly - 7}" width="16" height="14" rx="2" fill="{_color(iface["state"])}"/></g>')
            offset = -12 if anchor == "end" else 12
            c.text(edge + offset, ly + 4, f"{iface['name']} ({iface.get('rdma_device', '')})", 10, anchor=anchor)
    placed = [(a, ax + PAIR_NODE_W / 2, y + PAIR_NODE_H), (b, bx + PAIR_NODE_W / 2, y + PAIR_NODE_H)]
    bar_y = y + PAIR_NODE_H + 44
    _house(c, placed, bar_y, width)
    return c, width, bar_y + 34


def draw(topology: dict, outcomes: dict[str, str]) -> str:
    """The SVG; `outcomes` ({test id: outcome}) names each check's result in the tooltips."""
    c, width, height = (_paired if topology["cables"] and not topology["switch"] else _switched)(topology, outcomes)
    _legend(c, height - 4)
    height += 14
    return (f'<svg class="topology" xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
            f'viewBox="0 0 {width:.0f} {height:.0f}" role="img" aria-label="rack topology">'
            + "".join(c.parts) + "</svg>")
