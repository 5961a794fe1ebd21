"""`lldpcli -f json0 show neighbors` -> the LLDP neighbour seen on each local interface.

json0 is lldpd's stable JSON: every tag is a list of objects and a name is a "name" field.
`-f json` folds the same document: a one-element list becomes its element, a named object
becomes {name: {...}} and a tag holding only a value becomes a string, so its shape depends
on how many neighbours there are (lldpd src/client/json_writer.c). Both are read here.

A switch names itself in the chassis name (SysName) and its port in the port id (subtype
"ifname" or "local", e.g. swp6, Ethernet120) and the port description; a Linux host running
lldpd sends its MAC as the port id and the interface name as the description.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from . import ParseError
from ._text import load_json
from rackproof.probes.probe import Probe

TOOL = "lldpcli"

# tags of a chassis or port: in `-f json` an object keyed by anything else is a name
_FIELDS = {"id", "name", "descr", "mgmt-ip", "mgmt-iface", "capability", "ttl", "value", "type",
           "via", "rid", "age", "chassis", "port", "vlan", "ppvid", "pi", "lldp-med", "unknown-tlvs",
           "auto-negotiation", "power", "mfs", "link-aggregation"}


@dataclass(frozen=True)
class Neighbour:
    interface: str              # the local interface it was heard on
    system: str | None          # the chassis name (SysName): the switch's or the peer host's name
    chassis_id: str | None
    port_id: str | None
    port_id_type: str | None    # "ifname", "local", "mac", ...
    port_descr: str | None
    age_s: int | None = None    # since lldpd first heard this announcement (a stale one ages out with its TTL)

    def port_names(self) -> tuple[str, ...]:
        """What the far end calls its port: the port id (unless a MAC) and the description."""
        names = [self.port_id] if self.port_id and self.port_id_type != "mac" else []
        return tuple(dict.fromkeys(n for n in (*names, self.port_descr) if n))


def parse_neighbours(text: str) -> tuple[Neighbour, ...]:
    """Every neighbour, in the order lldpcli printed them (an interface may have several)."""
    document = load_json(TOOL, text)
    if not isinstance(document, dict) or "lldp" not in document:
        raise ParseError(TOOL, 'no "lldp" object: not the output of lldpcli -f json/json0 show neighbors', text)
    found = []
    for lldp in _items(document["lldp"], "lldp", text):
        if not isinstance(lldp, dict):
            raise ParseError(TOOL, '"lldp" holds something other than an object', text)
        for name, body in _named(lldp.get("interface", []), "interface", text):
            if name is None:
                raise ParseError(TOOL, "an interface without a name", text)
            found.append(_neighbour(name, body, text))
    return tuple(found)


def _neighbour(interface: str, body: dict, text: str) -> Neighbour:
    chassis = _named(body.get("chassis", []), "chassis", text)
    system, chassis_body = chassis[0] if chassis else (None, {})
    system = system or _value(chassis_body.get("name"), "chassis name", text)
    ports = _named(body.get("port", []), "port", text)
    port = ports[0][1] if ports else {}
    chassis_id, _ = _id(chassis_body.get("id"), "chassis id", text)
    port_id, port_id_type = _id(port.get("id"), "port id", text)
    return Neighbour(interface, system, chassis_id, port_id, port_id_type,
                     _value(port.get("descr"), "port descr", text), _age(body.get("age"), text))


_AGE = re.compile(r"([0-9]{1,6}) days?, ([0-9]{2}):([0-5][0-9]):([0-5][0-9])")


def _age(value, text: str) -> int | None:
    """"0 day, 01:48:20" -> seconds (lldpd's display.c prints days, then HH:MM:SS)."""
    shown = _value(value, "age", text)
    if shown is None:
        return None
    match = _AGE.fullmatch(shown)
    if match is None:
        raise ParseError(TOOL, f"age is not 'D day(s), HH:MM:SS': {shown!r}", text)
    days, hours, minutes, seconds = map(int, match.groups())
    return ((days * 24 + hours) * 60 + minutes) * 60 + seconds


def _items(value, what: str, text: str) -> list:
    if isinstance(value, list):
        return value
    if isinstance(value, dict):
        return [value]
    raise ParseError(TOOL, f'"{what}" is neither an object nor a list', text)


def _named(value, what: str, text: str) -> list[tuple[str | None, dict]]:
    """(name, body) of each element: json0's {"name": ..., ...}, json's {NAME: {...}}, or an
    unnamed body (a chassis without a SysName)."""
    out = []
    for item in _items(value, what, text):
        if not isinstance(item, dict):
            raise ParseError(TOOL, f'an element of "{what}" is not an object', text)
        if "name" in item and what != "chassis":     # a chassis' "name" is its SysName tag, read later
            out.append((_value(item["name"], f"{what} name", text), item))
        elif len(item) == 1 and next(iter(item)) not in _FIELDS and isinstance(next(iter(item.values())), dict):
            out.append(next(iter(item.items())))
        else:
            out.append((None, item))
    return out


def _value(value, what: str, text: str) -> str | None:
    """A tag's text: "x" (json), {"value": "x"} or [{"value": "x"}] (json0)."""
    if value is None:
        return None
    if isinstance(value, list):
        if len(value) != 1:
            raise ParseError(TOOL, f"{what} has {len(value)} values, not one", text)
        value = value[0]
    if isinstance(value, dict):
        value = value.get("value")
    if not isinstance(value, str):
        raise ParseError(TOOL, f"{what} is not text", text)
    return value


def _id(value, what: str, text: str) -> tuple[str | None, str | None]:
    if value is None:
        return None, None
    if isinstance(value, list):
        if len(value) != 1:
            raise ParseError(TOOL, f"{what} has {len(value)} values, not one", text)
        value = value[0]
    if not isinstance(value, dict) or not isinstance(value.get("value"), str) or \
            not isinstance(value.get("type", ""), str):
        raise ParseError(TOOL, f"{what} is not an object with a type and a value", text)
    return value["value"], value.get("type")


def newest(heard) -> Neighbour:
    """The newest of the announcements heard on one interface: after a plug is moved, the old
    port's lingers until its TTL ends (120 s on a real switch)."""
    return min(heard, key=lambda n: n.age_s if n.age_s is not None else 0)


def newest_by_interface(neighbours) -> dict[str, Neighbour]:
    by_interface: dict[str, list[Neighbour]] = {}
    for n in neighbours:
        by_interface.setdefault(n.interface, []).append(n)
    return {interface: newest(heard) for interface, heard in by_interface.items()}


def unavailable(exit_status: int, output: str, login: str) -> tuple[str, str] | None:
    """(why the node cannot tell its neighbours, how to make it tell) for an lldpcli that did not
    answer because lldpd is missing, stopped or closed to `login`; None for any other failure.
    lldpcli logs "unable to connect to socket PATH: REASON" (lldpd src/ctl.c)."""
    if exit_status == 127 or "lldpcli: not found" in output or "lldpcli: command not found" in output:
        return ("lldpd is not installed (no lldpcli)",
                "install it on the node (sudo apt install lldpd: the package enables and starts it)")
    if exit_status == 126 and "Permission denied" in output:
        return (f"{login} may not run lldpcli (Debian and Ubuntu let the adm group run it)",
                f"sudo usermod -aG adm {login} on the node, then log in again")
    if "unable to connect to socket" not in output:
        return None
    if "Permission denied" in output:
        return (f"{login} may not use lldpd's socket",
                f"sudo usermod -aG _lldpd {login} on the node, then log in again")
    return "lldpd is not running", "sudo systemctl enable --now lldpd on the node"


# lldpcli exits 1 with one "[WARN/control] unable to connect to socket ..." line on stderr when
# lldpd is not running or the login may not use its socket: the check tells those apart
NEIGHBOURS = Probe("lldpcli show neighbors", "the LLDP neighbour heard on each interface",
                   "lldpcli -f json0 show neighbors", parse_neighbours, once=True,
                   seen_on=("H3C Ubuntu lldpd", "SONiC", "Debian 12"),
                   unseen="no lldpcli of a Jetson AGX Thor or a DGX Spark was found; lldpd's JSON is its own")
