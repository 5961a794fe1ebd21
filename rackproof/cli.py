"""`rackproof ...`: inventory checks, the simulated rack, report utilities."""

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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rackproof", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    inventory = commands.add_parser("inventory", help="work with cluster.toml files")
    inventory_commands = inventory.add_subparsers(dest="action", required=True)
    check = inventory_commands.add_parser("check", help="validate an inventory; exit 2 on problems")
    check.add_argument("file")
    check.set_defaults(func=_inventory_check)

    add_sim_parser(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
