"""``scorpion ratings``: a variant's rating board, as a table."""

from __future__ import annotations

import argparse

from protocol.game import VARIANTS
from protocol.wire.message import MAX_VERSION, RatingPage

from ..api import ScorpionClient
from .profile import rating_text
from .support.arguments import int_between
from .support.session import add_server_options, run_session

__all__ = ["format_rating_page", "register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``ratings`` subcommand."""
    parser = subparsers.add_parser("ratings", help="print a variant's rating board")
    parser.add_argument("--variant", default="scorpion", choices=sorted(VARIANTS))
    parser.add_argument("--around-me", action="store_true", help="the page around your own place")
    parser.add_argument(
        "--offset", type=int_between(0, MAX_VERSION), default=0, help="places to skip from the top"
    )
    parser.add_argument(
        "--limit", type=int_between(1, 100), default=20, help="places to show, 1-100 (default 20)"
    )
    add_server_options(parser)
    parser.set_defaults(handler=run)


def format_rating_page(page: RatingPage, me: str | None = None) -> str:
    """Return a rating board page as a text table; the asking player's row is marked ``>``."""
    lines = [f"rating board · {page.variant} · {page.total} rated (? = provisional)"]
    if not page.entries:
        lines.append("nobody is rated in this variant yet" if page.total == 0 else "no entries on this page")
        return "\n".join(lines)
    lines.append(f"  {'rank':>5}  {'rating':>6}  {'dev':<5} {'races':>5}  name")
    for entry in page.entries:
        mine = entry.player == me or (me is None and entry.rank == page.me)
        lines.append(
            f"{'>' if mine else ' '} {entry.rank:>5}  {rating_text(entry.rating, entry.provisional):>6}"
            f"  ±{entry.deviation:<4} {entry.games:>5}  {entry.name}"
        )
    if page.me is not None:
        lines.append(f"your place: {page.me} of {page.total}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Print the rating board page asked for."""

    async def session(client: ScorpionClient) -> int:
        page = await client.rating_board(
            args.variant, offset=args.offset, limit=args.limit, around_me=args.around_me
        )
        print(format_rating_page(page, client.player))
        if args.around_me and page.me is None and page.total:
            print("you have no rated race in this variant yet")
        return 0

    return run_session(args, session, auto_resume=False)
