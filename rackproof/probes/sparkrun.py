"""sparkrun, the launcher of a Spark cluster, on its head node (node_0): its version
(`sparkrun --version`, click's "sparkrun, version 0.4.2"), the cluster definition the
head holds (`sparkrun cluster show NAME --json`: its hosts in node order, head first) and its
read-only readiness report (`sparkrun setup check --cluster NAME --json`: per host, each setup
item with its status ok/warn/fail/skip, sparkrun's detail and the command that fixes it).
Formats are those of the real CLI (sparkrun 0.4.2), captured into selftests/samples. The
suite runs it with telemetry off: an acceptance run sends nothing anywhere.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from . import ParseError
from ._text import load_json
from rackproof.probes.probe import Probe

TOOL = "sparkrun"
QUIET = "SPARKRUN_NO_TELEMETRY=1"

_VERSION = re.compile(r"sparkrun, version (?P<version>[0-9A-Za-z.+-]{1,40})")
# `cluster show` stops there; `setup check` adds ". Available clusters: A, B"
_NOT_FOUND = re.compile(r"Error: Cluster '(?P<name>[^'\n]{0,80})' not found(?:\. Available clusters: [^\n]{0,2000})?")


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


STATUSES = ("ok", "warn", "fail", "skip")


@dataclass(frozen=True)
class SetupItem:
    key: str            # "docker_usable", "cdi_spec", "cx7", ...
    label: str
    status: str         # one of STATUSES
    detail: str
    guidance: str       # the command or step that fixes it


@dataclass(frozen=True)
class HostReadiness:
    reachable: bool
    error: str                       # why sparkrun could not probe it ("" when reachable)
    items: tuple[SetupItem, ...]


@dataclass(frozen=True)
class SetupCheck:
    cluster: str | None
    hosts: dict[str, HostReadiness]  # as the definition lists them, head first


def _text_field(item: dict, key: str, text: str, optional: bool = True) -> str:
    value = item.get(key)
    if value is None and optional:
        return ""
    if not isinstance(value, str):
        raise ParseError(TOOL, f"a setup item's {key} is not a string", text)
    return value


def _items(checks, text: str) -> tuple[SetupItem, ...]:
    if not isinstance(checks, list) or not all(isinstance(c, dict) for c in checks):
        raise ParseError(TOOL, "a host's checks are not a list of items", text)
    items = []
    for check in checks:
        item = SetupItem(*(_text_field(check, k, text, optional=k in ("detail", "guidance"))
                           for k in ("key", "label", "status", "detail", "guidance")))
        if item.status not in STATUSES:
            raise ParseError(TOOL, f"setup item {item.key!r} has status {item.status!r}, not one of "
                                   f"{', '.join(STATUSES)}", text)
        items.append(item)
    return tuple(items)


def parse_setup_check(text: str) -> SetupCheck | None:
    """The JSON of `sparkrun setup check --cluster NAME --json` (exit 1 when a host is
    unreachable or an item fails); None when sparkrun says the cluster is not defined."""
    if _NOT_FOUND.fullmatch(text.strip()):
        return None
    doc = load_json(TOOL, text)
    if not isinstance(doc, dict) or not isinstance(doc.get("hosts"), list) or not isinstance(doc.get("results"), dict):
        raise ParseError(TOOL, "not a setup check report (hosts, results)", text)
    if doc.get("cluster") is not None and not isinstance(doc["cluster"], str):
        raise ParseError(TOOL, "the cluster is not a name", text)
    hosts = {}
    for host in doc["hosts"]:
        row = doc["results"].get(host) if isinstance(host, str) else None
        if not isinstance(row, dict) or not isinstance(row.get("reachable"), bool):
            raise ParseError(TOOL, f"no result for host {host!r}", text)
        hosts[host] = HostReadiness(row["reachable"], _text_field(row, "error", text), _items(row.get("checks"), text))
    return SetupCheck(doc.get("cluster"), hosts)


SPARKRUN_VERSION = Probe("sparkrun --version", "the sparkrun CLI on the head node, and its version",
                         f"{QUIET} sparkrun --version 2>&1", parse_version, ok_exit=(0, 127), once=True,
                         seen_on=("Debian 12",),
                         unseen="no output of sparkrun on a DGX Spark was found: these are sparkrun 0.4.2's own "
                                "(PyPI) on Debian 12")
CLUSTER_SHOW = Probe("sparkrun cluster show", "the sparkrun cluster definition on the head: its hosts in node order",
                     f"{QUIET} sparkrun cluster show {{cluster}} --json 2>&1", parse_cluster_show, ok_exit=(0, 1),
                     once=True,
                     seen_on=("Debian 12",),
                     unseen="no output of sparkrun on a DGX Spark was found: these are sparkrun 0.4.2's own (PyPI) on"
                            " Debian 12")
# it probes every host over SSH (discovery, readiness, CX7, fabric mesh), a few seconds
SETUP_CHECK = Probe("sparkrun setup check", "sparkrun's read-only readiness report for the cluster, host by host",
                    f"{QUIET} sparkrun setup check --cluster {{cluster}} --json 2>&1", parse_setup_check,
                    ok_exit=(0, 1), timeout=180, once=True,
                    seen_on=("Debian 12",),
                    unseen="no output of sparkrun on a DGX Spark was found: these are sparkrun 0.4.2's own (PyPI) on "
                           "Debian 12")
