"""``scorpion daily``: today's daily deal, ranked once a day, then as practice."""

from __future__ import annotations

import argparse
import hashlib
import sys

from protocol.game import VARIANTS
from protocol.wire.message import Daily

from ..api import ScorpionClient
from .support.session import add_server_options, clock_text, run_session

__all__ = ["format_daily", "register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``daily`` subcommand."""
    parser = subparsers.add_parser("daily", help="play today's daily deal (ranked once, then practice)")
    parser.add_argument("--variant", default="scorpion", choices=sorted(VARIANTS))
    parser.add_argument(
        "--info", action="store_true", help="print today's commitment and yesterday's reveal, do not play"
    )
    parser.add_argument(
        "--practice", action="store_true", help="replay today's deal unranked (after the ranked attempt)"
    )
    add_server_options(parser)
    parser.set_defaults(handler=run)


def format_daily(daily: Daily) -> str:
    """Return today's daily deal and yesterday's reveal as text."""
    if daily.finished:
        state = "your ranked attempt is over (practice with --practice)"
    elif daily.played:
        state = "your ranked attempt is in progress"
    else:
        state = "not played yet: one ranked attempt"
    lines = [
        f"daily {daily.date} · {daily.variant} · ends {clock_text(daily.ends, '%Y-%m-%d %H:%M')} UTC",
        f"commitment {daily.commitment}",
        state,
    ]
    previous = daily.previous
    if previous:
        number, salt = previous.get("number"), previous.get("salt")
        digest = hashlib.sha256(f"{number}:{salt}".encode()).hexdigest()
        check = "matches" if digest == previous.get("commitment") else "DOES NOT match"
        lines += [
            f"yesterday ({previous.get('date')}): deal {number} salt {salt}",
            f"  sha256(number:salt) {check} its commitment {previous.get('commitment')}",
        ]
    else:
        lines.append("yesterday: no deal to reveal")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Print today's deal; play the ranked attempt (or practice) in the full-screen client."""

    async def session(client: ScorpionClient) -> int:
        daily = await client.daily_info(args.variant)
        print(format_daily(daily), flush=True)
        if args.info:
            return 0
        from ..tui import ScorpionApp

        if args.practice:
            await ScorpionApp(client, lambda c: c.daily_start(args.variant, practice=True)).run_async()
            return 0
        if daily.played and not daily.finished:
            race = client.race
            if race is not None and race.mode == "daily" and race.ended is None:
                await ScorpionApp(client).run_async()  # resumed at connect: carry on
                return 0
            print("scorpion daily: your ranked attempt is running on another connection", file=sys.stderr)
            return 4
        if daily.played:
            print("you have played today's ranked attempt: --practice replays it unranked", file=sys.stderr)
            return 4
        await ScorpionApp(client, lambda c: c.daily_start(args.variant)).run_async()
        return 0

    return run_session(args, session)
