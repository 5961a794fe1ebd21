"""A node as the checks see it: its inventory entry, a way to run commands, and typed
facts read through the probes (in the spirit of pytest-testinfra's `host`, simpler).

Each fact method runs one command and parses it; unreadable output raises
ProbeFailed carrying the raw text, so the failure shows what the node printed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, TypeVar

from .inventory import Inventory, Node
from .probes import ParseError
from .remote import EvidenceLog, LocalTransport, Remote, Result, SshTransport, quote
from .replay import Recording, RecordingTransport, ReplayTransport

T = TypeVar("T")


class ProbeFailed(Exception):
    """A command whose answer does not say what the check needs (failed, or unreadable)."""

    def __init__(self, node: str, result: Result, reason: str):
        self.node, self.result, self.reason = node, result, reason
        output = (result.stdout + result.stderr).strip() or "(no output)"
        super().__init__(f"{node}: `{result.command}` {reason}\n--- what {node} printed ---\n{output}")


@dataclass
class Host:
    spec: Node
    remote: Remote

    @property
    def name(self) -> str:
        return self.spec.name

    def run(self, command: str, timeout: float | None = None) -> Result:
        return self.remote.run(command, timeout)

    def read(self, command: str, parser: Callable[[str], T], ok_exit: tuple[int, ...] = (0,),
             timeout: float | None = None) -> T:
        """Run a command and parse its stdout; a failed command or unreadable text is a ProbeFailed."""
        result = self.run(command, timeout)
        if result.exit_status not in ok_exit:
            raise ProbeFailed(self.name, result, f"exited with status {result.exit_status}")
        try:
            return parser(result.stdout)
        except ParseError as e:
            raise ProbeFailed(self.name, result, f"printed something the {e.tool} parser cannot read: {e.reason}") from None

    # --- facts -------------------------------------------------------------------
    def ethtool(self, interface: str):
        from .probes.ethtool import parse_ethtool
        # ethtool exits 75/76 on some drivers without root yet prints what we need: parse anyway
        return self.read(f"LC_ALL=C ethtool {quote(interface)}", lambda out: parse_ethtool(out, interface),
                         ok_exit=(0, 75, 76))

    def fec(self, interface: str):
        from .probes.fec import parse_fec
        return self.read(f"LC_ALL=C ethtool --show-fec {quote(interface)}", lambda out: parse_fec(out, interface))

    def interfaces(self):
        from .probes.ip import parse_ip_addr
        return {i.name: i for i in self.read("ip -j addr", parse_ip_addr)}

    def route_to(self, addresses):
        """address -> Route, all looked up in one command."""
        from .probes.ip import parse_ip_route_get
        addresses = list(addresses)
        out = self.read("; ".join(f"{section(a)}; ip -j route get {quote(a)}" for a in addresses), str)
        return self.parse_sections(out, addresses, parse_ip_route_get, describe="ip -j route get {}".format)

    def parse_sections(self, text: str, labels, parser, describe: Callable[[str], str] = "(the part for {})".format
                       ) -> dict:
        """label -> parsed part, for output made of `section(label)` markers and what followed each.
        A part the parser cannot read fails as `describe(label)`: what printed that part (its command)."""
        parts = dict(_SECTION_SPLIT.findall(text))
        parsed = {}
        for label in labels:
            try:
                parsed[label] = parser(parts.get(str(label), ""))
            except ParseError as e:
                raise ProbeFailed(self.name, Result(describe(label), 0, parts.get(str(label), ""), "", 0.0),
                                  f"printed something the {e.tool} parser cannot read: {e.reason}") from None
        return parsed

    def resolve(self, names):
        """name -> addresses as this node resolves them (one getent for all names; exit 2
        just means some name was not found)."""
        from .probes.getent import parse_getent_hosts
        return self.read(quote("getent", "hosts", *names), parse_getent_hosts, ok_exit=(0, 2))

    def ping(self, targets, count: int = 3):
        from .probes.ping import parse_ping_batch, ping_batch_command
        # the loop exits as its last ping did (1: no reply, 2: an error): each target is judged
        # from its own part of the output, never the loop's exit status
        return self.read(ping_batch_command(targets, count), parse_ping_batch, ok_exit=(0, 1, 2),
                         timeout=30 + 2 * len(targets) * count)

    def bonding(self, bond: str = "bond0"):
        from .probes.bonding import parse_bonding
        # RACKPROOF_PROC: where a simulated node shows its /proc views (a namespace cannot add
        # files to /proc); unset on real nodes. The 802.3ad details (aggregator, partner) are
        # shown to root only: sudo when allowed.
        path = f'"${{RACKPROOF_PROC:-/proc}}"/net/bonding/{quote(bond)}'
        return self.read(f"sudo -n cat {path} 2>/dev/null || cat {path}", parse_bonding)

    def rdma_links(self):
        from .probes.ibdev2netdev import parse_ibdev2netdev
        return {m.netdev: m for m in self.read("ibdev2netdev", parse_ibdev2netdev)}

    def hostname(self) -> str:
        return self.read("hostname", lambda out: out.strip())

    def login_name(self) -> str:
        return self.read("id -un", lambda out: out.strip())


_SECTION = "### rackproof-section "
_SECTION_SPLIT = re.compile(r"^" + re.escape(_SECTION) + r"(\S+)\n(.*?)(?=^" + re.escape(_SECTION) + r"|\Z)",
                            re.M | re.S)


def section(label: str) -> str:
    """A shell command marking where the output for `label` starts (see Host.parse_sections)."""
    return f"echo {quote(_SECTION + str(label))}"


def connect(inventory: Inventory, log: EvidenceLog, *, replay: Recording | None = None,
            record: str | Path | None = None) -> dict[str, Host]:
    """A Host for every node of the inventory. Nothing is connected until a command runs."""
    ssh = inventory.ssh
    hosts = {}
    for node in inventory.nodes:
        if replay is not None:
            transport = ReplayTransport(node.name, replay)
        elif node.local:
            transport = LocalTransport(node.name)
        else:
            transport = SshTransport(node.name, node.ssh_name, inventory.cluster.user, ssh.connect_timeout,
                                     ssh_config=_expand(ssh.config), identity=_expand(ssh.identity), jump=ssh.jump)
        if record is not None and replay is None:
            transport = RecordingTransport(transport, node.name, record, redact=log.redact)
        hosts[node.name] = Host(node, Remote(node.name, transport, log, ssh.command_timeout))
    return hosts


def _expand(path: str | None) -> str | None:
    return str(Path(path).expanduser()) if path else None
