"""`rackproof ...`: inventory checks, the commands the suite runs on nodes, the simulated rack."""

from __future__ import annotations

import argparse
import sys

from .inventory import InventoryError, load_inventory, printable
from .sim.cli import add_parser as add_sim_parser


def _inventory_check(args: argparse.Namespace) -> int:
    try:
        inventory = load_inventory(args.file)
    except InventoryError as e:
        print(e, file=sys.stderr)
        return 2
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

    add_sim_parser(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
