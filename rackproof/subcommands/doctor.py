"""`rackproof doctor`: before a run, read-only, what each node lacks for the checks of the step
(a tool, a group, a daemon, a sudo right), with the package or the sudoers line that fixes it.
The checks of the step are the ones pytest collects for the inventory and step; the probes they
run come from their source (rackproof.checks); what each node offers from one survey per node
(rackproof.nodes.prerequisites), all nodes at once."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass, field

from rackproof.checks import catalog, probe_users, suite_root
from rackproof.nodes.host import connect
from rackproof.inventory.model import FINISHED, ClusterAtStep, Inventory, Node
from rackproof.nodes.prerequisites import Finding, NodePrerequisites, needed_on, survey_findings, tools_of
from rackproof.nodes.remote import EvidenceLog
from rackproof.probes.safetext import one_line

COLLECT_SECONDS = 120


class DoctorError(Exception):
    """The step's checks could not be listed."""


def step_checks(inventory_path: str, step: int | None, disruptive: bool) -> list[str]:
    """The node ids pytest collects for the inventory and step (its own selection rules)."""
    root = suite_root()
    if root is None:
        raise DoctorError("the suite's tests are not installed beside the package: reinstall rackproof")
    argv = [sys.executable, "-m", "pytest", "--collect-only", "-q", "--inventory", inventory_path]
    argv += ["--step", str(step)] if step is not None else []
    argv += ["--allow-disruptive"] if disruptive else []
    try:
        done = subprocess.run(argv, cwd=root, capture_output=True, text=True, timeout=COLLECT_SECONDS,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise DoctorError(f"listing the step's checks took over {COLLECT_SECONDS} s (pytest --collect-only)") from None
    if done.returncode not in (0, 5):       # 5: nothing collected
        last = next((line for line in reversed((done.stdout + done.stderr).splitlines()) if line.strip()), "")
        raise DoctorError(f"pytest could not list the step's checks: {one_line(last)}")
    return [line.strip() for line in done.stdout.splitlines() if "::" in line]


@dataclass
class NodeReport:
    node: str
    surveyed: bool
    problem: str = ""                          # why it could not be surveyed
    findings: list[Finding] = field(default_factory=list)
    keeps: dict[str, list[str]] = field(default_factory=dict)   # finding subject -> checks it keeps from running
    tools: int = 0
    roots: int = 0

    @property
    def ready(self) -> bool:
        return self.surveyed and not any(f.blocks for f in self.findings)

    def as_dict(self) -> dict:
        return {"node": self.node, "surveyed": self.surveyed, "problem": self.problem, "ready": self.ready,
                "findings": [{**f.as_dict(), "checks": self.keeps.get(f.subject, [])} for f in self.findings]}


def surveyed(inventory: Inventory) -> dict[str, NodePrerequisites]:
    """Every node's survey, all nodes at once, over connections of their own (closed after)."""
    hosts = connect(inventory, EvidenceLog())
    try:
        for host in hosts.values():
            host.survey()       # the first one takes every node's survey at once (host.Surveys)
        return {name: host.prerequisites for name, host in hosts.items()}
    finally:
        for host in hosts.values():
            host.remote.close()


def examine(inventory: Inventory, step: int | None, checks: list[str]) -> list[NodeReport]:
    """Each joined node's findings for `checks` (node ids), from a survey of every node at once."""
    cluster = ClusterAtStep(inventory, step or FINISHED)
    functions = {check.split("[", 1)[0] for check in checks}
    users = probe_users()
    probes = [p for p in catalog() if functions & set(users.get(p.name, ()))]
    every = surveyed(inventory)
    return [_examine(cluster, node, every[node.name], probes, users, functions) for node in cluster.nodes]


def _examine(cluster: ClusterAtStep, node: Node, prerequisites: NodePrerequisites, probes, users,
             functions) -> NodeReport:
    if prerequisites.survey is None:
        return NodeReport(node.name, False, prerequisites.problem)
    tools = {t.name: t for p in probes for t in tools_of(p) if needed_on(t, cluster, node)}
    names = {p.name for p in probes}
    roots = [r for r in prerequisites.roots if r.probe in names]
    findings = survey_findings(cluster, node, prerequisites.survey, roots, tools.values())
    # probe -> the subjects a finding names that keep it from running: its tools, their daemons, its root commands
    needs = {p.name: {t.name for t in tools_of(p)} | {t.daemon[0] for t in tools_of(p) if t.daemon} for p in probes}
    for r in roots:
        needs[r.probe].add(f"sudo {r.text}")
    keeps = {f.subject: sorted({check for name, subjects in needs.items() if f.subject in subjects
                                for check in users.get(name, ()) if check in functions}) for f in findings}
    return NodeReport(node.name, True, "", findings, keeps, len(tools), len(roots))
