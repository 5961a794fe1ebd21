"""What a node must offer for the checks to run at all: the tools on the login's PATH, the groups
and daemons they use, and the commands the suite runs as root. `rackproof doctor` lists what is
missing before a run; in a run the same findings make each check that needs them "not verified"
in the same words (rackproof.nodes.host asks before it runs a probe), never a hardware failure and
never a pass. `rackproof sudoers` writes the root commands as a sudoers.d file.

A probe needs a tool of TOOLS when its command names it; a tool the table does not know is part
of every Ubuntu base system (coreutils, iproute2, procps, sudo), which selftests/test_prerequisites
holds every probe's command to.
"""

from __future__ import annotations

import re
import shlex
import threading
from dataclasses import asdict, dataclass
from functools import cache
from typing import Callable, Iterable

from rackproof.inventory.model import ClusterAtStep, Node
from rackproof.probes.probe import Command, Probe
from rackproof.probes import ParseError
from rackproof.probes._between import declared
from rackproof.probes.bonding import BONDING
from rackproof.probes.files import CONFIG_PATHS
from rackproof.probes.ip import LINK_SET
from rackproof.probes.jetson import JETSON_CLOCKS
from rackproof.probes.kernellog import JOURNALCTL_ARGS, KERNEL_LOG
from rackproof.probes.netplan import NAMING_INTERFACES
from rackproof.probes.sockets import LISTENING_PROCESSES
from rackproof.probes.sudo import SUDO_RULES
from rackproof.probes.survey import (DAEMON, GROUPS, RUNS, SUDO_ALLOWED, SURVEY, SURVEY_PART, SURVEY_PARTS, TOOLS_ON_PATH,
                                     Survey)
from rackproof.probes.systemd import USER_JOBS
from rackproof.nodes.remote import NoAnswer, NodeUnreachable
from rackproof.nodes.replay import ReplayError
from rackproof.probes.safetext import one_line

EVERY_NODE, SPARKRUN_HEAD, SLURM_CONTROLLER = "every node", "the sparkrun head", "the Slurm controller"


@dataclass(frozen=True)
class Tool:
    name: str
    fix: str                                   # what installs it (JetPack, DGX OS and Ubuntu alike)
    platforms: tuple[str, ...] = ("thor", "spark")
    on: str = EVERY_NODE
    wanted: Callable[[ClusterAtStep], bool] = lambda cluster: True   # only when the inventory asks for it
    group: str | None = None                   # a group the login must be in to use it
    daemon: tuple[str, str, str] | None = None  # (daemon, its client asking it, what starts it)
    minimum: tuple[int, ...] | None = None     # the oldest version the checks' options work with
    judged: bool = False                       # a check judges it itself (sparkrun on the head is the
                                               # Cordatus preflight's "sparkrun runtime"): never gated
    asked: str = "--version"                   # what the survey runs it with to see it run: a flag that
                                               # only prints (its version, else its usage) and changes nothing


# the tools of the measurements between nodes come from their declarations (probes._between)
TOOLS = {t.name: t for t in (
    *(Tool(b.tool, b.fix, b.platforms, minimum=b.minimum, asked=b.asked) for b in declared()),
    Tool("ethtool", "sudo apt install ethtool"),
    Tool("lldpcli", "sudo apt install lldpd",
         daemon=("lldpd", "lldpcli show configuration", "sudo systemctl enable --now lldpd"), asked="-v"),
    Tool("chronyc", "sudo apt install chrony", wanted=lambda c: c.slurm is not None,
         daemon=("chronyd", "chronyc tracking", "sudo systemctl enable --now chrony"), asked="-v"),
    Tool("nvidia-smi", "it ships with the GPU driver: on JetPack sudo apt install nvidia-jetpack, on DGX OS "
                       "reinstall the driver's nvidia-utils package", asked="-h"),
    Tool("nvpmodel", "sudo apt install nvidia-l4t-nvpmodel", platforms=("thor",), asked="-h"),
    Tool("jetson_clocks", "sudo apt install nvidia-l4t-tools", platforms=("thor",),
         wanted=lambda c: c.expect.clocks_locked, asked="--help"),
    Tool("ibdev2netdev", "sudo apt install mlnx-tools (DOCA-OFED)", platforms=("spark",), asked="-h"),
    Tool("mpirun", "sudo apt install openmpi-bin", platforms=("spark",), wanted=lambda c: c.expect.run_nccl),
    Tool("docker", "sudo apt install docker.io", platforms=("spark",), on=SPARKRUN_HEAD,
         wanted=lambda c: c.sparkrun is not None, group="docker"),
    Tool("sparkrun", "uvx sparkrun setup install (as the login; or pip install sparkrun)", platforms=("spark",),
         on=SPARKRUN_HEAD, wanted=lambda c: c.sparkrun is not None, judged=True),
    Tool("scontrol", "sudo apt install slurm-client", wanted=lambda c: c.slurm is not None),
    Tool("sinfo", "sudo apt install slurm-client", on=SLURM_CONTROLLER, wanted=lambda c: c.slurm is not None),
    Tool("srun", "sudo apt install slurm-client", on=SLURM_CONTROLLER, wanted=lambda c: c.slurm is not None),
    Tool("munge", "sudo apt install munge", wanted=lambda c: c.slurm is not None,
         daemon=("munged", "munge -n", "sudo systemctl enable --now munge")),
    Tool("unmunge", "sudo apt install munge", wanted=lambda c: c.slurm is not None),
    Tool("ssh", "sudo apt install openssh-client", asked="-V"),
    Tool("ssh-keygen", "sudo apt install openssh-client", asked="--help"),   # no version flag: its usage
)}


@cache
def tools_of(probe: Probe) -> list[Tool]:
    """The tools of TOOLS that the probe's command runs (asked before every command: kept)."""
    return [tool for name, tool in TOOLS.items()
            if re.search(r"(?<![\w./$-])" + re.escape(name) + r"(?![\w.-])", probe.template)]


def needed_on(tool: Tool, cluster: ClusterAtStep, node: Node) -> bool:
    if cluster.cluster.platform not in tool.platforms or not tool.wanted(cluster):
        return False
    if tool.on == SPARKRUN_HEAD:
        return bool(cluster.nodes) and node.name == cluster.nodes[0].name
    if tool.on == SLURM_CONTROLLER:
        return cluster.slurm is not None and node.name == cluster.slurm.controller
    return True


# --- what the suite runs as root ----------------------------------------------------------

class Glob(str):
    """An argument of a root command that stands for many (a folder's files): a wildcard in sudoers."""


@dataclass(frozen=True)
class RootCommand:
    probe: str                  # the probe that runs it
    words: tuple[str, ...]      # the tool, then its arguments (a Glob: any file it matches); LIST: sudo's own
    required: bool              # False: the probe reads less without it (`a || sudo -n a`)
    text: str                   # as the probe runs it after `sudo -n`

    @property
    def asked(self) -> str:
        """What follows `sudo -n -l` to ask, without running anything, whether sudo would run it."""
        return self.text.removeprefix("-l ") if self.words == LIST else self.text


LIST = ("list",)   # sudoers' own right to run `sudo -l -U LOGIN`


def _required(probe: Probe, words: tuple[str, ...] | None = None, **values) -> RootCommand:
    text = probe.command(**values).removeprefix("sudo -n ")
    return RootCommand(probe.name, words or tuple(shlex.split(text)), True, text)


def _optional(probe: str, *words: str) -> RootCommand:
    return RootCommand(probe, words, False, " ".join(shlex.quote(w) for w in words))


def root_commands(cluster: ClusterAtStep, node: Node, disruptive: bool) -> list[RootCommand]:
    """Every command the suite may run as root on the node, with the values the inventory gives."""
    found = [_required(LISTENING_PROCESSES)]
    if cluster.cluster.platform == "thor" and cluster.expect.clocks_locked:
        found.append(_required(JETSON_CLOCKS))
    if cluster.slices:
        found += [_required(SUDO_RULES, LIST, login=login) for login in cluster.slices.holders]
        found += [_required(USER_JOBS, login=login) for login in cluster.slices.holders]
    if disruptive and node.bond:
        found += [_required(LINK_SET, lane=lane, state=state) for lane in node.bond.lanes for state in ("down", "up")]
    if node.bond:
        found.append(_optional(BONDING.name, "cat", f"/proc/net/bonding/{node.bond.name}"))
    found += [_optional("config files", "sha256sum", "--", Glob(path) if "*" in path else path)
              for path in CONFIG_PATHS]
    if cluster.rollback:
        found.append(_optional("backup files", "sha256sum", "--", Glob(f"{cluster.rollback.backup_dir}/*")))
    # the patterns name interfaces a check finds at run time (a CX7 port's Down twin): no fixed
    # list exists; grep -q prints nothing, and the files are netplan's only
    found.append(_optional(NAMING_INTERFACES.name, "grep", "-q", "-E", Glob("*"), "--", Glob("/etc/netplan/*.yaml")))
    # the kernel log (issue 43): the login reads the journal in adm or systemd-journal; else this
    found.append(_optional(KERNEL_LOG.name, "journalctl", *JOURNALCTL_ARGS))
    return found


# --- the survey and what it finds ------------------------------------------------------------

def survey_command(cluster: ClusterAtStep, node: Node) -> tuple[Command, list[RootCommand]]:
    """One command asking everything the findings need, for every tool and root command (the
    step decides only which of them a finding blocks), and the root commands it asks about."""
    roots = root_commands(cluster, node, disruptive=True)
    names = list(TOOLS) + sorted({r.words[0] for r in roots if r.words != LIST} - set(TOOLS))
    parts = [TOOLS_ON_PATH.command(tools=names), GROUPS.command()]
    parts += [DAEMON.command(tool=t.name, client=Command(t.daemon[1]), daemon=t.daemon[0])
              for t in TOOLS.values() if t.daemon]
    parts += [RUNS.command(tool=t.name, flag=t.asked) for t in TOOLS.values() if needed_on(t, cluster, node)]
    parts += [SUDO_ALLOWED.command(command=Command(root.asked), index=k) for k, root in enumerate(roots)]
    started = " ".join(SURVEY_PART.command(command=Command(f"{{ {part}; }}"), index=k) for k, part in enumerate(parts))
    files = Command(" ".join(f'"$t/{k}"' for k in range(len(parts))))
    return SURVEY_PARTS.command(started=Command(started), files=files), roots


@dataclass(frozen=True)
class Finding:
    """Something a node lacks that checks need: the same words in `rackproof doctor` and in each
    check it keeps from running ("not verified")."""
    node: str
    subject: str        # the tool, daemon, group or root command
    why: str            # "iperf3 is not on the login's PATH"
    fix: str            # "sudo apt install iperf3"
    blocks: bool = True  # False: the checks run and read less (an optional root command)

    def __str__(self) -> str:
        return f"{self.node}: {self.why} ({self.fix})"

    def as_dict(self) -> dict:
        return asdict(self)


def _version(text: str) -> tuple[int, ...] | None:
    found = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", text)
    return tuple(int(g) for g in found.groups() if g is not None) if found else None


def _reinstall(tool: Tool) -> str:
    """The fix of a tool that is there and broken: its package installed again."""
    if tool.fix.startswith("sudo apt install "):
        return f"sudo apt install --reinstall {tool.fix.removeprefix('sudo apt install ')}, and the packages of " \
               "the library it names"
    return f"install it again: {tool.fix}"


def tool_finding(node: str, tool: Tool, survey: Survey, login: str) -> Finding | None:
    found = survey.tools.get(tool.name)
    if found is None:
        return None                    # not asked: nothing known
    if found.path is None:
        return Finding(node, tool.name, f"{tool.name} is not on the login's PATH", tool.fix)
    if found.group is not None:
        return Finding(node, tool.name, f"{found.path} may not be run by {login} (it is for group {found.group})",
                       f"sudo usermod -aG {found.group} {login}, then log in again")
    if tool.group and tool.group not in survey.groups:
        return Finding(node, tool.name, f"{login} is not in group {tool.group}, which {tool.name} needs",
                       f"sudo usermod -aG {tool.group} {login}, then log in again")
    ran = survey.runs.get(tool.name)
    if ran is not None and not ran.ran:
        how = f"exited {ran.status}" if ran.status < 128 else f"died of signal {ran.status - 128}"
        return Finding(node, tool.name, f"{found.path} does not run: `{tool.name} {tool.asked}` {how}, saying "
                                        f"\"{one_line(ran.words)[:300]}\"", _reinstall(tool))
    if tool.daemon and survey.daemons.get(tool.daemon[0]) is False:
        return Finding(node, tool.daemon[0], f"{tool.daemon[0]} does not answer `{tool.daemon[1]}`", tool.daemon[2])
    if tool.minimum and ran is not None:
        version = _version(ran.words)
        if version is not None and version < tool.minimum:
            wanted = ".".join(map(str, tool.minimum))
            return Finding(node, tool.name, f"{tool.name} is {'.'.join(map(str, version))}, older than {wanted}",
                           f"install {tool.name} {wanted} or newer ({tool.fix})")
    return None


def sudo_finding(node: str, root: RootCommand, index: int, survey: Survey, login: str) -> Finding | None:
    """The finding when the survey's answer for root command `index` says sudo would not run it."""
    if survey.sudo.get(index) is not False:
        return None
    found = survey.tools.get(root.words[0])
    line = sudoers_line(login, root, found.path if found and found.path else root.words[0])
    return Finding(node, f"sudo {root.text}", f"{login} may not run `sudo -n {root.text}`",
                   f"the sudoers line {line} (rackproof sudoers writes it)", root.required)


# --- sudoers syntax -----------------------------------------------------------------------------

_SPECIAL = re.compile(r'([\\,:=()!"#\s])')
_WILDCARDS = re.compile(r"([*?\[\]])")


def _sudoers_word(word: str) -> str:
    escaped = _SPECIAL.sub(r"\\\1", word)
    return escaped if isinstance(word, Glob) else _WILDCARDS.sub(r"\\\1", escaped)


def sudoers_line(login: str, root: RootCommand, path: str) -> str:
    if root.words == LIST:
        return f"{login} ALL=(ALL) NOPASSWD: list"
    return f"{login} ALL=(root) NOPASSWD: " + " ".join([path, *(_sudoers_word(w) for w in root.words[1:])])


def survey_findings(cluster: ClusterAtStep, node: Node, survey: Survey, roots: list[RootCommand],
                    tools: Iterable[Tool]) -> list[Finding]:
    """What the node lacks of `tools` and of `roots`."""
    login = cluster.cluster.user
    found = [f for tool in tools if (f := tool_finding(node.name, tool, survey, login))]
    return found + [f for k, root in enumerate(roots) if (f := sudo_finding(node.name, root, k, survey, login))]


class NodePrerequisites:
    """A node's survey, taken before its first probe in a run, and the finding that keeps a
    probe from running. A survey that could not be taken or read keeps nothing from running: the
    checks then meet what is missing themselves (a fault of the channel is never a finding)."""

    def __init__(self, cluster: ClusterAtStep, node: Node):
        self.cluster, self.node = cluster, node
        self.command, self.roots = survey_command(cluster, node)
        self.survey: Survey | None = None
        self.problem = ""          # why the survey could not be taken or read
        self.asked = False
        self._lock = threading.Lock()   # checks measured at once ask together: one surveys, the others wait

    def take(self, run: Callable[[Command], str]) -> None:
        """Survey the node once: run(command) -> its output (the caller's transport, its evidence)."""
        with self._lock:
            if self.asked:
                return
            self.asked = True
            try:
                self.survey = SURVEY.parse(run(self.command), {})
            except (NodeUnreachable, NoAnswer, ReplayError, ParseError) as e:   # nothing known
                self.problem = one_line(str(e)) or type(e).__name__

    def lacking(self, probes: Iterable[Probe], commands: Iterable[str]) -> Finding | None:
        """The first thing the node lacks that one of `probes` needs, or that running `commands`
        (as the probes made them) as root needs; None when nothing is known to be missing."""
        if self.survey is None:
            return None
        login = self.cluster.cluster.user
        for probe in probes:
            for tool in tools_of(probe):
                if not tool.judged and (f := tool_finding(self.node.name, tool, self.survey, login)):
                    return f
        ran = {c.removeprefix("sudo -n ") for c in commands if c.startswith("sudo -n ")}
        return next((f for k, root in enumerate(self.roots) if root.required and root.text in ran
                     and (f := sudo_finding(self.node.name, root, k, self.survey, login))), None)
