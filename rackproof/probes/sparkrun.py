"""sparkrun, the launcher of a Spark cluster, on its head node (node_0): its version
(`sparkrun --version`, click's "sparkrun, version 0.4.2") and the cluster definition the
head holds (`sparkrun cluster show NAME --json`: its hosts in node order, head first).
Formats are those of the real CLI (sparkrun 0.4.2), captured into selftests/samples. The
suite runs it with telemetry off: an acceptance run sends nothing anywhere.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from . import ParseError
from ._text import load_json
from rackproof.probe import Probe

TOOL = "sparkrun"
QUIET = "SPARKRUN_NO_TELEMETRY=1"

_VERSION = re.compile(r"sparkrun, version (?P<version>[0-9A-Za-z.+-]{1,40})")
_NOT_FOUND = re.compile(r"Error: Cluster '(?P<name>[^'\n]{0,80})' not found")


# what sh (dash: "sh: 1: sparkrun: not found") or bash ("bash: sparkrun: command not found") says
_NO_COMMAND = re.compile(r".*\bsparkrun: (?:command )?not found")


def parse_version(text: str) -> str | None:
    """The version; None when the shell finds no sparkrun (exit 127)."""
    if _NO_COMMAND.fullmatch(text.strip()):
        return None
    match = _VERSION.fullmatch(text.strip())
    if not match:
        raise ParseError(TOOL, "not 'sparkrun, version X'", text)
    return match["version"]


@dataclass(frozen=True)
class ClusterDefinition:
    name: str
    hosts: tuple[str, ...]      # node order: the head (node_0) first, then the workers
    user: str | None
    transfer_interface: str | None


def parse_cluster_show(text: str) -> ClusterDefinition | None:
    """The JSON of `sparkrun cluster show NAME --json`; None when sparkrun says the cluster is
    not defined (its "Error: Cluster 'NAME' not found", on stderr, read here with 2>&1)."""
    if _NOT_FOUND.fullmatch(text.strip()):
        return None
    doc = load_json(TOOL, text)
    if not isinstance(doc, dict) or not isinstance(doc.get("name"), str) or not isinstance(doc.get("hosts"), list):
        raise ParseError(TOOL, "not a cluster definition (name, hosts)", text)
    hosts = doc["hosts"]
    if not all(isinstance(h, str) and h.strip() for h in hosts):
        raise ParseError(TOOL, "a host that is not a name or an address", text)
    optional = {key: doc.get(key) for key in ("user", "transfer_interface")}
    if any(value is not None and not isinstance(value, str) for value in optional.values()):
        raise ParseError(TOOL, "user and transfer_interface are strings", text)
    return ClusterDefinition(doc["name"], tuple(hosts), optional["user"], optional["transfer_interface"])


SPARKRUN_VERSION = Probe("sparkrun --version", "the sparkrun CLI on the head node, and its version",
                         f"{QUIET} sparkrun --version 2>&1", parse_version, ok_exit=(0, 127), once=True)
CLUSTER_SHOW = Probe("sparkrun cluster show", "the sparkrun cluster definition on the head: its hosts in node order",
                     f"{QUIET} sparkrun cluster show {{cluster}} --json 2>&1", parse_cluster_show, ok_exit=(0, 1))
