"""A recording a site can send with a bug report: its names, addresses, MACs, serial numbers and
keys masked, consistently, so that it replays to the same outcomes.

The masks are keyed by a secret drawn for one anonymisation and never written: the same value
gets the same mask everywhere in the recording (a node's name in its own `hostname`, in its
peers' /etc/hosts and in the commands asked of it), and nothing maps a mask back.

- names from the inventory (cluster, switch, nodes, ssh targets, engine hosts, the Slurm
  controller, sparkrun's cluster, logins of slice holders) become `node-1`, `host-1`, ... as
  whole words, in the names' sorted order. The cluster's login is masked too unless it is a
  distribution's default (DEFAULT_LOGINS: `nvidia` on a Jetson names no site, and is part of
  tool and package names everywhere);
- IPv4 and IPv6 addresses: a prefix-preserving permutation (two addresses sharing a prefix
  share the masked one, so subnets, routes and "same /24" stay true). An IPv4 address keeps its
  first octet and last octet (its class and its host part: .0 network, .255 broadcast), and the
  bits that make it private (10/8, 172.16/12, 192.168/16, 169.254/16, 100.64/10); loopback,
  0.0.0.0, multicast and netmasks are not a site's and stay. An IPv4-mapped IPv6 address (a
  RoCE v2 GID: ::ffff:a.b.c.d) is masked as its IPv4 address is, and a link-local one keeps its
  fe80::/64 (its interface id, made from the MAC, is masked); written back in the form it came
  in (sysfs writes a GID as eight groups of four digits, after `gids/N:` in grep -H's lines);
- MACs: a locally administered unicast MAC; multicast ones (LLDP's, broadcast) and the all-zero
  MAC (no LACP partner) mean something and stay;
- keys: ssh public keys, SHA256/MD5 fingerprints, munge credentials; UUIDs (boot ids, GPU
  UUIDs); serial numbers after their label.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import ipaddress
import json
import re
import secrets
import tomllib
from pathlib import Path

from rackproof.inventory import tomltext
from rackproof.inventory.model import Inventory
from rackproof.nodes.replay import Recording, ReplayError

DEFAULT_LOGINS = frozenset({"root", "nvidia", "ubuntu", "debian", "admin"})

_NOT_AFTER_A_NAME = r"(?<![A-Za-z0-9])(?<![A-Za-z0-9]-)"
_NOT_BEFORE_A_NAME = r"(?![A-Za-z0-9]|-[A-Za-z0-9])"
# Slurm's host lists (`thor-[1-5]`, `gpu[01-04,07]`): every name of one masked, else left as it is
_HOSTLIST = re.compile(_NOT_AFTER_A_NAME + r"([A-Za-z0-9][A-Za-z0-9.-]*)\[([0-9]+(?:-[0-9]+)?(?:,[0-9]+(?:-[0-9]+)?)*)\]")
# dotted, or with its dots escaped as a command's regular expression writes them (192[.]168[.]0[.]1)
_IPV4 = re.compile(r"(?<![\d.\]])(\d{1,3})(\.|\[\.\]|\\\.)(\d{1,3})\2(\d{1,3})\2(\d{1,3})(?!\d|(?:\.|\[\.\])\d)")
# a run of hex digits and colons with a '::' or seven colons (ipaddress decides whether it is one)
# (not the start of a mixed ::ffff:a.b.c.d: _IPV4 masks its IPv4 part as it masks that address)
_IPV6 = re.compile(r"(?<![0-9A-Fa-f:.])(?=[0-9A-Fa-f:]*:[0-9A-Fa-f:]*:)[0-9A-Fa-f:]{2,39}(?![0-9A-Fa-f:]|\.\d)")
# a GID file's line as grep -H prints it (rackproof.probes.rdmasysfs): the index's digits and the ':' would
# otherwise hide the GID from _IPV6, which wants no hex digit or ':' before an address
_GID_FILE = re.compile(r"(?<=/gids/)(\d+:)([0-9A-Fa-f]{4}(?::[0-9A-Fa-f]{4}){7})(?![0-9A-Fa-f:])")
_MAC = re.compile(r"(?<![0-9A-Fa-f:])(?:[0-9A-Fa-f]{2}:){5}[0-9A-Fa-f]{2}(?![0-9A-Fa-f:])")
_SSH_KEY = re.compile(r"\b((?:sk-)?(?:ssh-(?:ed25519|rsa|dss)|ecdsa-sha2-nistp\d+)(?:@openssh\.com)?)([ \t]+)"
                      r"(AAAA[0-9A-Za-z+/]+=*)")
_FINGERPRINT = re.compile(r"\b(SHA256:)([0-9A-Za-z+/]{43})|\b(MD5:)((?:[0-9a-f]{2}:){15}[0-9a-f]{2})")
_MUNGE = re.compile(r"\bMUNGE:[0-9A-Za-z+/=]+:")
_UUID = re.compile(r"(?<![0-9A-Fa-f])[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}"
                   r"(?![0-9A-Fa-f])")
_SERIAL = re.compile(r"(?im)(\b(?:serial(?:[ _]?number)?|vendor[ _]sn|sn)\b[ \t]*[:=][ \t]*)([A-Za-z0-9-]{3,64})")

# bits of an IPv4 address that are kept: its first octet, and more where they make it private
_IPV4_KEPT_PREFIX = [(ipaddress.ip_network("172.16.0.0/12"), 12), (ipaddress.ip_network("192.168.0.0/16"), 16),
                     (ipaddress.ip_network("169.254.0.0/16"), 16), (ipaddress.ip_network("100.64.0.0/10"), 10)]
_IPV4_LEFT_ALONE = [ipaddress.ip_network(n) for n in ("0.0.0.0/8", "127.0.0.0/8", "224.0.0.0/3")]


class AnonymiseError(Exception):
    pass


class Anonymiser:
    """Masks one recording's identity; `text` is applied to every string of it."""

    def __init__(self, inventory: Inventory, key: bytes | None = None):
        self.inventory = inventory
        self._key = key or secrets.token_bytes(32)
        self._masks: dict[str, str] = {}
        self.names = _names(inventory)
        # a whole name: not part of a longer one (`thor-1` in `thor-10`, `kofi` in `kofi-x`);
        # a '-' that no letter or digit follows ends it (`thor-1->thor-2`)
        self._words = (re.compile(_NOT_AFTER_A_NAME + "(" + "|".join(
            re.escape(n) for n in sorted(self.names, key=len, reverse=True)) + ")" + _NOT_BEFORE_A_NAME)
            if self.names else None)

    def node(self, name: str) -> str:
        return self.names.get(name, name)

    def text(self, text: str) -> str:
        if self._words is not None:
            text = _HOSTLIST.sub(self._hostlist, text)
            text = self._words.sub(lambda m: self.names[m[1]], text)
        text = _SSH_KEY.sub(lambda m: m[1] + m[2] + "AAAA" + self._token(m[3], len(m[3]) - 4), text)
        text = _FINGERPRINT.sub(self._fingerprint, text)
        text = _MUNGE.sub(lambda m: "MUNGE:" + self._token(m[0], len(m[0]) - 7) + ":", text)
        text = _UUID.sub(self._uuid, text)
        text = _SERIAL.sub(lambda m: m[1] + self._token(m[2], len(m[2]), alphabet="0123456789ABCDEFGHJKLMNPRSTVWXYZ"),
                           text)
        text = _MAC.sub(self._mac, text)
        text = _GID_FILE.sub(lambda m: m[1] + self._ipv6(m[2]), text)
        text = _IPV6.sub(lambda m: self._ipv6(m[0]), text)
        return _IPV4.sub(self._ipv4, text)

    def _hostlist(self, m: re.Match) -> str:
        names = []
        for part in m[2].split(","):
            first, _, last = part.partition("-")
            if int(last or first) - int(first) > len(self.names):
                return m[0]
            names += [f"{m[1]}{n:0{len(first)}d}" for n in range(int(first), int(last or first) + 1)]
        return ",".join(self.names[n] for n in names) if all(n in self.names for n in names) else m[0]

    # --- the masks ---------------------------------------------------------------------------

    def _digest(self, kind: str, value: str) -> bytes:
        return hmac.new(self._key, f"{kind}\0{value}".encode(), hashlib.sha256).digest()

    def _token(self, value: str, length: int, alphabet: str = "") -> str:
        """`length` characters standing for `value` (base64's alphabet unless given)."""
        cached = self._masks.get(f"{length}\0{alphabet}\0{value}")
        if cached is None:
            stream = b"".join(self._digest(f"token{i}", value) for i in range(length // 32 + 1))
            if alphabet:
                cached = "".join(alphabet[b % len(alphabet)] for b in stream[:length])
            else:
                cached = base64.b64encode(stream).decode().replace("=", "A")[:length]
            self._masks[f"{length}\0{alphabet}\0{value}"] = cached
        return cached

    def _fingerprint(self, m: re.Match) -> str:
        if m[1]:
            return m[1] + self._token(m[2], 43)
        raw = self._digest("md5", m[4])[:16]
        return m[3] + ":".join(f"{b:02x}" for b in raw)

    def _uuid(self, m: re.Match) -> str:
        raw = self._digest("uuid", m[0].lower()).hex()
        masked = f"{raw[:8]}-{raw[8:12]}-{raw[12:16]}-{raw[16:20]}-{raw[20:32]}"
        return masked.upper() if m[0].isupper() else masked

    def _mac(self, m: re.Match) -> str:
        octets = bytes(int(x, 16) for x in m[0].split(":"))
        if octets[0] & 1 or not any(octets):
            return m[0]
        raw = self._digest("mac", octets.hex())
        masked = ":".join(f"{b:02x}" for b in bytes([raw[0] & 0xFC | 0x02]) + raw[1:6])
        return masked.upper() if m[0].isupper() else masked

    def _permute(self, kind: str, value: int, width: int, kept: int, last_kept: int) -> int:
        """Crypto-PAn's idea: bit i of the mask flips with a keyed function of the bits before it,
        so shared prefixes stay shared; the first masked bit always flips (no address is its own)."""
        cached = self._masks.get(f"{kind}\0{value}")
        if cached is not None:
            return int(cached)
        out = value
        for i in range(kept, width - last_kept):
            prefix = value >> (width - i)
            flip = 1 if i == kept else self._digest(kind, f"{i}/{prefix:x}")[0] & 1
            out ^= flip << (width - 1 - i)
        self._masks[f"{kind}\0{value}"] = str(out)
        return out

    def _ipv4(self, m: re.Match) -> str:
        octets, dot = (m[1], m[3], m[4], m[5]), m[2]
        if any(int(x) > 255 for x in octets):
            return m[0]
        address = ipaddress.IPv4Address(".".join(octets))
        if int(m[1]) == 255 or any(address in net for net in _IPV4_LEFT_ALONE):
            return m[0]
        kept = next((bits for net, bits in _IPV4_KEPT_PREFIX if address in net), 8)
        return str(ipaddress.IPv4Address(self._permute("ipv4", int(address), 32, kept, 8))).replace(".", dot)

    def _ipv6(self, text: str) -> str:
        try:
            address = ipaddress.IPv6Address(text)
        except ValueError:
            return text
        if address.is_loopback or address.is_unspecified or address.is_multicast:
            return text
        if address.ipv4_mapped:
            ipv4 = _IPV4.fullmatch(str(address.ipv4_mapped))
            masked = ipaddress.IPv6Address("::ffff:" + self._ipv4(ipv4))
        else:
            kept = 64 if address.is_link_local else 16
            masked = ipaddress.IPv6Address(self._permute("ipv6", int(address), 128, kept, 0))
        return masked.exploded if text.lower() == address.exploded else str(masked)


def _names(inventory: Inventory) -> dict[str, str]:
    """Each name of the site in the inventory and its mask. The masks of one kind keep the
    names' sorted order (a command that lists logins sorted lists their masks in the same order)."""
    kinds: dict[str, list[str]] = {}
    seen: set[str] = set()

    def add(name: str | None, kind: str) -> None:
        if name and name not in seen and not _is_address(name):
            seen.add(name)
            kinds.setdefault(kind, []).append(name)

    add(inventory.cluster.name, "cluster")
    if inventory.switch:
        add(inventory.switch.name, "switch")
    for node in inventory.nodes:
        add(node.name, "node")
    for node in inventory.nodes:
        add(_ssh_host(node.ssh), "host")
    add(_ssh_host(inventory.ssh.jump), "host")
    for engine in inventory.engines:
        add(engine.host, "host")
    if inventory.slurm:
        add(inventory.slurm.controller, "host")
    if inventory.sparkrun:
        add(inventory.sparkrun.cluster, "sparkrun")
    if inventory.cluster.user not in DEFAULT_LOGINS:
        add(inventory.cluster.user, "login")
    if inventory.slices:
        for login in [*inventory.slices.holders, *(r.person for r in inventory.slices.reservations)]:
            add(login, "login")
    return {name: f"{kind}-{i:0{len(str(len(names)))}d}"
            for kind, names in kinds.items() for i, name in enumerate(sorted(names), 1)}


def _ssh_host(target: str | None) -> str | None:
    """The host of an ssh destination (user@host:port)."""
    if not target:
        return None
    host = target.rpartition("@")[2]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def _is_address(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def masked_entry(entry: dict, anonymiser: Anonymiser) -> dict:
    """One recorded answer with every string masked."""
    return {k: anonymiser.text(v) if isinstance(v, str) else v for k, v in entry.items()}


def anonymise_recording(source: str | Path, target: str | Path, anonymiser: Anonymiser,
                        inventory_text: str) -> tuple[int, int]:
    """Writes `target`, a new folder: `source`'s answers (those it inherits included) and its
    inventory, masked. Returns (nodes, answers)."""
    target = Path(target)
    try:
        recording = Recording(source)
    except ReplayError as e:
        raise AnonymiseError(str(e)) from None
    try:
        target.mkdir(mode=0o755)
    except OSError as e:
        raise AnonymiseError(f"{target}: cannot make the folder ({e.strerror}); name a new one") from None
    answers = 0
    for node, entries in sorted(recording.answers.items()):
        if "<unreachable>" in entries:
            content = {"unreachable": anonymiser.text(entries["<unreachable>"]["unreachable"])}
        else:
            content = [masked_entry(entry, anonymiser) for entry in entries.values()]
            answers += len(content)
        _write_new(target / f"{anonymiser.node(node)}.json", json.dumps(content, indent=1) + "\n")
    _write_new(target / "cluster.toml", anonymiser.text(_calendar_folded(inventory_text, anonymiser.inventory)))
    return len(recording.answers), answers


_CALENDAR_LINE = re.compile(r"(?m)^[ \t]*calendar[ \t]*=.*$")


def _calendar_folded(inventory_text: str, inventory: Inventory) -> str:
    """The inventory with its shared calendar (a file of this controller's, which the recipient
    has not) written in as [[slices.reservations]] tables, so that the recording stands alone."""
    data = tomllib.loads(inventory_text)
    calendar = data.get("slices", {}).get("calendar")
    if not calendar:
        return inventory_text
    if "reservations" in data["slices"] and not re.search(r"(?m)^\s*\[\[\s*slices\.reservations\s*\]\]", inventory_text):
        raise AnonymiseError("slices.calendar beside slices.reservations written inline: write those as "
                             "[[slices.reservations]] tables, and anonymise again")
    own = len(data["slices"].get("reservations", []))
    tables = "".join(f"\n[[slices.reservations]]\nperson = {tomltext.value(r.person)}\nnode = {tomltext.value(r.node)}\n"
                     f"start = {tomltext.value(r.start)}\nend = {tomltext.value(r.end)}\n"
                     for r in inventory.slices.reservations[own:])
    return _CALENDAR_LINE.sub("# slices.calendar: its reservations are written below", inventory_text, count=1) + \
        "\n# the reservations of slices.calendar when the run was recorded\n" + tables


def _write_new(path: Path, text: str) -> None:
    with open(path, "x", encoding="utf-8") as out:
        out.write(text)
