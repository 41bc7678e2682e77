"""``scorpion ratings``: a variant's rating board, as a table."""

from __future__ import annotations

import argparse

from protocol.game import VARIANTS
from protocol.wire.message import RatingPage

from ..connection import ScorpionClient
from .common import add_server_options, run_session
from .profile import rating_text

__all__ = ["format_rating_page", "register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``ratings`` subcommand."""
    parser = subparsers.add_parser("ratings", help="print a variant's rating board")
    parser.add_argument("--variant", default="scorpion", choices=sorted(VARIANTS))
    parser.add_argument("--around-me", action="store_true", help="the page around your own place")
    parser.add_argument("--offset", type=int, default=0, help="places to skip from the top")
    parser.add_argument("--limit", type=int, default=20, help="places to show (1-100)")
    add_server_options(parser)
    parser.set_defaults(handler=run)


def format_rating_page(page: RatingPage, me: str | None = None) -> str:
    """Return a rating board page as a text table; the asking player's row is marked ``>``."""
    lines = [f"rating board · {page.variant} · {page.total} rated (? = provisional)"]
    if not page.entries:
        lines.append("  you have no rated race in this variant yet" if page.me is None else "  empty")
    for entry in page.entries:
        mark = ">" if entry.player == me else " "
        lines.append(
            f"{mark} {entry.rank:>5}  {rating_text(entry.rating, entry.provisional):>6}"
            f"  ±{entry.deviation:<4} {entry.games:>4} rated  {entry.name}"
        )
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Print the rating board page asked for."""

    async def session(client: ScorpionClient) -> int:
        page = await client.rating_board(
            args.variant, offset=args.offset, limit=args.limit, around_me=args.around_me
        )
        print(format_rating_page(page, client.player))
        return 0

    return run_session(args, session, auto_resume=False)
