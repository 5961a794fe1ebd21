"""/proc/net/bonding/BOND -> BondInfo: mode, hash policy, aggregator and each member's LACP state.

The file repeats key names: per member ("Slave Interface:" starts one), and inside a member in
its "details actor lacp pdu:" and "details partner lacp pdu:" blocks. Keys are therefore read in
scopes. "MII Status: up" alone proves nothing: a member is really in the bond only when
`BondSlave.in_aggregator` says so.

The kernel prints "System MAC address", "Active Aggregator Info" and the lacp pdu details only
to a reader with CAP_NET_ADMIN: read the file as root, or those fields come back None.
"""

import re
from dataclasses import dataclass

from . import ParseError
from ._text import int_value
from .ethtool import split_key_value
from rackproof.probes.probe import Probe

TOOL = "/proc/net/bonding"

LACP_MODE = "IEEE 802.3ad Dynamic link aggregation"
# LACP actor port state bits (IEEE 802.1AX): a member carries traffic once it is in sync with its
# partner and collecting and distributing (61 slow, 63 "LACP rate: fast"; 60/62 a passive actor);
# "defaulted" or "expired" say its partner fell silent (69/71/77/79 in real files)
SYNC, COLLECTING, DISTRIBUTING, DEFAULTED, EXPIRED = 0x08, 0x10, 0x20, 0x40, 0x80
_ZERO_MAC = "00:00:00:00:00:00"
# "layer3+4 (1)": the kernel adds the policy's number, the name is what the guides use.
_HASH_POLICY = re.compile(r"(\S+)(?: \([0-9]+\))?")
_SPEED = re.compile(r"([0-9]{1,20}) Mbps")

# Scope headers: the keys after them belong to that block until a blank line or the next header.
_BLOCKS = {"Active Aggregator Info:": "aggregator",
           "details actor lacp pdu:": "actor",
           "details partner lacp pdu:": "partner"}


@dataclass(frozen=True)
class BondSlave:
    name: str
    mii_status: str                     # "up", "down" (also "going down", "going back")
    speed_mbps: int | None = None       # None for "Speed: Unknown" (a down member)
    duplex: str | None = None           # "full", "half"; None for "Unknown"
    link_failure_count: int | None = None
    perm_hwaddr: str | None = None
    aggregator_id: int | None = None    # None for "Aggregator ID: N/A" and outside 802.3ad
    actor_port_state: int | None = None
    partner_mac: str | None = None      # the switch's (or peer's) LACP system MAC; zeros: no partner
    partner_oper_key: int | None = None
    partner_port_state: int | None = None

    def in_aggregator(self, active_aggregator_id: int | None) -> bool:
        """Really carrying the bond's traffic: in the active aggregator, its LACP in sync,
        collecting and distributing, and an LACP partner answered."""
        return (active_aggregator_id is not None
                and self.aggregator_id == active_aggregator_id
                and self.lacp_not_carrying() is None
                and self.partner_mac is not None and self.partner_mac != _ZERO_MAC)

    def lacp_not_carrying(self) -> str | None:
        """Why LACP carries no traffic on this member (None: it does)."""
        return lacp_not_carrying(self.actor_port_state)


def lacp_not_carrying(state: int | None) -> str | None:
    """Why LACP carries no traffic on a port, read from its port state bits (None: in sync,
    collecting and distributing)."""
    if state is None:
        return "shows no actor port state, so whether LACP carries traffic on it cannot be confirmed"
    if state & (DEFAULTED | EXPIRED):
        return (f"its LACP partner went silent (actor port state {state}: defaulted or expired): the switch "
                "port stopped sending LACPDUs; check its LACP settings")
    if not state & SYNC:
        return (f"LACP on that port is not in sync with its partner (actor port state {state}): the switch "
                "has not agreed to aggregate it (check the port's LAG settings: speed, LACP key)")
    if (state & (COLLECTING | DISTRIBUTING)) != COLLECTING | DISTRIBUTING:
        return (f"LACP on that port is not collecting/distributing (actor port state {state}): not "
                "carrying traffic; often a flapping or churned partner (see the switch port's LACP state "
                "and the member's churn counts)")
    return None


@dataclass(frozen=True)
class BondInfo:
    mode: str                           # as printed, e.g. LACP_MODE
    mii_status: str                     # the bond's own: "up" while any member is up
    driver_version: str | None = None   # "v3.7.1 (April 27, 2011)" or the kernel's release
    xmit_hash_policy: str | None = None  # "layer3+4", "layer2+3", "layer2"; xor and 802.3ad modes only
    miimon: int | None = None           # "MII Polling Interval (ms)"; 0 means no link monitoring
    lacp_rate: str | None = None        # "slow", "fast"
    system_mac: str | None = None
    active_aggregator_id: int | None = None
    partner_mac: str | None = None      # the active aggregator's partner; zeros: nobody answered LACP
    slaves: tuple[BondSlave, ...] = ()

    @property
    def is_lacp(self) -> bool:
        return self.mode == LACP_MODE

    @property
    def slaves_in_aggregator(self) -> tuple[BondSlave, ...]:
        return tuple(slave for slave in self.slaves if slave.in_aggregator(self.active_aggregator_id))


def parse_bonding(text: str) -> BondInfo:
    bond: dict[tuple[str | None, str], str] = {}
    slaves: list[tuple[str, dict[tuple[str | None, str], str]]] = []
    fields, block = bond, None
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            block = None
            continue
        if line in _BLOCKS:
            block = _BLOCKS[line]
            continue
        pair = split_key_value(line)
        if pair is None:
            continue                        # "802.3ad info", "bond bond0 has no active aggregator"
        key, value = pair
        if key == "Slave Interface":
            fields, block = {}, None
            slaves.append((value, fields))
        else:
            fields.setdefault((block, key), value)
    if (None, "Bonding Mode") not in bond or (None, "MII Status") not in bond:
        raise ParseError(TOOL, "no 'Bonding Mode' or 'MII Status' line: not a bonding status file", text)
    policy = bond.get((None, "Transmit Hash Policy"))
    return BondInfo(
        mode=bond[(None, "Bonding Mode")],
        mii_status=bond[(None, "MII Status")],
        driver_version=bond.get((None, "Ethernet Channel Bonding Driver")),
        xmit_hash_policy=_hash_policy(policy, text) if policy is not None else None,
        miimon=_int(bond, None, "MII Polling Interval (ms)", text),
        lacp_rate=bond.get((None, "LACP rate")),
        system_mac=bond.get((None, "System MAC address")),
        active_aggregator_id=_int(bond, "aggregator", "Aggregator ID", text),
        partner_mac=bond.get(("aggregator", "Partner Mac Address")),
        slaves=tuple(_slave(name, fields, text) for name, fields in slaves),
    )


def _slave(name: str, fields: dict[tuple[str | None, str], str], text: str) -> BondSlave:
    if (None, "MII Status") not in fields:
        raise ParseError(TOOL, f"member {name!r} has no 'MII Status' line", text)
    speed = fields.get((None, "Speed"), "Unknown")
    duplex = fields.get((None, "Duplex"), "Unknown")
    aggregator = fields.get((None, "Aggregator ID"), "N/A")
    return BondSlave(
        name=name,
        mii_status=fields[(None, "MII Status")],
        speed_mbps=None if speed == "Unknown" else _speed(speed, name, text),
        duplex=None if duplex == "Unknown" else duplex,
        link_failure_count=_int(fields, None, "Link Failure Count", text),
        perm_hwaddr=fields.get((None, "Permanent HW addr")),
        aggregator_id=None if aggregator == "N/A" else int_value(TOOL, aggregator, "Aggregator ID", text),
        actor_port_state=_int(fields, "actor", "port state", text),
        partner_mac=fields.get(("partner", "system mac address")),
        partner_oper_key=_int(fields, "partner", "oper key", text),
        partner_port_state=_int(fields, "partner", "port state", text),
    )


def _int(fields: dict[tuple[str | None, str], str], block: str | None, key: str, text: str) -> int | None:
    value = fields.get((block, key))
    return None if value is None else int_value(TOOL, value, key, text)


def _speed(value: str, name: str, text: str) -> int:
    match = _SPEED.fullmatch(value)
    if match is None:
        raise ParseError(TOOL, f"member {name!r}: unreadable Speed {value!r}", text)
    return int(match[1])


def _hash_policy(value: str, text: str) -> str:
    match = _HASH_POLICY.fullmatch(value)
    if match is None:
        raise ParseError(TOOL, f"unreadable Transmit Hash Policy: {value!r}", text)
    return match[1]


# The 802.3ad details (aggregator, partner) are shown to root only: sudo where the login may
BONDING = Probe("bonding", "a bond's mode, hash policy, members, aggregators and LACP partner",
                "sudo -n cat /proc/net/bonding/{bond} 2>/dev/null || cat /proc/net/bonding/{bond}", parse_bonding,
                seen_on=("Ubuntu kernel 6.8", "CentOS", "RHEL"),
                unseen="no bond of a Jetson AGX Thor was found (the kernel's bonding driver writes this file, "
                       "the same on Ubuntu 24.04's kernel 6.8 that JetPack 7 is built on)")
