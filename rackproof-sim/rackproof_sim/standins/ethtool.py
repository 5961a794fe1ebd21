"""ethtool IFACE, ethtool --show-fec IFACE (-I), ethtool -i IFACE, ethtool -S IFACE.

Speed, duplex, port and FEC come from the node's model; `Link detected:` comes from the real
veth (operstate). A lane without link prints `Speed: Unknown!` and `Duplex: Unknown! (255)`.
Error counters (-S, and -I's FEC blocks) grow with the bytes the veth really received, at the
model's rates per GB (`errors_per_gb`): a marginal cable's grow only while traffic flows.
"""

from __future__ import annotations

import re
import sys

from . import exists, link_up, model, sysfs

# The CX7's as a DGX Spark on DGX OS 7 prints them (inbox mlx5_core: the kernel's release; the
# firmware with its PSID); the Thor's MGBE and the Spark's management port are not from a capture.
DRIVERS = {"lane": ("nvethernet", "1.0", "0000:00:00.0"),
           "cx7": ("mlx5_core", "6.17.0-1029-nvidia", "0000:01:00.0"),
           "mgmt": ("r8127", "11.015.00-NAPI", "0008:01:00.0")}
CX7_FIRMWARE = "28.45.4028 (NVD0000000087)"
# predictable names of PCI functions: [P<domain>]p<bus>s<slot>f<function>
_PCI_NAME = re.compile(r"en(?:P(\d+))?p(\d+)s(\d+)f(\d+)")


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
        elif a in ("-S", "--statistics"):
            mode = "statistics"
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
    if mode == "statistics":
        return _statistics(iface, spec)
    return _settings(iface, spec, m)


def _settings(iface: str, spec: dict | None, m: dict) -> int:
    from rackproof.probes.ethtool import LinkInfo
    from rackproof_sim.formats.ethtool import render_ethtool
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
    from rackproof.probes.fec import FecInfo
    from rackproof_sim.formats.fec import render_fec
    if spec is None or not spec.get("fec_configured") or spec.get("kind") == "mgmt":
        sys.stderr.write("netlink error: Operation not supported\n")
        return 1
    info = FecInfo(interface=iface, configured=tuple(spec["fec_configured"]), active=(spec["fec_active"],),
                   corrected_blocks=_grown(iface, spec, "fec_corrected") if stats else None,
                   uncorrectable_blocks=_grown(iface, spec, "fec_uncorrectable") if stats else None)
    sys.stdout.write(render_fec(info))
    return 0


def _counter(iface: str, name: str) -> int:
    return int(sysfs(iface, f"statistics/{name}") or 0)


def _grown(iface: str, spec: dict, kind: str) -> int:
    """An error counter: the model's rate per GB times the GB the veth has received."""
    return int(_counter(iface, "rx_bytes") / 1e9 * spec.get("errors_per_gb", {}).get(kind, 0))


def _statistics(iface: str, spec: dict | None) -> int:
    """The counters a Thor's MGBE (NVIDIA's nvethernet names them) or a CX7 port keeps."""
    from rackproof_sim.formats.counters import render_ethtool_stats
    if spec is None:
        sys.stderr.write("no stats available\n")
        return 1
    crc = _grown(iface, spec, "crc")
    if spec.get("kind") == "cx7":
        counters = {"rx_bytes_phy": _counter(iface, "rx_bytes"), "tx_bytes_phy": _counter(iface, "tx_bytes"),
                    "rx_packets_phy": _counter(iface, "rx_packets"), "rx_crc_errors_phy": crc,
                    "rx_symbol_err_phy": crc, "rx_discards_phy": _counter(iface, "rx_dropped"), "rx_pause_ctrl_phy": 0}
    else:   # nvethernet's MMC counters, a few of them in its own order (no rx_crc_errors, no rx_dropped)
        counters = {"mmc_tx_octetcount_gb": _counter(iface, "tx_bytes"),
                    "mmc_tx_framecount_gb": _counter(iface, "tx_packets"),
                    "mmc_rx_framecount_gb": _counter(iface, "rx_packets"),
                    "mmc_rx_octetcount_gb": _counter(iface, "rx_bytes"), "mmc_rx_crc_error": crc,
                    "mmc_rx_align_error": 0, "mmc_rx_pause_frames": 0, "mmc_rx_fifo_overflow": 0}
    sys.stdout.write(render_ethtool_stats(counters))
    return 0


def _bus(iface: str, default: str) -> str:
    """The PCI address a predictable interface name encodes (enP2p1s0f1np1: 0002:01:00.1)."""
    named = _PCI_NAME.match(iface)
    if not named:
        return default
    domain, bus, slot, function = (int(part or 0) for part in named.groups())
    return f"{domain:04x}:{bus:02x}:{slot:02x}.{function}"


def _firmware(spec: dict) -> str:
    """The CX7's firmware: the model's where a fault set one (firmware-differs), else DGX OS 7's."""
    return spec.get("firmware", CX7_FIRMWARE)


def _driver(iface: str, spec: dict | None) -> int:
    kind = (spec or {}).get("kind")
    driver, version, bus = DRIVERS.get(kind, ("veth", "1.0", ""))
    if kind == "cx7":
        bus = _bus(iface, bus)
    # mlx5_core answers "no" to eeprom access (its module EEPROM is read through ethtool -m)
    sys.stdout.write(
        f"driver: {driver}\nversion: {version}\nfirmware-version: {_firmware(spec) if kind == 'cx7' else ''}\n"
        f"expansion-rom-version: \nbus-info: {bus}\nsupports-statistics: yes\nsupports-test: "
        f"{'yes' if kind == 'cx7' else 'no'}\nsupports-eeprom-access: {'yes' if kind in ('lane', 'mgmt') else 'no'}\n"
        "supports-register-dump: no\nsupports-priv-flags: "
        f"{'yes' if kind == 'cx7' else 'no'}\n")
    return 0
