"""``scorpion bot``: bots that join a room, the quick-match queue or the daily and play."""

from __future__ import annotations

import argparse
import asyncio
import sys

from protocol.game import VARIANTS

from ..api import ScorpionClient
from ..bot import Bot, BotResult
from ..errors import ServerError
from .support.arguments import positive_int, seconds
from .support.session import add_server_options, server_urls

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``bot`` subcommand."""
    parser = subparsers.add_parser("bot", help="run bots that play legal moves (demos, tests, load)")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--room", metavar="CODE", help="join this room and race")
    where.add_argument("--new-room", action="store_true", help="open a room, wait for --players, start it")
    where.add_argument("--quick", action="store_true", help="join the quick-match queue")
    where.add_argument("--daily", action="store_true", help="play today's daily deal")
    parser.add_argument("--variant", default="scorpion", choices=sorted(VARIANTS))
    parser.add_argument("--players", type=int, default=2, help="with --new-room: players to wait for")
    parser.add_argument("--count", type=positive_int, default=1, help="how many bots to run at once")
    parser.add_argument("--delay", type=seconds, default=0.3, help="seconds between a bot's moves")
    add_server_options(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Run the bots until their races end; print one result line each."""
    try:
        urls = server_urls(args)
    except argparse.ArgumentTypeError as exc:
        print(f"scorpion bot: {exc}", file=sys.stderr)
        return 2
    base = args.name or "Bot"

    async def one(index: int) -> BotResult:
        # Bots never reuse the stored identity: each is a fresh player.
        client = ScorpionClient(urls, f"{base}{index + 1}" if args.count > 1 else base)
        await client.connect()
        bot = Bot(client, delay=args.delay)
        try:
            if args.new_room and index == 0:
                code = await bot.create_room(args.variant, args.players)
                print(f"room {code}", flush=True)
                starter = asyncio.ensure_future(bot.start_when_full(args.players))
                result = await bot.play()
                starter.cancel()
                return result
            if args.room:
                await bot.join_room(args.room)
            elif args.quick:
                await client.queue_join(args.variant)
            elif args.daily:
                await client.daily_start(args.variant)
            return await bot.play()
        finally:
            await client.close()

    async def main() -> int:
        results = await asyncio.gather(*(one(i) for i in range(args.count)), return_exceptions=True)
        failed = 0
        for index, result in enumerate(results):
            if isinstance(result, ServerError):
                print(f"bot {index + 1}: {result.code}: {result.message}", file=sys.stderr)
                failed += 1
            elif isinstance(result, BaseException):
                print(f"bot {index + 1}: {result}", file=sys.stderr)
                failed += 1
            else:
                errors = f" errors: {'; '.join(result.errors)}" if result.errors else ""
                print(
                    f"bot {index + 1}: game {result.game} {result.status} score {result.score} "
                    f"rank {result.rank} after {result.moves} moves{errors}"
                )
                failed += bool(result.errors)
        return 1 if failed else 0

    try:
        return asyncio.run(main())
    except KeyboardInterrupt:
        return 130
