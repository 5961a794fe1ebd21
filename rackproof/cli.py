"""`rackproof ...`: inventory checks, the commands the suite runs on nodes, snapshots of a cluster
and what changed between two, a first inventory discovered from the nodes, the simulated rack."""

from __future__ import annotations

import argparse
import functools
import json
import sys

from .inventory import MAX_CONNECT_SECONDS, InventoryError, load_inventory, printable
from .sim.cli import add_parser as add_sim_parser
from .userinput import finite_number


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
    """Every command the suite can run on a node, with the probe it belongs to and what it
    reads: the list a site's security reviewer asks for. {fields} are filled per node, lane or
    peer from cluster.toml, each shell-quoted."""
    from .probe import catalog
    for probe in catalog():
        exits = "" if probe.ok_exit == (0,) else f"  (exit {', '.join(map(str, probe.ok_exit))} still answers)"
        once = "  (once per node per run)" if probe.once else ""
        print(f"{probe.name}: {probe.does}{exits}{once}\n    {probe.template.replace('{{', '{').replace('}}', '}')}")
    return 0


def _snapshot(args: argparse.Namespace) -> int:
    """Every node's facts that a change can alter, read-only, into one JSON file."""
    from . import snapshot
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
    from . import changes, snapshot
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
    from . import discover
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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rackproof", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    inventory = commands.add_parser("inventory", help="work with cluster.toml files")
    inventory_commands = inventory.add_subparsers(dest="action", required=True)
    check = inventory_commands.add_parser("check", help="validate an inventory; exit 2 on problems")
    check.add_argument("file")
    check.set_defaults(func=_inventory_check)

    probes = commands.add_parser("probes", help="list every command the suite can run on a node")
    probes.set_defaults(func=_probes)

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

    add_sim_parser(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
