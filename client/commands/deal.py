"""``scorpion deal``: print the opening layout of a deal: its columns card by card (face-down
cards in brackets) and its reserve; ``--notation`` the position in the engine's notation,
``--json`` the layout as JSON (a stable contract)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from protocol.game import VARIANTS, Board, DealError, board_to_text, deal, get_variant

from ..tui.render import card_label

__all__ = ["format_layout", "register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``deal`` subcommand."""
    parser = subparsers.add_parser("deal", help="print the opening layout of a numbered deal")
    parser.add_argument("--variant", default="scorpion", choices=sorted(VARIANTS))
    parser.add_argument("--number", required=True, type=int, help="game number, 1 to 10**20 - 1")
    shown = parser.add_mutually_exclusive_group()
    shown.add_argument("--json", action="store_true", help="print the layout as JSON")
    shown.add_argument("--notation", action="store_true", help="print the position in the engine's notation")
    parser.set_defaults(handler=run)


def format_layout(layout: dict[str, Any]) -> str:
    """Return a deal's layout as text: one line per column from the first card dealt to the
    exposed one (face-down cards in brackets), then the reserve (or the reserve cells)."""
    columns = layout["columns"]
    reserve = layout.get("reserve") or []
    stock = get_variant(layout["variant"]).stock > 0
    lines = [
        f"{layout['variant']} deal {layout['number']}: {len(columns)} columns, "
        "first card dealt on the left, face-down cards in [brackets]"
    ]
    for index, column in enumerate(columns, 1):
        cards = (card_label(c["card"]) if c["face_up"] else f"[{card_label(c['card'])}]" for c in column)
        lines.append(f"{index:>2}  " + " ".join(f"{card:>4}" for card in cards))
    label = "reserve (dealt one to each of the first columns)" if stock else "reserve cells"
    lines.append(f"{label}: " + (" ".join(card_label(card) for card in reserve) or "none"))
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Print the deal's layout, as text, as JSON or as a position in the engine's notation."""
    try:
        layout = deal(args.variant, args.number)
    except DealError as exc:
        print(f"scorpion deal: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(layout.as_json()))
    elif args.notation:
        print(board_to_text(Board.from_deal(layout)))
    else:
        print(format_layout(layout.as_json()))
    return 0
