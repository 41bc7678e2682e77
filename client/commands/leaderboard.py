"""``scorpion leaderboard``: a day's daily-deal leaderboard, as a table."""

from __future__ import annotations

import argparse
import datetime

from protocol.game import VARIANTS
from protocol.wire.message import MAX_VERSION, LeaderboardPage

from ..api import ScorpionClient
from .support.arguments import int_between
from .support.session import add_server_options, clock_text, duration_text, run_session

__all__ = ["ENDED", "format_page", "register"]

ENDED = {"finished": "finished", "stuck": "stuck", "playing": "time", "resigned": "resigned", "left": "left"}
"""How an attempt ended, as its row says it: ``time`` for one still going at the time limit."""


def _day(text: str) -> str:
    try:
        return datetime.date.fromisoformat(text).isoformat()
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a day (YYYY-MM-DD): {text!r}") from None


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``leaderboard`` subcommand."""
    parser = subparsers.add_parser("leaderboard", help="print a day's daily-deal leaderboard")
    parser.add_argument("--day", type=_day, default=None, help="the day, YYYY-MM-DD (default: today, UTC)")
    parser.add_argument("--variant", default="scorpion", choices=sorted(VARIANTS))
    parser.add_argument(
        "--limit", type=int_between(1, 100), default=20, help="how many ranks to show, 1-100 (default 20)"
    )
    parser.add_argument(
        "--offset", type=int_between(0, MAX_VERSION), default=0, help="skip this many ranks first"
    )
    parser.add_argument(
        "--around-me", action="store_true", help="show your own rank and your neighbours instead of the top"
    )
    parser.add_argument(
        "--radius", type=int_between(0, 50), default=5, help="with --around-me: neighbours each side (0-50)"
    )
    add_server_options(parser)
    parser.set_defaults(handler=run)


def format_page(page: LeaderboardPage, me: str | None = None) -> str:
    """Return a leaderboard page as a text table (the asking player's row is marked).

    Each row says how the attempt ended (``-`` for an entry stored before that was kept):
    at equal scores the board puts finished, then stuck or out of time, then resigned or
    left (decision 12)."""
    count = f"{page.total} player{'s' if page.total != 1 else ''}"
    lines = [f"daily leaderboard · {page.variant} · {page.date} · {count}"]
    if not page.entries:
        lines.append("nobody is on this board" if page.total == 0 else "no entries on this page")
        return "\n".join(lines)
    lines.append(f"{'rank':>4}  {'name':<24} {'score':>7} {'time':>6}  {'ended':<8}  finished (UTC)")
    for entry in page.entries:
        mine = entry.player == me or (me is None and entry.rank == page.me)
        name = entry.name + (" (you)" if mine else "")
        ended = ENDED.get(entry.status, entry.status) if entry.status else "-"
        lines.append(
            f"{entry.rank:>4}  {name[:24]:<24} {entry.score:>7} {duration_text(entry.elapsed):>6}  "
            f"{ended:<8}  {clock_text(entry.finished, '%Y-%m-%d %H:%M')}"
        )
    if page.me is not None:
        lines.append(f"your rank: {page.me} of {page.total}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Print the leaderboard page asked for."""

    async def session(client: ScorpionClient) -> int:
        if args.around_me:
            page = await client.around_me(args.variant, args.day, args.radius)
            print(format_page(page, client.player))
            if page.me is None:
                print("you are not on this board")
            return 0
        page = await client.leaderboard(args.variant, args.day, offset=args.offset, limit=args.limit)
        print(format_page(page, client.player))
        return 0

    return run_session(args, session, auto_resume=False)
