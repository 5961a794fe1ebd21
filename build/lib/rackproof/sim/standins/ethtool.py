"""ethtool IFACE, ethtool --show-fec IFACE (-I), ethtool -i IFACE.

Speed, duplex, port and FEC come from the node's model; `Link detected:` comes from the real
veth (operstate). A lane without link prints `Speed: Unknown!` and `Duplex: Unknown! (255)`.
"""

from __future__ import annotations

import sys

from . import exists, link_up, model

DRIVERS = {"lane": ("nvethernet", "1.0", "0000:00:00.0"), "cx7": ("mlx5_core", "25.07-0.9.7", "0000:01:00.1"),
           "mgmt": ("r8127", "11.015.00-NAPI", "0008:01:00.0")}


def _no_device(iface: str) -> int:
    sys.stderr.write("netlink error: no device matches name (offset 24)\nnetlink error: No such device\n")
    return 1


def run(tool: str, args: list[str]) -> int:
    mode = "settings"
    stats = False
    rest = []
    for a in args:
        if a == "--show-fec":
            mode = "fec"
        elif a in ("-i", "--driver"):
            mode = "driver"
        elif a in ("-I", "--include-statistics"):
            stats = True
        elif a in ("--version",):
            print("ethtool version 6.7")
            return 0
        elif a.startswith("-"):
            continue      # --json and others: not modelled, print the plain format
        else:
            rest.append(a)
    if not rest:
        sys.stderr.write("ethtool: bad command line argument(s)\nFor more information run ethtool -h\n")
        return 1
    iface = rest[0]        # `ethtool A B C` reports only A
    if not exists(iface):
        return _no_device(iface)
    m = model()
    spec = m["interfaces"].get(iface)
    if mode == "fec":
        return _fec(iface, spec, stats)
    if mode == "driver":
        return _driver(iface, spec)
    return _settings(iface, spec, m)


def _settings(iface: str, spec: dict | None, m: dict) -> int:
    from rackproof.probes.ethtool import LinkInfo, render_ethtool
    up = link_up(iface)
    if iface == "lo":
        sys.stdout.write(f"Settings for {iface}:\n\tLink detected: yes\n")
        return 0
    if spec is None and m.get("bond") and iface == m["bond"]["name"]:
        lanes = [lane for lane in m["bond"]["lanes"] if link_up(lane)]
        speed = sum(m["interfaces"][lane]["speed"] for lane in lanes) if lanes else None
        info = LinkInfo(interface=iface, speed_mbps=speed if up and speed else None,
                        duplex="Full" if up and speed else None, link_detected=up, port="Other",
                        auto_negotiation=False)
    elif spec is None:           # veth plumbing of the rack: what ethtool says of a veth
        info = LinkInfo(interface=iface, speed_mbps=10000, duplex="Full", link_detected=up,
                        port="Twisted Pair", auto_negotiation=False)
    else:
        info = LinkInfo(
            interface=iface,
            supported_link_modes=tuple(spec.get("modes", ())),
            advertised_link_modes=tuple(spec.get("modes", ())[-1:]) if spec.get("autoneg") == "on" else (),
            speed_mbps=spec["speed"] if up else None,
            duplex=spec.get("duplex", "Full") if up else None,
            auto_negotiation=spec.get("autoneg") == "on",
            port=spec.get("port"),
            link_detected=up,
        )
    sys.stdout.write(render_ethtool(info))
    return 0


def _fec(iface: str, spec: dict | None, stats: bool) -> int:
    from rackproof.probes.fec import FecInfo, render_fec
    if spec is None or not spec.get("fec_configured") or spec.get("kind") == "mgmt":
        sys.stderr.write("netlink error: Operation not supported\n")
        return 1
    info = FecInfo(interface=iface, configured=tuple(spec["fec_configured"]), active=(spec["fec_active"],),
                   corrected_blocks=0 if stats else None, uncorrectable_blocks=0 if stats else None)
    sys.stdout.write(render_fec(info))
    return 0


def _driver(iface: str, spec: dict | None) -> int:
    kind = (spec or {}).get("kind")
    driver, version, bus = DRIVERS.get(kind, ("veth", "1.0", ""))
    sys.stdout.write(
        f"driver: {driver}\nversion: {version}\nfirmware-version: {'28.45.1200' if kind == 'cx7' else ''}\n"
        f"expansion-rom-version: \nbus-info: {bus}\nsupports-statistics: yes\nsupports-test: "
        f"{'yes' if kind == 'cx7' else 'no'}\nsupports-eeprom-access: {'yes' if kind else 'no'}\n"
        "supports-register-dump: no\nsupports-priv-flags: "
        f"{'yes' if kind == 'cx7' else 'no'}\n")
    return 0
