"""``scorpion race new`` and ``scorpion race join CODE``: race a friend in the terminal."""

from __future__ import annotations

import argparse

from protocol.game import VARIANTS
from protocol.wire.message import Options

from ..api import ScorpionClient, room_link
from .support.session import add_server_options, run_session

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``race`` subcommand with ``new`` and ``join``."""
    parser = subparsers.add_parser("race", help="race a friend: open a room or join one")
    actions = parser.add_subparsers(dest="action", required=True)
    new = actions.add_parser("new", help="open a room and print its code and link")
    new.add_argument("--variant", default="scorpion", choices=sorted(VARIANTS))
    new.add_argument("--players", type=int, default=2, help="most players, 2 to 8 (default 2)")
    new.add_argument("--undo", action="store_true", help="allow undo")
    new.add_argument("--hints", action="store_true", help="allow hints")
    new.add_argument("--no-spectators", action="store_true", help="forbid watching")
    new.add_argument("--when-stuck", action="store_true", help="deal the reserve only when stuck")
    new.add_argument("--delay", type=int, default=0, help="spectator delay in seconds (0-300)")
    new.add_argument("--rated", action="store_true", help="the race changes the racers' ratings")
    add_server_options(new)
    new.set_defaults(handler=run_new)
    join = actions.add_parser("join", help="join a room by its code")
    join.add_argument("code", help="the room code, e.g. K7MQ2X")
    add_server_options(join)
    join.set_defaults(handler=run_join)


def run_new(args: argparse.Namespace) -> int:
    """Open a room, print its code and link, then play in the full-screen client."""
    options = Options(
        undo=args.undo,
        hints=args.hints,
        spectators=not args.no_spectators,
        reserve_rule="when-stuck" if args.when_stuck else "any-time",
        spectator_delay=args.delay,
        rated=args.rated,
    )

    async def session(client: ScorpionClient) -> int:
        from ..tui import ScorpionApp

        room = await client.room_create(args.variant, args.players, options)
        link = room_link(client.url, room.room)
        print(f"room {room.room}\nlink {link}", flush=True)
        await ScorpionApp(client).run_async()
        print(f"room {room.room}")
        return 0

    return run_session(args, session)


def run_join(args: argparse.Namespace) -> int:
    """Join a room and play in the full-screen client."""

    async def session(client: ScorpionClient) -> int:
        from ..tui import ScorpionApp

        await client.room_join(args.code)
        await ScorpionApp(client).run_async()
        return 0

    return run_session(args, session)
