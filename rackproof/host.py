"""A node as the checks see it: its inventory entry, a way to run commands, and typed
facts read through the probes (in the spirit of pytest-testinfra's `host`, simpler).

Each fact method runs one command and parses it; unreadable output raises
ProbeFailed carrying the raw text, so the failure shows what the node printed.
"""

from __future__ import annotations

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

    def read(self, command: str, parser: Callable[[str], T], ok_exit: tuple[int, ...] = (0,)) -> T:
        """Run a command and parse its stdout; a failed command or unreadable text is a ProbeFailed."""
        result = self.run(command)
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
        return self.read(f"LC_ALL=C ethtool {quote(interface)}", parse_ethtool, ok_exit=(0, 75, 76))

    def fec(self, interface: str):
        from .probes.fec import parse_fec
        return self.read(f"LC_ALL=C ethtool --show-fec {quote(interface)}", parse_fec)

    def hostname(self) -> str:
        return self.read("hostname", lambda out: out.strip())

    def login_name(self) -> str:
        return self.read("id -un", lambda out: out.strip())


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
            transport = RecordingTransport(transport, node.name, record)
        hosts[node.name] = Host(node, Remote(node.name, transport, log, ssh.command_timeout))
    return hosts


def _expand(path: str | None) -> str | None:
    return str(Path(path).expanduser()) if path else None
