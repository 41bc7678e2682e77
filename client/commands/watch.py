"""``scorpion watch [GAME|CODE]``: list the live races, or watch one."""

from __future__ import annotations

import argparse
import datetime

from protocol.wire.message import ROOM_ALPHABET, ROOM_CODE_LENGTH

from ..api import ScorpionClient
from .support.session import add_server_options, run_session

__all__ = ["is_room_code", "register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``watch`` subcommand."""
    parser = subparsers.add_parser("watch", help="list live races, or watch one by game id or room code")
    parser.add_argument("target", nargs="?", help="a game id or a room code; none lists the races")
    parser.add_argument("--variant", default=None, help="list only races of this variant")
    add_server_options(parser)
    parser.set_defaults(handler=run)


def is_room_code(text: str) -> bool:
    """Tell whether ``text`` reads as a room code (game ids are longer)."""
    return len(text) == ROOM_CODE_LENGTH and all(ch in ROOM_ALPHABET for ch in text.upper())


def run(args: argparse.Namespace) -> int:
    """Print the live races, or watch one in the full-screen client."""

    async def session(client: ScorpionClient) -> int:
        if not args.target:
            games = await client.games_list(args.variant)
            if not games.games:
                print("no race is running that may be watched")
            for info in games.games:
                started = datetime.datetime.fromtimestamp(info.start / 1000, datetime.UTC).strftime("%H:%M")
                names = ", ".join(p.name for p in info.players)
                room = f" room {info.room}" if info.room else ""
                watching = f"{info.spectators} watching{room}"
                print(f"{info.game}  {info.variant:<16} since {started} UTC  {watching}  {names}")
            return 0
        from ..tui import ScorpionApp

        target = args.target
        if is_room_code(target):
            await client.watch(room=target)
        else:
            await client.watch(game=target)
        await ScorpionApp(client).run_async()
        return 0

    return run_session(args, session)
