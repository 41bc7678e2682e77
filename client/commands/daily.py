"""``scorpion daily``: play today's daily deal (once a day)."""

from __future__ import annotations

import argparse
import datetime
import sys

from ..connection import ScorpionClient
from .common import add_server_options, run_session

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``daily`` subcommand."""
    parser = subparsers.add_parser("daily", help="play today's daily deal")
    parser.add_argument("--info", action="store_true", help="only print today's deal, do not play")
    add_server_options(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Show today's deal; start it in the full-screen client unless played already."""

    async def session(client: ScorpionClient) -> int:
        daily = await client.daily_info()
        ends = datetime.datetime.fromtimestamp(daily.ends / 1000, datetime.UTC).strftime("%H:%M UTC")
        print(f"daily {daily.date}: {daily.variant}, ends {ends}, commitment {daily.commitment[:16]}…")
        if daily.played:
            print("you have played today's deal already", file=sys.stderr)
            return 0 if args.info else 4
        if args.info:
            return 0
        from ..tui import ScorpionApp

        await ScorpionApp(client, lambda c: c.daily_start()).run_async()
        return 0

    return run_session(args, session)
