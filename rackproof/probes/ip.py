"""`ip -j addr`, `ip -j link`, `ip -j route get ADDR` and `ip -j route show` (iproute2 JSON) ->
interfaces, routes.

JSON, not `ip -br`: -br pads names to 16 columns and long names overflow into the next one.
"""

from dataclasses import dataclass

from . import ParseError
from ._text import json_field, load_json
from rackproof.probes.probe import Probe

TOOL = "ip"


@dataclass(frozen=True)
class Address:
    family: str                  # "inet" or "inet6"
    local: str
    prefixlen: int
    scope: str | None = None     # "global", "link", "host"
    dynamic: bool = False        # has a lifetime (DHCP, SLAAC): the guides want static cluster addresses


@dataclass(frozen=True)
class Interface:
    name: str
    state: str                   # operstate: UP, DOWN, LOWERLAYERDOWN, UNKNOWN (lo, some drivers)
    mtu: int
    mac: str | None              # link-layer address; None for links without one (tun, wireguard)
    addresses: tuple[Address, ...] = ()
    flags: tuple[str, ...] = ()  # UP is the admin state; NO-CARRIER / LOWER_UP the cable
    master: str | None = None    # the bond or bridge this link is enslaved to


@dataclass(frozen=True)
class Route:
    dst: str
    dev: str
    src: str | None              # "prefsrc": the source address the kernel picks
    gateway: str | None = None   # None when the destination is on a directly attached subnet
    type: str = "unicast"        # "local" when dst is one of the node's own addresses


def parse_ip_addr(json_text: str) -> tuple[Interface, ...]:
    """Interfaces of `ip -j addr`; `ip -j link` reads the same (no addr_info: no addresses)."""
    links = load_json(TOOL, json_text)
    if not isinstance(links, list):
        raise ParseError(TOOL, "expected a JSON list of links", json_text)
    return tuple(_interface(link, json_text) for link in links)


def _interface(link, text: str) -> Interface:
    addr_info = json_field(TOOL, link, "addr_info", list, text, optional=True) or []
    flags = json_field(TOOL, link, "flags", list, text, optional=True) or []
    if not all(isinstance(flag, str) for flag in flags):
        raise ParseError(TOOL, f"flags are not strings: {flags!r}", text)
    return Interface(
        name=json_field(TOOL, link, "ifname", str, text),
        state=json_field(TOOL, link, "operstate", str, text),
        mtu=json_field(TOOL, link, "mtu", int, text),
        mac=json_field(TOOL, link, "address", str, text, optional=True),
        addresses=tuple(_address(info, text) for info in addr_info),
        flags=tuple(flags),
        master=json_field(TOOL, link, "master", str, text, optional=True),
    )


def _address(info, text: str) -> Address:
    return Address(
        family=json_field(TOOL, info, "family", str, text),
        local=json_field(TOOL, info, "local", str, text),
        prefixlen=json_field(TOOL, info, "prefixlen", int, text),
        scope=json_field(TOOL, info, "scope", str, text, optional=True),
        dynamic=json_field(TOOL, info, "dynamic", bool, text, optional=True) or False,
    )


def parse_ip_route_get(json_text: str) -> Route:
    """The route of `ip -j route get ADDR`. No route prints nothing on stdout (the error goes
    to stderr: "RTNETLINK answers: Network is unreachable"), which is a ParseError here."""
    if not json_text.strip():
        raise ParseError(TOOL, "no route (empty output)", json_text)
    routes = load_json(TOOL, json_text)
    if not isinstance(routes, list) or len(routes) != 1:
        raise ParseError(TOOL, "expected a JSON list holding one route", json_text)
    route = routes[0]
    return Route(
        dst=json_field(TOOL, route, "dst", str, json_text),
        dev=json_field(TOOL, route, "dev", str, json_text),
        src=json_field(TOOL, route, "prefsrc", str, json_text, optional=True),
        gateway=json_field(TOOL, route, "gateway", str, json_text, optional=True),
        type=json_field(TOOL, route, "type", str, json_text, optional=True) or "unicast",
    )


def parse_route_table(json_text: str) -> tuple[str, ...]:
    """The main routing table of `ip -j route show`, one route a line in ip's own words
    (`172.16.0.0/16 via 10.10.0.1 dev v0 proto static`). Routes the kernel derives from an
    address (proto kernel) are left out: they change with the address, which is its own fact."""
    routes = load_json(TOOL, json_text)
    if not isinstance(routes, list):
        raise ParseError(TOOL, "expected a JSON list of routes", json_text)
    table = []
    for route in routes:
        if json_field(TOOL, route, "protocol", str, json_text, optional=True) == "kernel":
            continue
        kind = json_field(TOOL, route, "type", str, json_text, optional=True)
        words = [kind] if kind and kind != "unicast" else []
        words.append(json_field(TOOL, route, "dst", str, json_text))
        for key, word in (("gateway", "via"), ("dev", "dev"), ("protocol", "proto"), ("prefsrc", "src")):
            if (value := json_field(TOOL, route, key, str, json_text, optional=True)) is not None:
                words += [word, value]
        if (metric := json_field(TOOL, route, "metric", int, json_text, optional=True)) is not None:
            words += ["metric", str(metric)]
        table.append(" ".join(words))
    return tuple(table)


ADDRESSES = Probe("ip addr", "every interface: state, MAC, MTU, addresses", "ip -j addr", parse_ip_addr,
                  seen_on=("Ubuntu netplan", "iproute2 6", "Debian 12"),
                  unseen="no `ip -j addr` of a Jetson AGX Thor or a DGX Spark was found (a Spark's `ip addr show` "
                         "text was, with the same fields)")
ROUTE_GET = Probe("ip route get", "the route (interface, source) the node takes to an address",
                  "ip -j route get {address}", parse_ip_route_get, seen_on=("Debian 12",),
                  unseen="no real `ip -j route get` of another machine was found (scripts read it with jq; none kept "
                         "its output); iproute2 6.1 here")
ROUTES = Probe("ip route", "the main routing table (routes the kernel derives from addresses left out)",
               "ip -j route show", parse_route_table, seen_on=("Ubuntu netplan", "Ubuntu Vagrant", "Debian 12"),
               unseen="no `ip -j route show` of a Jetson AGX Thor or a DGX Spark was found")
# the one change the suite makes to a cluster (rackproof.measuring.disrupt, only with --allow-disruptive)
LINK_SET = Probe("ip link set", "takes a bond member down or up (only with --allow-disruptive)",
                 "sudo -n ip link set dev {lane} {state}", timeout=30, repeatable=False,
                 unseen="prints nothing the suite reads: judged by its exit status")
