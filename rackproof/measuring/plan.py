"""Measure once, judge many: the run's measurement plan.

Before the first check runs, the controller (the pytest process; pytest-xdist's controller,
never a worker) builds the plan from the checks it selected and runs it phase by phase:

    facts       every read-only measurement of every target, all at once (ethtool, LLDP, pings),
                and the lanes' error counters before any load when a check judges them
    mesh        every node's SSH to all its peers, all nodes at once
    serving     beside the facts and the mesh (it loads no lane; they only read): the engines'
                answers, then the models through the agent, then the comparison of a model
                through the agent with the same one on its node: one entry after another, every
                node's engine at once, one engine at a time on a node (its GPU)
    load        after all three: throughput rounds, one measurement after the other: in a round
                every node sends once and receives once (lanes are full duplex), the round's nodes
                locked; then a collective over every CX7 node (NCCL), its nodes locked
    after load  the lanes' error counters again
    settled     before the verdict (rackproof.nodes.racklife): a node declared unreachable is tried once
                more, and what concerns it measured then if it answers (a late node); what was
                measured of a node before it rebooted is marked, never judged
    diagnosis   the causes of what failed: for the targets whose result shows a symptom only (a rate
                under its floor, munge refused, a chat not whole, a peer's name not reached), what
                their failing judges name (rackproof.measuring.diagnosis): packets of the MTU per bond
                member, the members' link, a credential decoded on the controller, the engine's
                health from the agent's node, where a name leads
    disruptive  last, and only when its check is selected (--allow-disruptive): a bond member
                taken down under load and brought back, one pair after the other, the whole rack
                held by this run alone (no other measurement of any run meanwhile)

An entry (rackproof.measurements) measures one thing for every target of the checks that name
it (rackproof.checks.entries_named: a check imports its entry and asks `planned(ENTRY)`); their
parameter kind is the entry's. What a target gave, its value or its exception with its evidence,
is kept under (entry key, target id); a check asks for its own (`Measured.part`) and judges it.
The results reach pytest-xdist's workers as JSON in the run's private folder (rackproof.nodes.portable):
the workers only judge.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass, field
from enum import IntEnum
from pathlib import Path
from typing import Callable, Collection, Iterable, Sequence

from rackproof.inventory import kinds

from rackproof.measuring import schedule, traffic
from rackproof.nodes import together

from rackproof.nodes import portable, racklife
from rackproof.nodes.host import Host
from rackproof.inventory.model import ClusterAtStep
from rackproof.measuring.linkhealth import LoadLedger
from rackproof.nodes.remote import Evidence, EvidenceLog
from rackproof.measuring.targets import target
from rackproof.nodes.together import Part


class Phase(IntEnum):
    FACTS = 1
    MESH = 2
    LOAD = 3
    AFTER_LOAD = 4
    SERVING = 5
    DISRUPTIVE = 6
    DIAGNOSIS = 7


@dataclass
class Context:
    """What a plan's measurements run with."""
    cluster: ClusterAtStep
    hosts: dict[str, Host]
    log: EvidenceLog
    node_locks: Path                      # the cluster's lock folder (rackproof.nodes.runfolder)
    ledger: LoadLedger | None = None      # the lanes' counters before load, when a check judges them
    access_key: Callable[[], str] | None = None   # the agent's key (a secret of the run), read when first needed
    noted: dict[str, list[Evidence]] = field(default_factory=dict)   # node -> its counters' evidence
    said: Callable[[str], None] = lambda line: None   # a line for the person watching (the terminal)
    measured: dict[tuple[str, str], Part] = field(default_factory=dict)   # what the phases before the diagnosis gave


Gather = Callable[[list[tuple], Context], dict[tuple, Part]]


@dataclass(frozen=True)
class Entry:
    key: str                    # what it measures: "lane.link", "lane.one_stream"
    phase: Phase
    kind: str                   # its checks' parameter kind (rackproof.inventory.kinds)
    gather: Gather              # every wanted value of the kind -> its Part


def each(key: str, phase: Phase, kind: str, fn: Callable[[object, Context], object]) -> Entry:
    """fn(target, context) for every target at once, each with its own evidence and exception."""
    def gather(values: list[tuple], ctx: Context) -> dict[tuple, Part]:
        return together.at_once(values, lambda value: fn(target(kind, value, ctx.hosts, ctx.cluster), ctx),
                                ctx.log, workers=len(values))
    return Entry(key, phase, kind, gather)


def of_every_node(key: str, phase: Phase, kind: str, fn: Callable[[Host, Context], object]) -> Entry:
    """fn(host, context) on every node of a whole-cluster value (every_node) at once: {node: what
    it gave}, its nodes' evidence in their order; the first node's exception (in that order) if any."""
    def gather(values: list[tuple], ctx: Context) -> dict[tuple, Part]:
        found = {}
        for value in values:
            parts = together.at_once(list(value), lambda name: fn(ctx.hosts[name], ctx), ctx.log, workers=len(value))
            evidence = [ev for name in value for ev in parts[name].evidence]
            error = next((parts[name].error for name in value if parts[name].error is not None), None)
            found[value] = Part(None if error else {name: parts[name].value for name in value}, error, evidence)
        return found
    return Entry(key, phase, kind, gather)


def in_rounds(key: str, kind: str, fn: Callable[[Host, Host, Context], object],
              ahead: Callable[[Host, Host, Context], None] | None = None) -> Entry:
    """fn(sender, receiver, context) for every ordered pair, a round at a time (rackproof.inventory.kinds),
    the round's pairs at once, its nodes locked against other runs on the cluster. ahead(sender,
    receiver, context), when given, starts what a pair's measurement will take (its servers,
    rackproof.measuring.traffic.ready: they only listen) while the round before measures, the first round's
    in its lock before it measures: only the first round waits for its servers, and no round's
    start beside another round's (on two cores, forty -P 4 servers starting at once made
    the first round's clients wait a second). What was started ahead and not taken is stopped
    when the rounds end, whatever happened."""
    def gather(values: list[tuple], ctx: Context) -> dict[tuple, Part]:
        wanted, found = set(values), {}
        rounds = [pairs for pairs in ([pair for pair in round_ if pair in wanted]
                                      for round_ in kinds.rounds(kind, ctx.cluster)) if pairs]

        def readied(pairs: list[tuple]) -> None:   # a pair whose servers did not start starts its own
            together.at_once(pairs, lambda p: ahead(ctx.hosts[p[0]], ctx.hosts[p[1]], ctx), ctx.log,
                             workers=len(pairs))
        with traffic.untaken_stopped(ctx.hosts.values()) if ahead else nullcontext(), \
                ThreadPoolExecutor(max_workers=1) as beside:
            for k, pairs in enumerate(rounds):
                try:
                    with schedule.holding(ctx.node_locks, sorted({name for pair in pairs for name in pair})):
                        if ahead and k == 0:
                            readied(pairs)
                        coming = beside.submit(readied, rounds[k + 1]) if ahead and k + 1 < len(rounds) else None
                        found.update(together.at_once(pairs, lambda p: fn(ctx.hosts[p[0]], ctx.hosts[p[1]], ctx),
                                                      ctx.log, workers=len(pairs)))
                        if coming is not None:
                            coming.result()
                except schedule.LockBusy as e:   # another run holds these nodes: not measured, and said so
                    found.update({pair: Part(None, e, []) for pair in pairs})
        return found
    return Entry(key, Phase.LOAD, kind, gather)


def one_per_node(key: str, phase: Phase, kind: str, fn: Callable[[object, Context], object],
                 shares: Callable[[tuple], str] = lambda value: value[0]) -> Entry:
    """fn(target, context) for every target, in turns: a turn takes one target of each node at
    once, so the targets that share a node (`shares`: its engines, which share its GPU) go one
    after another."""
    def gather(values: list[tuple], ctx: Context) -> dict[tuple, Part]:
        by_node: dict[str, list[tuple]] = {}
        for value in values:
            by_node.setdefault(shares(value), []).append(value)
        found: dict[tuple, Part] = {}
        for turn in range(max(map(len, by_node.values()), default=0)):
            these = [mine[turn] for mine in by_node.values() if turn < len(mine)]
            found.update(together.at_once(these, lambda value: fn(target(kind, value, ctx.hosts, ctx.cluster), ctx),
                                          ctx.log, workers=len(these)))
        return found
    return Entry(key, phase, kind, gather)


def after_load(key: str, kind: str, fn: Callable[[object, Context], object]) -> Entry:
    """fn(lane, context) after the last load, each lane with its node's counters noted before
    the first as evidence too."""
    inner = each(key, Phase.AFTER_LOAD, kind, fn)

    def gather(values: list[tuple], ctx: Context) -> dict[tuple, Part]:
        parts = inner.gather(values, ctx)
        return {value: Part(part.value, part.error, ctx.noted.get(value[0], []) + part.evidence)
                for value, part in parts.items()}
    return Entry(key, Phase.AFTER_LOAD, kind, gather)


def alone(key: str, kind: str, fn: Callable[[Host, Host, Context], object]) -> Entry:
    """fn(sender, receiver, context) for every ordered pair, one pair after the other, in the
    disruptive phase: the whole rack held by this run alone."""
    def gather(values: list[tuple], ctx: Context) -> dict[tuple, Part]:
        found: dict[tuple, Part] = {}
        for pair in values:
            found.update(together.at_once([pair], lambda p: fn(ctx.hosts[p[0]], ctx.hosts[p[1]], ctx), ctx.log,
                                          workers=1))
        return found
    return Entry(key, Phase.DISRUPTIVE, kind, gather)


def diagnosis(key: str, of: Sequence[tuple[Entry, Callable[[object, object, ClusterAtStep], bool]]],
              fn: Callable[[object, object, Context], object]) -> Entry:
    """Why a measurement failed, once the others are in (after the load, settled): fn(target, what the entry measured for
    it, context) for the targets whose result shows the symptom (`of`: each entry with its
    symptom, shows(target, what it measured, cluster)), all at once; the others are asked
    nothing more, and their judges, which did not fail, do not ask (rackproof.measuring.diagnosis)."""
    kind = of[0][0].kind

    def gather(values: list[tuple], ctx: Context) -> dict[tuple, Part]:
        showing = {}
        for value in values:
            found = target(kind, value, ctx.hosts, ctx.cluster)
            for entry, shows in of:
                part = ctx.measured.get((entry.key, kinds.KINDS[kind].id(value)))
                if part is not None and part.error is None and shows(found, part.value, ctx.cluster):
                    showing[value] = (found, part.value)
                    break
        if not showing:
            return {}
        return together.at_once(list(showing), lambda value: fn(*showing[value], ctx), ctx.log, workers=len(showing))
    return Entry(key, Phase.DIAGNOSIS, kind, gather)


class NotMeasured(Exception):
    """A check asked for what the run's plan did not measure."""


@dataclass
class Measured:
    parts: dict[tuple[str, str], Part]     # (entry key, target id) -> what it gave

    def part(self, key: str, target_id: str) -> Part:
        try:
            return self.parts[(key, target_id)]
        except KeyError:
            raise NotMeasured(f"{key} of {target_id}: not measured by the run's plan (it measures for the checks "
                              "collected before the first one runs): run the check again; if it says so again, "
                              "report it as a rackproof bug") from None

    def dumps(self) -> str:
        return portable.dumps(self.parts)

    @classmethod
    def loads(cls, text: str) -> Measured:
        parts = portable.loads(text)
        if not isinstance(parts, dict) or not all(isinstance(p, Part) for p in parts.values()):
            raise portable.Unportable("not a plan's results")
        return cls(parts)


def selected(test_id: str) -> tuple[str, str]:
    """(check name, target id) of a collected test's id: "tests_x/test_y.py::test_z[thor-1->thor-2]"."""
    function, bracket, rest = test_id.partition("[")     # a target id may hold "::", never "["
    return function.rsplit("::", 1)[-1], rest[:-1] if bracket else ""


def wanted(asked: Callable[[str], Iterable[Entry]], test_ids: Iterable[str], cluster: ClusterAtStep
           ) -> dict[str, list[tuple]]:
    """Each entry's values that a selected check judges (`asked`: a test id -> the entries its
    check names), in the kind's order. A check with parameters of its own beside its target has
    them after the target's id ("all-tensorrt-…")."""
    chosen: dict[str, tuple[Entry, set[str]]] = {}
    for test_id in test_ids:
        target_id = selected(test_id)[1]
        for entry in asked(test_id):
            chosen.setdefault(entry.key, (entry, set()))[1].add(target_id)
    found = {}
    for key, (entry, ids) in chosen.items():
        kind = kinds.KINDS[entry.kind]
        values = [value for value in kind.values(cluster)
                  if kind.id(value) in ids or any(i.startswith(kind.id(value) + "-") for i in ids)]
        if values:
            found[key] = values
    return found


# what shares a lane or a GPU, or disturbs the rack: one entry after another
ONE_AT_A_TIME = (Phase.LOAD, Phase.SERVING, Phase.DISRUPTIVE)
# an engine's answers load no lane (a few kB) and the facts and the mesh only read: the serving
# phase runs beside them, and every load after all three
BESIDE_THE_READS = Phase.SERVING


def run(entries: Sequence[Entry], wanted: dict[str, list[tuple]], ctx: Context) -> Measured:
    """The plan, phase by phase (serving beside the facts and the mesh, the disruptive phase
    last, alone on the rack); a phase's entries at once, but the loads', the engines' and the
    disruptive ones one after another. An entry that fails as a whole (a bug) is every one of
    its targets' error, never the run's; so is a rack another run holds past the bound (its
    disruptive phase, or, for this run's disruptive phase, any measurement)."""
    kind_of = {entry.key: kinds.KINDS[entry.kind] for entry in entries}
    loads = [entry for entry in entries if entry.phase is Phase.LOAD and wanted.get(entry.key)]
    disruptive = [entry for entry in entries if entry.phase is Phase.DISRUPTIVE and wanted.get(entry.key)]

    def gathered(entry: Entry, values: list[tuple] | None = None) -> dict[tuple, Part]:
        values = wanted[entry.key] if values is None else values
        try:
            return entry.gather(values, ctx)
        except Exception as e:
            return {value: Part(None, e, []) for value in values}

    def phase_run(phase: Phase) -> dict[tuple[str, str], Part]:
        todo = [entry for entry in entries if entry.phase == phase and wanted.get(entry.key)]
        # the checks wait for the whole plan: the run says what it measures meanwhile (the
        # diagnosis asks only the targets that show a symptom: none on a healthy rack)
        if todo and phase is not Phase.DIAGNOSIS:
            targets = sum(len(wanted[entry.key]) for entry in todo)
            ctx.said(f"rackproof: measuring {phase.name.lower().replace('_', ' ')} ({len(todo)} "
                     f"measurement{'s' * (len(todo) > 1)}, {targets} target{'s' * (targets > 1)})")
        if phase in ONE_AT_A_TIME:
            done = [gathered(entry) for entry in todo]
        else:
            with ThreadPoolExecutor(max_workers=len(todo) + 1) as pool:
                noting = pool.submit(_note_counters, loads, wanted, ctx) \
                    if phase is Phase.FACTS and loads and ctx.ledger is not None else None   # before any load
                done = list(pool.map(gathered, todo))
                if noting is not None:
                    noting.result()
        return {(entry.key, kind_of[entry.key].id(value)): part
                for entry, found in zip(todo, done) for value, part in found.items()}

    parts: dict[tuple[str, str], Part] = {}
    try:
        with schedule.holding(ctx.node_locks, [schedule.WHOLE_RACK], shared=True):   # no disruptive phase meanwhile
            with ThreadPoolExecutor(max_workers=1) as beside:
                serving = beside.submit(phase_run, BESIDE_THE_READS)
                for phase in (Phase.FACTS, Phase.MESH):
                    parts.update(phase_run(phase))
                parts.update(serving.result())
            for phase in (Phase.LOAD, Phase.AFTER_LOAD):
                parts.update(phase_run(phase))
            _settled([entry for entry in entries if entry not in disruptive and entry.phase is not Phase.DIAGNOSIS],
                     wanted, parts, ctx, gathered)
            ctx.measured = parts   # the causes of what failed, from every result (a late node's too)
            parts.update(phase_run(Phase.DIAGNOSIS))
    except schedule.LockBusy as e:   # another run's disruptive phase held the rack past the bound: nothing ran
        return Measured({(entry.key, kind_of[entry.key].id(value)): Part(None, e, [])
                        for entry in entries for value in wanted.get(entry.key, ())})
    if disruptive:
        try:   # a lane it takes down fails no measurement of this run or another
            with schedule.holding(ctx.node_locks, [schedule.WHOLE_RACK]):
                parts.update(phase_run(Phase.DISRUPTIVE))
        except schedule.LockBusy as e:
            parts.update({(entry.key, kind_of[entry.key].id(value)): Part(None, e, [])
                          for entry in disruptive for value in wanted[entry.key]})
    return Measured(parts)


# a late node's targets are measured again in the run's order
IN_ORDER = (Phase.FACTS, Phase.MESH, Phase.SERVING, Phase.LOAD, Phase.AFTER_LOAD)


def _settled(entries: Sequence[Entry], wanted: dict[str, list[tuple]], parts: dict[tuple[str, str], Part],
             ctx: Context, gathered: Callable[..., dict[tuple, Part]]) -> None:
    """Before the verdict (rackproof.nodes.racklife): a node declared unreachable that answers now has
    what concerns it measured again (a late node); what was measured of a node before it
    rebooted is marked, never judged."""
    names = [node.name for node in ctx.cluster.nodes if node.name in ctx.hosts]
    late, booted = racklife.settle(ctx.hosts, names, ctx.log, ctx.said)
    ids = {(entry.key, value): kinds.KINDS[entry.kind].id(value) for entry in entries for value in wanted.get(entry.key, ())}
    for phase in IN_ORDER if late else ():
        if phase is Phase.LOAD and ctx.ledger is not None:   # its lanes' counters, unread at the first load
            _note_counters([e for e in entries if e.phase is Phase.LOAD and wanted.get(e.key)], wanted, ctx, late)
        for entry in (e for e in entries if e.phase is phase and wanted.get(e.key)):
            again = [value for value in wanted[entry.key] if any(
                racklife.unreached(parts[(entry.key, ids[entry.key, value])]) == name
                or racklife.concerns(name, value, parts[(entry.key, ids[entry.key, value])]) for name in late)]
            if again:
                found = gathered(entry, again)
                for value, part in found.items():
                    noted = [ev for name in late if racklife.concerns(name, value, part) for ev in late[name]]
                    parts[(entry.key, ids[entry.key, value])] = Part(part.value, part.error, noted + part.evidence)
    for (key, value), target_id in ids.items():
        for reboot in booted.values():
            if racklife.concerns(reboot.node, value, parts[(key, target_id)]):
                parts[(key, target_id)] = racklife.before_reboot(reboot, f"{key} of {target_id}",
                                                                 parts[(key, target_id)])


def _note_counters(loads: list[Entry], wanted: dict[str, list[tuple]], ctx: Context,
                   only: Collection[str] | None = None) -> None:
    """Every loaded node's lanes' counters (or only those nodes') before the first round, all nodes
    at once (a node that cannot be read is noted as such: the ledger keeps why)."""
    nodes = sorted({name for entry in loads for pair in wanted[entry.key] for name in pair
                    if only is None or name in only})
    lanes = {name: [lane.name for node, lane in ctx.cluster.lanes if node.name == name] for name in nodes}
    noted = together.at_once(nodes, lambda name: ctx.ledger.note(ctx.hosts[name], lanes[name]), ctx.log,
                             workers=len(nodes))
    ctx.noted.update({name: part.evidence for name, part in noted.items()})
