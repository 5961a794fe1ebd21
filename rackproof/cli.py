"""`rackproof ...`: inventory checks, the commands the suite runs on nodes, snapshots of a cluster
and what changed between two, a first inventory discovered from the nodes, a run's signed bundle
for the ticket and its check, the run history; and the commands of packages that add their own
(the simulated rack's `rackproof sim`, from rackproof-sim)."""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
from importlib.metadata import EntryPoint, entry_points

from rackproof.ticket import exitstatus
from rackproof.inventory.model import MAX_CONNECT_SECONDS, InventoryError, load_inventory, printable
from rackproof.inventory.userinput import finite_number


def _loaded(path: str):
    """The inventory at `path`; else its problems, one a line, and exit status 2."""
    try:
        return load_inventory(path)
    except InventoryError as e:
        print(e, file=sys.stderr)
        raise SystemExit(2) from None


def _inventory_check(args: argparse.Namespace) -> int:
    inventory = _loaded(args.file)
    nodes = ", ".join(n.name for n in inventory.nodes)
    print(f"{printable(args.file)}: ok: {inventory.cluster.platform} cluster {inventory.cluster.name}, "
          f"{len(inventory.nodes)} nodes ({nodes})")
    return 0


def _probes(args: argparse.Namespace) -> int:
    """Every command the suite can run on a node, as its shell runs it (in the C locale): the probe
    it belongs to, what it reads, whether it needs root, which exit statuses still answer, where
    its format was seen in real outputs and which checks run it: the list a site's security
    reviewer asks for. {fields} are filled per node, lane or peer from cluster.toml, each
    shell-quoted."""
    from .checks import catalog, probe_users
    users = probe_users()
    listed = [{"name": p.name, "does": p.does, "command": p.shown,
               "root": p.root, "exit": p.answers if p.answers == "any" else list(p.answers), "once": p.once,
               "seen_on": list(p.seen_on), "unseen": p.unseen, "checks": users.get(p.name, [])} for p in catalog()]
    if args.json:
        print(json.dumps(listed, indent=1))
        return 0
    for p in listed:
        exits = "any exit status" if p["exit"] == "any" else f"exit {' or '.join(map(str, p['exit']))}"
        once = "; once per node per run" if p["once"] else ""
        checks = "".join(f"\n      {check}" for check in p["checks"]) or " none"
        seen = f"\n    seen on: {', '.join(p['seen_on']) or 'no real output'}" if p["seen_on"] or p["unseen"] else ""
        unseen = f"\n    not seen: {p['unseen']}" if p["unseen"] else ""
        print(f"{p['name']}: {p['does']}\n    command: {p['command']}\n    root: {p['root']}; answers: {exits}{once}"
              f"{seen}{unseen}\n    checks:{checks}")
    return 0


def _doctor(args: argparse.Namespace) -> int:
    """What each node lacks for the step's checks (read-only): exit 1 when a check cannot run."""
    from rackproof.subcommands import doctor
    inventory = _loaded(args.inventory)
    try:
        checks = doctor.step_checks(args.inventory, args.step, args.allow_disruptive)
    except doctor.DoctorError as e:
        print(f"rackproof doctor: {e}", file=sys.stderr)
        return 2
    reports = doctor.examine(inventory, args.step, checks)
    if args.json:
        print(json.dumps({"cluster": inventory.cluster.name, "step": args.step, "checks": len(checks),
                          "nodes": [r.as_dict() for r in reports]}, indent=1))
    else:
        step = f"step {args.step}" if args.step else "the finished cluster"
        print(f"{inventory.cluster.name}, {step}: {len(checks)} checks on {len(reports)} nodes")
        for r in reports:
            if not r.surveyed:
                print(f"{r.node}: not surveyed: {r.problem}")
            elif not r.findings:
                print(f"{r.node}: ready ({r.tools} tools, {r.roots} root commands)")
            for f in r.findings:
                print(f"{f}" + ("" if f.blocks else " [the checks run, and read less]"))
                for check in r.keeps.get(f.subject, [])[:5] if f.blocks else []:
                    print(f"    keeps from running: {check}")
    return 0 if all(r.ready for r in reports) else 1


def _sudoers(args: argparse.Namespace) -> int:
    """The least-privilege sudoers.d file for the suite's login, from every node's survey."""
    from rackproof.subcommands import doctor, sudoers
    inventory = _loaded(args.inventory)
    surveyed = doctor.surveyed(inventory)
    for name, node in surveyed.items():
        if node.survey is None:
            print(f"{name}: not surveyed ({node.problem}): its tools' paths are not in the file", file=sys.stderr)
    if not any(node.survey for node in surveyed.values()):
        print("rackproof sudoers: no node could be surveyed: nothing to write", file=sys.stderr)
        return 2
    text = sudoers.render(inventory, surveyed, args.allow_disruptive)
    if problem := sudoers.visudo_problem(text):
        print(f"rackproof sudoers: visudo -cf refuses the file: {problem}", file=sys.stderr)
        return 2
    if args.output:
        try:
            with open(args.output, "x", encoding="utf-8") as f:
                f.write(text)
        except OSError as e:
            print(f"{printable(args.output)}: cannot be written: {e.strerror or e}", file=sys.stderr)
            return 2
    else:
        sys.stdout.write(text)
    return 0


def _snapshot(args: argparse.Namespace) -> int:
    """Every node's facts that a change can alter, read-only, into one JSON file."""
    from rackproof.ticket import snapshot
    taken = snapshot.of_cluster(_loaded(args.inventory))
    try:
        snapshot.write(taken, args.output)
    except OSError as e:
        print(f"{printable(args.output)}: cannot be written: {e.strerror or e}", file=sys.stderr)
        return 2
    for name, facts in taken["nodes"].items():
        if "unreachable" in facts:
            print(f"{name}: unreachable ({facts['unreachable']}): no facts", file=sys.stderr)
        for fact, why in facts.get("unread", {}).items():
            print(f"{name}: {fact} not read: {why}", file=sys.stderr)
    print(f"{printable(args.output)}: {len(taken['nodes'])} nodes of {taken['cluster']}")
    return 0


def _diff(args: argparse.Namespace) -> int:
    """What changed from the first snapshot to the second: exit 1 when anything did."""
    from rackproof.ticket import changes, snapshot
    try:
        before, after = snapshot.read(args.before), snapshot.read(args.after)
    except snapshot.SnapshotError as e:
        print(e, file=sys.stderr)
        return 2
    found = changes.compare(before, after)
    if args.json:
        print(json.dumps([c.as_dict() for c in found], indent=1))
    else:
        print("\n".join(map(str, found)) if found else "no change")
    return 1 if found else 0


def _discover(args: argparse.Namespace) -> int:
    """A first cluster.toml from what the nodes say; what they cannot say is marked."""
    import datetime as dt
    from pathlib import Path
    from rackproof.subcommands import discover
    output = Path(args.output)
    try:
        if output.exists() and not args.force:
            raise discover.DiscoverError([f"{printable(args.output)} exists: not overwritten (another -o, or --force)"])
        given = discover.targets(args.ssh + (discover.read_targets_file(args.ssh_file) if args.ssh_file else []))
        operator = discover.Operator(args.name, discover.parse_expect(args.expect), args.agent_key_env,
                                     args.agent_key_file)
        how = discover.Connection(args.user, args.ssh_config, args.identity, args.jump, args.connect_timeout)
        text, guessed = discover.inventory_text(discover.ask_all(given, how), how, operator, dt.datetime.now())
    except discover.DiscoverError as e:
        print("\n".join(f"rackproof discover: {p}" for p in e.problems), file=sys.stderr)
        return 2
    try:
        output.write_text(text)
    except OSError as e:
        print(f"{printable(args.output)}: cannot be written: {e.strerror or e}", file=sys.stderr)
        return 2
    if problems := discover.checked(text):
        print(f"{printable(args.output)}: written; inventory check finds:", *problems, sep="\n  ", file=sys.stderr)
        return 2
    print(f"{printable(args.output)}: {len(given)} nodes; {guessed} places marked \"{discover.GUESSED}\": check them "
          "against the rack")
    return 0


def _bundle(args: argparse.Namespace) -> int:
    """The report folder as one signed file for the ticket."""
    from pathlib import Path
    from rackproof.ticket import bundle
    output = Path(args.output) if args.output else Path(args.folder, "bundle.tar")
    try:
        manifest = bundle.make(args.folder, Path(args.key).expanduser(), output)
    except bundle.BundleError as e:
        print(f"rackproof bundle: {e}", file=sys.stderr)
        return 2
    print(f"{printable(str(output))}: {printable(manifest['verdict_words'])} of {printable(manifest['cluster'])} for "
          f"ticket {printable(manifest['ticket']) or '(none given)'} ({bundle.describe(manifest['scope'])}), "
          f"{len(manifest['files'])} files, signed with {printable(args.key)}; contents digest "
          f"{manifest['contents_digest']}")
    return 0


def _verify(args: argparse.Namespace) -> int:
    """Who signed what verdict for which ticket, in one line; exit 1 when anything does not hold."""
    from rackproof.ticket import bundle
    try:
        print(bundle.verify(args.bundle, args.allowed_signers))
    except bundle.BundleError as e:
        print(f"rackproof verify: {e}", file=sys.stderr)
        return 2
    except bundle.NotVerified as e:
        print(f"NOT VERIFIED: {printable(args.bundle)}: {e}", file=sys.stderr)
        return 1
    return 0


def _anonymise(args: argparse.Namespace) -> int:
    """A recording with the site's names, addresses, MACs, serial numbers and keys masked."""
    from pathlib import Path
    from rackproof.ticket import anonymise
    from rackproof.nodes.replay import Recording, ReplayError
    try:
        inventory_path = Path(args.inventory) if args.inventory else Recording(args.recording).inventory_path
    except ReplayError as e:
        print(f"rackproof anonymise: {e}", file=sys.stderr)
        return 2
    inventory = _loaded(str(inventory_path))
    try:
        nodes, answers = anonymise.anonymise_recording(args.recording, args.output, anonymise.Anonymiser(inventory),
                                                       inventory_path.read_text(encoding="utf-8"))
    except (anonymise.AnonymiseError, OSError) as e:
        print(f"rackproof anonymise: {printable(str(e))}", file=sys.stderr)
        return 2
    print(f"{printable(args.output)}: {nodes} nodes, {answers} answers; names, addresses, MACs, serial numbers "
          "and keys masked. Replay it before sending: pytest --replay " + printable(args.output))
    return 0


def _history(args: argparse.Namespace) -> int:
    """Each figure's runs, oldest first, and the last against the median of those before it."""
    import statistics
    from rackproof.ticket import history
    try:
        found = history.points(args.db, args.cluster, args.figure, args.subject, last=args.last)
    except history.HistoryError as e:
        print(f"rackproof history: {e}", file=sys.stderr)
        return 2
    if not found:
        print("no figure recorded" + (" that matches" if args.figure or args.subject or args.cluster else ""))
        return 0
    for (cluster, reference, subject, unit), series in found.items():
        values = [p.value for p in series]
        line = f"{printable(cluster)} {printable(reference)} {printable(subject)} ({printable(unit)}): " + \
            " ".join(f"{v:g}" for v in values)
        against = ""
        if len(values) > 1 and (median := statistics.median(values[:-1])):
            against = f"{(values[-1] - median) / abs(median):+.1%} against the median {median:g} before it; "
        print(f"{line}  (last {against}run {printable(series[-1].started)}, {printable(series[-1].verdict)})")
    return 0


def _runs(text: str) -> int:
    """A count of runs, 1 to 1000 (an argparse type)."""
    if not text.isdigit() or not 1 <= int(text) <= 1000:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number from 1 to 1000")
    return int(text)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rackproof", description=__doc__, epilog=exitstatus.text(),
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)

    inventory = commands.add_parser("inventory", help="work with cluster.toml files")
    inventory_commands = inventory.add_subparsers(dest="action", required=True)
    check = inventory_commands.add_parser("check", help="validate an inventory; exit 2 on problems")
    check.add_argument("file")
    check.set_defaults(func=_inventory_check)

    probes = commands.add_parser("probes", help="list every command the suite can run on a node: root or not, the exit "
                                                "statuses that answer, the checks that run it")
    probes.add_argument("--json", action="store_true", help="the same as JSON records, for a site's review")
    probes.set_defaults(func=_probes)

    doc = commands.add_parser("doctor", help="before a run (read-only): what each node lacks for the step's checks, "
                                             "and what fixes it; exit 1 when a check cannot run")
    doc.add_argument("--inventory", required=True, metavar="FILE", help="cluster.toml")
    doc.add_argument("--step", type=int, metavar="N", help="the build step to check for (default: the finished cluster)")
    doc.add_argument("--allow-disruptive", action="store_true", help="include the checks that pull a bond lane")
    doc.add_argument("--json", action="store_true", help="the findings as JSON records")
    doc.set_defaults(func=_doctor)

    sud = commands.add_parser("sudoers", help="write the sudoers.d file granting the suite's login exactly the "
                                              "commands it runs as root (checked with visudo -cf)")
    sud.add_argument("--inventory", required=True, metavar="FILE", help="cluster.toml")
    sud.add_argument("--allow-disruptive", action="store_true", help="also the ip link set lines those checks need")
    sud.add_argument("-o", "--output", metavar="FILE", help="where to write it (never overwritten; default: stdout)")
    sud.set_defaults(func=_sudoers)

    snap = commands.add_parser("snapshot", help="write every node's facts that a change can alter (read-only)")
    snap.add_argument("--inventory", required=True, metavar="FILE", help="cluster.toml")
    snap.add_argument("-o", "--output", required=True, metavar="FILE", help="where the snapshot (JSON) goes")
    snap.set_defaults(func=_snapshot)

    diff = commands.add_parser("diff", help="what changed between two snapshots; exit 1 when anything did")
    diff.add_argument("before")
    diff.add_argument("after")
    diff.add_argument("--json", action="store_true", help="the changes as JSON records")
    diff.set_defaults(func=_diff)

    disc = commands.add_parser("discover", help="write a first cluster.toml from what the nodes say (read-only)")
    disc.add_argument("--ssh", action="append", default=[], metavar="TARGET",
                      help="a node as ssh reaches it, once per node, in the inventory's order (a Spark's head first)")
    disc.add_argument("--ssh-file", metavar="FILE", help="more targets, one a line (# comments)")
    disc.add_argument("-o", "--output", required=True, metavar="FILE", help="the cluster.toml to write")
    disc.add_argument("--force", action="store_true", help="overwrite FILE if it exists")
    disc.add_argument("--name", help="the cluster's name (else guessed from the host names)")
    disc.add_argument("--user", help="the login (else what your ssh config says)")
    disc.add_argument("--ssh-config", metavar="FILE", help="an ssh_config file (written into [ssh])")
    disc.add_argument("--identity", metavar="FILE", help="the private key (written into [ssh])")
    disc.add_argument("--jump", metavar="TARGET", help="a jump host, as ssh -J takes it")
    disc.add_argument("--connect-timeout", type=functools.partial(finite_number, most=MAX_CONNECT_SECONDS), default=5.0,
                      metavar="SECONDS", help=f"how long a node may take to answer (at most {MAX_CONNECT_SECONDS})")
    disc.add_argument("--expect", action="append", default=[], metavar="SETTING=VALUE",
                      help="an [expect] setting only you know (e.g. lane_rate_gbps=0.25 on a simulated rack)")
    key = disc.add_mutually_exclusive_group()
    key.add_argument("--agent-key-env", metavar="NAME", help="the variable holding the agent's key at run time")
    key.add_argument("--agent-key-file", metavar="FILE", help="the file holding the agent's key")
    disc.set_defaults(func=_discover)

    pack = commands.add_parser("bundle", help="pack a report folder into one signed file for the ticket")
    pack.add_argument("folder", metavar="REPORT_FOLDER", help="reports/<time>-<cluster>/ of a run")
    pack.add_argument("--key", default="~/.ssh/id_ed25519", metavar="FILE",
                      help="the operator's SSH private key (ssh-keygen -Y sign; default ~/.ssh/id_ed25519)")
    pack.add_argument("-o", "--output", metavar="FILE", help="the bundle (default REPORT_FOLDER/bundle.tar; never "
                                                             "overwritten)")
    pack.set_defaults(func=_bundle)

    check_bundle = commands.add_parser("verify", help="check a bundle's signature and every file; one line: who "
                                                      "signed what verdict for which ticket (exit 1: not verified)")
    check_bundle.add_argument("bundle", metavar="BUNDLE")
    check_bundle.add_argument("--allowed-signers", required=True, metavar="FILE",
                              help="ssh-keygen's allowed_signers file: PRINCIPAL KEYTYPE KEY, one a line")
    check_bundle.set_defaults(func=_verify)

    masked = commands.add_parser("anonymise", help="copy a recording (--record DIR) with the site's names, addresses, "
                                                   "MACs, serial numbers and keys masked, for a bug report")
    masked.add_argument("recording", metavar="RECORDING", help="a folder written by --record")
    masked.add_argument("-o", "--output", required=True, metavar="FOLDER", help="a new folder for the masked copy")
    masked.add_argument("--inventory", metavar="FILE", help="the run's cluster.toml (default: RECORDING/cluster.toml)")
    masked.set_defaults(func=_anonymise)

    trends = commands.add_parser("history", help="each figure's last runs from the run history")
    trends.add_argument("--db", default="reports/history.sqlite", metavar="FILE",
                        help="the history database (default reports/history.sqlite, where runs from here write it)")
    trends.add_argument("--figure", metavar="KEY", help="a reference key, e.g. lane.rate")
    trends.add_argument("--subject", metavar="S", help="a subject, e.g. 'thor-1 -> thor-2'")
    trends.add_argument("--cluster", metavar="NAME", help="one cluster's runs only")
    trends.add_argument("--last", type=_runs, default=20, metavar="N",
                        help="the last N runs of each figure (default 20)")
    trends.set_defaults(func=_history)

    for name, entry in sorted(_added_commands().items()):
        installed = entry is not None and entry.dist is not None
        commands.add_parser(name, help=entry.dist.metadata["Summary"] if installed else f"not installed: {ADDED[name]}")
    return parser


# Commands another package adds (its entry point: NAME = "module:main", main(argv) -> exit status),
# loaded only when asked for, so that nothing of the package is imported otherwise. Only the
# names the product knows of: an installed package cannot take the place of a command.
COMMANDS_GROUP = "rackproof.commands"
ADDED = {"sim": "the simulated bench rack is the package rackproof-sim: `pip install ./rackproof-sim` in a "
                "rackproof checkout (scripts/setup.sh installs it)"}


@functools.cache   # read once: main and the parser both ask
def _added_commands() -> dict[str, EntryPoint | None]:
    found = {entry.name: entry for entry in entry_points(group=COMMANDS_GROUP)}
    return {name: found.get(name) for name in ADDED}


def _run_added(name: str, entry: EntryPoint | None, argv: list[str]) -> int:
    if entry is None:
        print(f"rackproof {name}: not installed: {ADDED[name]}", file=sys.stderr)
        return 1
    return entry.load()(argv)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    added = _added_commands()
    if argv and argv[0] in added:   # its own parser reads the rest, --help too
        return _run_added(argv[0], added[argv[0]], argv[1:])
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except BrokenPipeError:
        # the reader stopped early (`rackproof probes | head`): nothing more to say, and Python's
        # flush at exit must not fail on the closed pipe again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    sys.exit(main())
