"""What a change did: two snapshots (rackproof.ticket.snapshot) compared fact by fact, each difference
said in the words a change reviewer reads ("thor-2: 10.10.0.12/24 moved from mgbe0_0 to
bond0"; "/etc/netplan/40-cx7.yaml mode 644 -> 600").

An address that left one interface and is on another is one move, not a removal and an
addition; an /etc/hosts entry whose names stayed and whose address changed is one edit. A fact
that could not be read on one side is said as such, never as removed or added.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from rackproof.probes.safetext import one_line


@dataclass(frozen=True)
class Change:
    node: str
    fact: str            # the snapshot's fact: interfaces, files, hosts, routes, ...
    subject: str         # what in it: an address, a path, an entry, a key
    before: str | None   # None: not there before
    after: str | None    # None: not there after
    words: str

    def __str__(self) -> str:
        return f"{one_line(self.node)}: {self.words}"   # a node's name comes from a file: shown escaped too

    def as_dict(self) -> dict:
        return asdict(self)


def compare(before: dict, after: dict) -> list[Change]:
    """Every difference between two snapshots, node by node in the order of the first."""
    changes: list[Change] = []
    nodes = list(dict.fromkeys([*before["nodes"], *after["nodes"]]))
    for node in nodes:
        old, new = before["nodes"].get(node), after["nodes"].get(node)
        if old is None or new is None:
            changes.append(Change(node, "node", node, old and "in the snapshot", new and "in the snapshot",
                                  "not in the first snapshot" if old is None else "not in the second snapshot"))
            continue
        if "unreachable" in old or "unreachable" in new:
            if old.get("unreachable") != new.get("unreachable"):
                changes.append(Change(node, "node", node, _reach(old), _reach(new),
                                      f"reachability: {_reach(old)} -> {_reach(new)}"))
            continue
        changes += _node_changes(node, old, new)
    return changes


def of_node(before: dict, node: str, facts: dict) -> list[Change]:
    """What differs on one node between a snapshot and its facts now (snapshot.node_facts)."""
    return compare({"nodes": {node: before["nodes"][node]} if node in before["nodes"] else {}},
                   {"nodes": {node: facts}})


def _reach(facts: dict) -> str:
    return f"unreachable ({facts['unreachable']})" if "unreachable" in facts else "reachable"


def _node_changes(node: str, old: dict, new: dict) -> list[Change]:
    out: list[Change] = []
    for fact, compare_fact in _FACTS.items():
        unread = (old.get("unread", {}).get(fact), new.get("unread", {}).get(fact))
        if any(unread):
            if unread[0] != unread[1]:
                out.append(Change(node, fact, fact, unread[0] and "not read", unread[1] and "not read",
                                  f"{fact} could not be read " + ("before" if unread[0] else "after") +
                                  f": {unread[0] or unread[1]}" + (" (nor after)" if all(unread) else "")))
            continue
        if fact in old and fact in new and old[fact] != new[fact]:
            out += [Change(node, fact, *c) for c in compare_fact(old[fact], new[fact])]
    return out


# each: (before, after) of one fact -> [(subject, before, after, words)]

def _hostname(old: str, new: str):
    return [("hostname", old, new, f"hostname {_q(old)} -> {_q(new)}")]


def _interfaces(old: dict, new: dict):
    out = []
    for name in _keys(old, new):
        if name not in new:
            out.append((name, _iface(old[name]), None, f"interface {_q(name)} removed"))
        elif name not in old:
            members = [m for m, i in new.items() if i.get("master") == name]
            out.append((name, None, _iface(new[name]), f"interface {_q(name)} added"
                        + (f" with {', '.join(map(_q, members))}" if members else "")))
        else:
            for key, label in (("state", "state"), ("mtu", "MTU"), ("master", "bond/bridge")):
                if old[name].get(key) != new[name].get(key):
                    out.append((name, str(old[name].get(key)), str(new[name].get(key)),
                                f"{_q(name)} {label} {_q(old[name].get(key))} -> {_q(new[name].get(key))}"))
    holders = [{a: i for i, facts in side.items() for a in facts.get("addresses", [])} for side in (old, new)]
    return out + _paired(*holders, moved=lambda address, was, now: f"{_q(address)} moved from {_q(was)} to {_q(now)}",
                         gone=lambda address, was: f"{_q(address)} removed from {_q(was)}",
                         came=lambda address, now: f"{_q(address)} added on {_q(now)}")


def _iface(facts: dict) -> str:
    return f"{facts.get('state')}, MTU {facts.get('mtu')}, {', '.join(facts.get('addresses', [])) or 'no address'}"


def _links(old: dict, new: dict):
    return [(lane, _link(old.get(lane)), _link(new.get(lane)),
             f"lane {_q(lane)} {_link(old.get(lane))} -> {_link(new.get(lane))}")
            for lane in _keys(old, new) if old.get(lane) != new.get(lane)]


def _link(facts: dict | None) -> str:
    if facts is None:
        return "not read"
    speed = f"{facts['speed_mbps']}Mb/s" if facts.get("speed_mbps") else "speed unknown"
    return f"link {'yes' if facts.get('link') else 'no'}, {speed}"


def _lines(what: str):
    def compare_lines(old: list, new: list):
        gone, came = [x for x in old if x not in new], [x for x in new if x not in old]
        return ([(x, x, None, f"{what}: {_q(x)} removed") for x in gone] +
                [(x, None, x, f"{what}: {_q(x)} added") for x in came])
    return compare_lines


def _hosts(old: list, new: list):
    """Entries paired by their names: the same names at another address is one edit."""
    by_names = [{" ".join(entry.split()[1:]): entry for entry in side} for side in (old, new)]
    return _paired(*by_names, moved=lambda names, was, now: f"/etc/hosts: {_q(was)} became {_q(now)}",
                   gone=lambda names, was: f"/etc/hosts: {_q(was)} removed",
                   came=lambda names, now: f"/etc/hosts: {_q(now)} added")


def _paired(old: dict, new: dict, *, moved, gone, came):
    """Values paired by their key: a key on both sides with another value is one change."""
    out = []
    for key in _keys(old, new):
        was, now = old.get(key), new.get(key)
        if was != now:
            out.append((key, was, now, moved(key, was, now) if was and now else gone(key, was) if was else came(key, now)))
    return out


def _files(old: dict, new: dict):
    out = []
    for path in _keys(old, new):
        was, now = old.get(path), new.get(path)
        if was == now:
            continue
        if was is None or now is None:
            out.append((path, was and _file(was), now and _file(now),
                        f"{_q(path)} {'added' if was is None else 'removed'} ({_file(was or now)})"))
            continue
        for key, label in (("mode", "mode"), ("owner", "owner"), ("group", "group")):
            if was[key] != now[key]:
                out.append((path, was[key], now[key], f"{_q(path)} {label} {_q(was[key])} -> {_q(now[key])}"))
        if was["sha256"] != now["sha256"]:
            out.append((path, was["sha256"], now["sha256"], f"{_q(path)} content changed (sha256 "
                        f"{_short(was['sha256'])} -> {_short(now['sha256'])})"))
    return out


def _file(facts: dict) -> str:
    return f"mode {_q(facts['mode'])}, {_q(facts['owner'])}:{_q(facts['group'])}, sha256 {_short(facts['sha256'])}"


def _short(sha256: str | None) -> str:
    return _q(sha256[:12]) if sha256 else "not readable"


def _settings(what: str):
    def compare_settings(old: dict, new: dict):
        out = []
        for key in _keys(old, new):
            if old.get(key) != new.get(key):
                was, now = old.get(key), new.get(key)
                out.append((key, None if was is None else str(was), None if now is None else str(now),
                            f"{what} {_q(key)}: {_q(was) if was is not None else 'not there'} -> "
                            f"{_q(now) if now is not None else 'not there'}"))
        return out
    return compare_settings


def _bonds(old: dict, new: dict):
    out = []
    for bond in _keys(old, new):
        if bond not in old or bond not in new:
            out.append((bond, None, None, f"bond {_q(bond)} {'added' if bond not in old else 'removed'}"))
        else:
            out += [(f"{bond} {key}", was, now, f"bond {_q(bond)} {words}")
                    for key, was, now, words in _settings("setting")(old[bond], new[bond])]
    return out


def _keys(*sides: dict) -> list:
    return list(dict.fromkeys(key for side in sides for key in side))


def _q(value: object) -> str:
    """A value from a node, on one line."""
    return one_line(str(value))


_FACTS = {
    "hostname": _hostname,
    "interfaces": _interfaces,
    "links": _links,
    "routes": _lines("route"),
    "hosts": _hosts,
    "files": _files,
    "bonds": _bonds,
    "sysctl": _settings("sysctl"),
    "listening": _lines("listening socket"),
    "packages": _settings("version of"),
    "authorized_keys": _lines("authorized key"),
    "set_at_run_time": _lines("address set with ip addr add (gone at a reboot)"),
}
