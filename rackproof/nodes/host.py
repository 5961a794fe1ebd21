"""A node as the checks see it: its inventory entry, a way to run probes, and the typed facts
they read (in the spirit of pytest-testinfra's `host`, simpler).

A probe (rackproof.probes.probe) is a command with its parser; unreadable output raises ProbeFailed
carrying the raw text, so the failure shows what the node printed.
"""

from __future__ import annotations

import re
import secrets
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, TypeVar

from rackproof.probes import bondhash
from rackproof.judging.failure import NotVerified
from rackproof.inventory.model import FINISHED, ClusterAtStep, Inventory, Node
from rackproof.nodes.ownservers import OwnServers
from rackproof.nodes.prerequisites import NodePrerequisites
from rackproof.probes.probe import Command, Probe
from rackproof.probes import ParseError
from rackproof.probes.boot import BOOT_ID
from rackproof.probes.ibdev2netdev import IBDEV2NETDEV, twins
from rackproof.probes.ip import ADDRESSES, ROUTE_GET
from rackproof.probes.netplan import NAMING_INTERFACES
from rackproof.probes.ping import PING, PING_DF, PING_DF_VIA
from rackproof.probes.survey import SURVEY
from rackproof.nodes.remote import Evidence, EvidenceLog, LocalTransport, Remote, Result, SshTransport
from rackproof.nodes.together import at_once
from rackproof.nodes.replay import Recording, RecordingTransport, ReplayTransport

T = TypeVar("T")


class ProbeFailed(Exception):
    """A command whose answer does not say what the check needs (failed, or unreadable)."""

    def __init__(self, node: str, result: Result, reason: str):
        self.node, self.result, self.reason = node, result, reason
        output = (result.stdout + result.stderr).strip() or "(no output)"
        super().__init__(f"{node}: `{result.command}` {reason}\n--- what {node} printed ---\n{output}")


@dataclass
class Host:
    """A node: runs probes (rackproof.probes.probe) and returns what they read; a fact read `once`
    is recalled for the rest of the run, its evidence shown again in each check that uses it."""
    spec: Node
    remote: Remote
    servers: OwnServers = field(default_factory=OwnServers, repr=False)   # the run's measurement servers
    prerequisites: NodePrerequisites | None = field(default=None, repr=False)  # None: nothing asked first
    surveys: Surveys | None = field(default=None, repr=False)   # the run's nodes' surveys, taken together
    _once: dict = field(default_factory=dict, repr=False)   # (probe, values) -> _Fact
    _once_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)   # guards _once itself

    @property
    def name(self) -> str:
        return self.spec.name

    def run(self, probe: Probe, timeout: float | None = None, **values) -> Result:
        """The probe's command and its result, for a check that judges the exit status itself."""
        command = probe.command(**values)
        self.runnable(command)
        # a plain str (the line, in the C locale): evidence crosses xdist workers, whose wire knows no str subclass
        return self.remote.run(command.line, timeout or probe.timeout, probe.repeatable, probe.name, _shown(values))

    def survey(self) -> None:
        """The node's survey (rackproof.nodes.prerequisites), taken once: with every node's at once when
        the run checks this node (Surveys), its evidence then going to the first check that needs it."""
        if self.surveys is not None and self.name in self.surveys.names:
            for ev in self.surveys.evidence_of(self.name):
                self.remote.log.add(ev)
        else:
            self.take_survey()

    def take_survey(self) -> None:
        self.prerequisites.take(lambda c: self.remote.run(c.line, SURVEY.timeout, True, SURVEY.name).stdout)

    def runnable(self, *commands: Command) -> None:
        """NotVerified, in the words `rackproof doctor` uses, when the node lacks what a probe the
        commands were made from needs: a tool, a group, a daemon, a sudo right."""
        if self.prerequisites is None:
            return
        self.survey()
        made = [m for command in commands for m in command.made]
        finding = self.prerequisites.lacking([probe for probe, _ in made], [command for _, command in made])
        if finding is not None:
            raise NotVerified(self.name, made[0][0].does, finding.why, finding.fix)

    def read(self, probe: Probe[T], timeout: float | None = None, **values) -> T:
        """What the probe reads; a failed command or unreadable text is a ProbeFailed."""
        def asked() -> tuple[Result, T]:
            result = self.run(probe, timeout, **values)
            return result, self._parsed(result, lambda out: probe.parse(out, values), probe.ok_exit)
        if not probe.once:
            return asked()[1]
        return self._recalled((probe.name, repr(sorted(values.items()))), probe.name, _shown(values), asked)

    def _recalled(self, key: tuple, probe: str, shown: dict, asked: Callable[[], tuple[Result, T]]) -> T:
        """A `once` fact: asked the first time, recalled after (its evidence shown again). Parts
        of a group measured at once that want the same fact wait for the one that asks; other
        facts of the node are asked meanwhile."""
        with self._once_lock:
            fact = self._once.setdefault(key, _Fact())
        with fact.lock:
            if fact.result is None:   # not asked yet, or the asking failed: ask (again)
                started = time.time()
                fact.result, fact.value = asked()
                fact.started = started
                return fact.value
        result = fact.result
        self.remote.log.add(Evidence(self.name, result.command, result.exit_status, result.stdout, result.stderr, 0.0,
                                     fact.started, probe=probe, values=shown,
                                     note="read earlier in this run; its answer is recalled"))
        return fact.value

    def read_each(self, probe: Probe[T], labels, timeout: float | None = None, **values) -> dict:
        """label -> what the probe reads for it, one command after the other in one round trip
        (the probe's one free field is filled from each label). The batch exits as its last
        command did: each label is judged from its own part of the output, never from that."""
        labels = list(labels)
        if not labels:
            return {}
        (free,) = probe.fields() - set(values)
        commands = {label: probe.command(**values, **{free: label}) for label in labels}

        def asked() -> tuple[Result, dict]:
            self.runnable(*commands.values())
            marker = _marker()
            out = self.run(BATCH, timeout, commands=Command("; ".join(
                f"{SECTION.command(marker=marker + str(label))}; {command}" for label, command in commands.items())))
            return out, self._sections(out.stdout, marker, labels,
                                       lambda label, text: probe.parse(text, {**values, free: label}), commands.get)
        if not probe.once:
            return asked()[1]
        return self._recalled((probe.name, repr(labels), repr(sorted(values.items()))), BATCH.name, {}, asked)

    def read_at_once(self, commands: dict[str, Command], parse: Callable[[str, str], T], timeout: float,
                     describe: Callable[[str], str] | None = None, only_read: bool = False) -> dict[str, T]:
        """label -> what parse(text, label) reads from that label's command; the commands run at
        the same time (several clients of one measurement) in one round trip. A part that cannot
        be read fails as describe(label), by default its command. Commands that `only_read`
        (pings) run again when the connection drops under them; clients that load a link never."""
        if not commands:
            return {}
        self.runnable(*commands.values())
        started = " ".join(BACKGROUND.command(command=c, index=k) for k, c in enumerate(commands.values()))
        marker = _marker()
        shown = "; ".join(f"{SECTION.command(marker=marker + label)}; {SHOW.command(index=k)}"
                          for k, label in enumerate(commands))
        out = self.read(READS_AT_ONCE if only_read else AT_ONCE, timeout=timeout, started=Command(started),
                        shown=Command(shown))
        return self._sections(out, marker, list(commands), lambda label, text: parse(text, label),
                              describe or commands.get)

    def _parsed(self, result: Result, parse: Callable[[str], T], ok_exit: tuple[int, ...]) -> T:
        if result.exit_status not in ok_exit:
            raise ProbeFailed(self.name, result, f"exited with status {result.exit_status}")
        try:
            return parse(result.stdout)
        except ParseError as e:
            raise ProbeFailed(self.name, result, f"printed something the {e.tool} parser cannot read: {e.reason}") from None

    def _sections(self, text: str, marker: str, labels, parse: Callable[[str, str], T],
                  describe: Callable[[str], str]) -> dict:
        """label -> parse(label, its part), for output made of `marker` lines and what followed
        each. A part that cannot be read fails as the command describe(label) names, with that part."""
        parts = dict(re.findall(r"^" + re.escape(marker) + r"(\S+)\n(.*?)(?=^" + re.escape(marker) + r"|\Z)", text,
                                re.M | re.S))
        return {label: self._parsed(Result(str(describe(label)), 0, parts.get(str(label), ""), "", 0.0),
                                    lambda part: parse(label, part), (0,))
                for label in labels}

    # --- facts that need more than one probe's answer as it is -------------------------
    def interfaces(self):
        return {i.name: i for i in self.read(ADDRESSES)}

    def route_to(self, addresses):
        """address -> Route, all looked up in one command."""
        return self.read_each(ROUTE_GET, addresses)

    def ping(self, targets, count: int = 3):
        """target -> PingResult, every target pinged at the same time in one round trip (a node
        of a large rack has many peers: in turn, 31 of them took 15 s)."""
        commands = {target: PING.command(target=target, count=count) for target in targets}
        return self.read_at_once(commands, PING.parser, timeout=30 + 2 * count, only_read=True)

    def path_mtu(self, targets: list[str], mtu: int, members: int = 1):
        """({target: (packets of exactly `mtu` bytes, ...)}, {target: of mtu + 1}): PingResults
        of packets with don't-fragment. Over a bond of `members` members the packets of the MTU
        are sent over each, in bond order, steered by their echo identifier (a path MTU is proven
        per member: a ping that is not steered crosses one member only). All are sent at once in
        one round trip: the larger ones wait out ping's second for a reply that must not come."""
        commands = {}
        for target in targets:
            if members > 1:
                for ident in bondhash.echo_idents(self.spec.ip, target, members):
                    commands[f"fits-{ident}@{target}"] = PING_DF_VIA.command(target=target, size=mtu - 28, ident=ident)
            else:
                commands[f"fits@{target}"] = PING_DF.command(target=target, size=mtu - 28)
            commands[f"over@{target}"] = PING_DF.command(target=target, size=mtu - 27)
        found = self.read_at_once(commands, lambda text, label: PING_DF.parser(text, label.split("@", 1)[1]),
                                  timeout=30, only_read=True)
        fits = {t: tuple(result for label, result in found.items() if label.startswith("fits")
                         and label.split("@", 1)[1] == t) for t in targets}
        return fits, {t: found[f"over@{t}"] for t in targets}

    def set_at_run_time(self, interfaces, present: dict | None = None) -> tuple[list[str], tuple[str, ...]]:
        """(every global address of `interfaces` that no netplan file names, as "ADDRESS on
        INTERFACE": set with ip addr add, gone at the next reboot; the netplan files the login
        could not read, which leave that unknown). `present`: the node's interfaces, when
        already read."""
        present = self.interfaces() if present is None else present
        held = {a: i for i in interfaces if i in present for a in
                (f"{x.local}/{x.prefixlen}" for x in present[i].addresses if x.scope == "global")}
        # a pattern per address that cannot match inside a longer one (10.0.0.1/24 in 110.0.0.1/24)
        patterns = {a: _alone(a, "0-9a-fA-F:.", "0-9") for a in held}
        naming = self.read_each(NAMING_INTERFACES, patterns.values())
        unreadable = tuple(dict.fromkeys(p for n in naming.values() for p in n.unreadable))
        return [f"{a} on {held[a]}" for a, pattern in patterns.items() if not naming[pattern].naming], unreadable

    def rdma_links(self):
        return {m.netdev: m for m in self.read(IBDEV2NETDEV)}

    def netplan_on_down_twins(self, interfaces) -> list[tuple[str, str]]:
        """(Down twin, interface) for each of `interfaces` that no netplan file names while its
        twin on the same PCIe path, Down in ibdev2netdev, is named: the guide's interface-name
        trap (netplan written for the other port)."""
        links = self.rdma_links()
        pairs = [(twin, name) for name, twin in twins(list(links.values())).items()
                 if name in interfaces and not links[twin].up]
        if not pairs:
            return []
        # a pattern per name that cannot match inside a longer one (enp1s0f0np0 in xenp1s0f0np0)
        patterns = {n: _alone(n, "A-Za-z0-9_.-", "A-Za-z0-9_.-") for pair in pairs for n in pair}
        naming = self.read_each(NAMING_INTERFACES, patterns.values())
        return [(down, name) for down, name in pairs
                if naming[patterns[down]].naming and not naming[patterns[name]].naming]


def _alone(text: str, before: str, after: str) -> str:
    """An ERE matching `text` where no character of the classes `before`/`after` touches it."""
    return f"(^|[^{before}])" + text.replace(".", "[.]") + f"($|[^{after}])"


@dataclass
class _Fact:
    """A `once` fact of a node: what asking it gave, when, and the lock its askers wait on."""
    lock: threading.Lock = field(default_factory=threading.Lock)
    result: Result | None = None
    value: object = None
    started: float = 0.0


def _shown(values: dict) -> dict:
    """A probe's values as its evidence names them: each a str or a list of str; a command put
    into it is left out (its own probe's evidence is the batch's)."""
    return {k: [str(x) for x in v] if isinstance(v, (list, tuple)) else str(v)
            for k, v in values.items() if not isinstance(v, Command)}


def _marker() -> str:
    """The start of a batch's section marker lines: a fresh random nonce each batch, so that no
    output of a node (a file's lines, a hostname) can pass for a marker and shift the sections."""
    return f"### rackproof-section-{secrets.token_hex(8)} "


# the suite's plumbing prints nothing of another tool's: each says so (`rackproof probes`)
SECTION = Probe("section marker", "marks where the next command's output starts in a batch", "echo {marker}",
                unseen="its own marker line, with a fresh nonce: no tool's format")
BATCH = Probe("batch", "several probes one after the other in one round trip, each after a section marker",
              "{commands}", unseen="the probes' own answers between its markers: each probe says where it was seen")
BACKGROUND = Probe("in the background", "one of several clients started at once, its output kept in a temporary folder",
                   '{command} >"$t/{index}" 2>&1 &', repeatable=False, unseen="prints nothing: nothing is read")
SHOW = Probe("show", "what that client printed", 'cat "$t/{index}"',
             unseen="the client's own answer: its probe says where it was seen")
AT_ONCE = Probe("at once", "several clients at the same time, then what each printed; the folder is removed",
                't=$(mktemp -d); {started} wait; {shown}; rm -rf "$t"', str, repeatable=False,
                unseen="the clients' own answers: their probes say where they were seen")
READS_AT_ONCE = Probe("reads at once", "several commands that only read (pings) at the same time, then what each "
                      "printed; the folder is removed", AT_ONCE.template, str, unseen=AT_ONCE.unseen)


class Surveys:
    """The surveys of the nodes a run checks, all taken at once: when one is first needed, or
    from `begin` on, in the background while the run starts (pytest collects). Each is a round
    trip and a connect, and one after the other they added up with the nodes. Each node's survey
    evidence goes to the first check that needs that node's survey."""

    def __init__(self, hosts: dict[str, Host], names: list[str], fanout: int, log: EvidenceLog):
        self.hosts, self.names, self.fanout, self.log = hosts, names, fanout, log
        self._lock = threading.RLock()
        self._evidence: dict[str, list[Evidence]] | None = None

    def begin(self) -> None:
        """Every survey taken from now on, in a thread of its own; a check that needs one waits for them."""
        threading.Thread(target=self._all, name="surveys", daemon=True).start()

    def _all(self) -> dict[str, list[Evidence]]:
        """node -> its survey evidence not handed out yet, every survey taken the first time."""
        with self._lock:
            if self._evidence is None:
                parts = at_once(self.names, lambda node: self.hosts[node].take_survey(), self.log, self.fanout)
                self._evidence = {node: part.evidence for node, part in parts.items()}
            return self._evidence

    def evidence_of(self, name: str) -> list[Evidence]:
        """The node's survey evidence (once; later calls get none), every survey taken first."""
        with self._lock:
            return self._all().pop(name, [])


def begin_surveys(hosts: dict[str, Host]) -> None:
    """The surveys of the hosts connect() made (one Surveys serves them all), begun in the background."""
    first = next(iter(hosts.values()), None)
    if first is not None and first.surveys is not None:
        first.surveys.begin()


def connect(inventory: Inventory, log: EvidenceLog, *, replay: Recording | None = None,
            record: str | Path | None = None, servers: OwnServers | None = None,
            step: int = FINISHED) -> dict[str, Host]:
    """A Host for every node of the inventory; the nodes joined at `step` are surveyed together.
    Nothing is connected until a command runs."""
    ssh = inventory.ssh
    servers = servers or OwnServers()
    hosts: dict[str, Host] = {}
    surveys = Surveys(hosts, [node.name for node in inventory.at(step).nodes], ssh.fanout, log)
    for node in inventory.nodes:
        if replay is not None:
            transport = ReplayTransport(node.name, replay)
        elif node.local:
            transport = LocalTransport(node.name)
        else:
            transport = SshTransport(node.name, node.ssh_name, inventory.cluster.user, ssh.connect_timeout,
                                     ssh_config=_expand(ssh.config), identity=_expand(ssh.identity), jump=ssh.jump,
                                     connect_budget=ssh.connect_budget)
        # each fresh SSH connection reads the node's boot id (rackproof.nodes.racklife); a recording keeps
        # what the run measured, without them
        boots = BOOT_ID.command().line if isinstance(transport, SshTransport) and record is None else ""
        if record is not None and replay is None:
            transport = RecordingTransport(transport, node.name, record, redact=log.redact)
        hosts[node.name] = Host(node, Remote(node.name, transport, log, ssh.command_timeout, boot_command=boots),
                                servers, NodePrerequisites(ClusterAtStep(inventory, FINISHED), node), surveys)
    return hosts


def _expand(path: str | None) -> str | None:
    return str(Path(path).expanduser()) if path else None
