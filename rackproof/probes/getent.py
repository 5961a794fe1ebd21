"""`getent hosts NAME...` -> which addresses each name resolves to on a node.

glibc prints one line per address: the address left-justified in 15 columns (longer
IPv6 addresses get a single space), the canonical name, then the aliases. A name that
is not found prints nothing (exit status 2), so it is simply absent from the result.
"""

import ipaddress
from typing import Sequence

from . import ParseError
from rackproof.probes.probe import Probe

TOOL = "getent"


def parse_getent_hosts(text: str, asked: Sequence[str] = ()) -> dict[str, tuple[str, ...]]:
    """name -> addresses, in the order printed.

    Every name on a line (canonical name and aliases) maps to that line's address: a query
    for an alias comes back under the canonical name, so the alias has to be found too. A
    name with several lines (127.0.1.1 and the cluster address) gets all their addresses.
    A name `asked` that the resolver completed with a search domain comes back only under the
    completed name (`getent hosts serverb` prints "172.25.250.11   serverb.lab.example.com"):
    it resolved to that name's addresses.
    """
    resolved: dict[str, dict[str, None]] = {}   # name -> its addresses as an ordered set
    for line in text.splitlines():
        fields = line.split()
        if not fields:
            continue
        address, names = fields[0], fields[1:]
        try:
            ipaddress.ip_address(address)
        except ValueError:
            raise ParseError(TOOL, f"not an address: {address!r}", text) from None
        if not names:
            raise ParseError(TOOL, f"address without a name: {line!r}", text)
        for name in names:
            resolved.setdefault(name, {})[address] = None
    for name in asked:
        completed = [n for n in resolved if n.startswith(name + ".") and n not in asked]
        # the completed names of one answer (its canonical name and aliases) share its addresses
        if name not in resolved and completed and all(resolved[n] == resolved[completed[0]] for n in completed):
            resolved[name] = resolved[completed[0]]
    return {name: tuple(addresses) for name, addresses in resolved.items()}


# exit 2: some name was not found (the others are still listed)
GETENT_HOSTS = Probe("getent hosts", "how the node resolves names (/etc/hosts, DNS)", "getent hosts {names}",
                     parse_getent_hosts, ("names",), ok_exit=(0, 2), once=True,
                     seen_on=("RHEL 7", "RHEL", "Docker Swarm", "Debian 12"),
                     unseen="no real output of a Jetson AGX Thor or a DGX Spark was found; glibc's getent prints "
                            "the same layout on every glibc distribution")
