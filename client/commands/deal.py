"""``scorpion deal``: print the opening layout of a deal (stable JSON contract)."""

from __future__ import annotations

import argparse
import json
import sys

from protocol.game import VARIANTS, Board, DealError, board_to_text, deal

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``deal`` subcommand."""
    parser = subparsers.add_parser("deal", help="print the opening layout of a numbered deal")
    parser.add_argument("--variant", default="scorpion", choices=sorted(VARIANTS))
    parser.add_argument("--number", required=True, type=int, help="game number, 1 to 10**20 - 1")
    parser.add_argument("--json", action="store_true", help="print the layout as JSON")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Print the deal as JSON or as a position in the engine's notation."""
    try:
        layout = deal(args.variant, args.number)
    except DealError as exc:
        print(f"scorpion deal: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(layout.as_json()))
    else:
        print(board_to_text(Board.from_deal(layout)))
    return 0
