"""``scorpion play``: solo games on the server (New Game, Replay, saved games) in the terminal.

The server deals and referees solo games with the same engine as races: undo and hints are
allowed and there is no clock limit. Saved games (the default) can be resumed later, from
any device with the same identity: ``--list`` prints them, ``--resume`` continues the
newest (or the one given).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Awaitable

from protocol.game import VARIANTS
from protocol.wire.message import RaceStarted, SavedGamesList

from ..api import ScorpionClient
from .support.arguments import game_id
from .support.session import add_server_options, clock_text, run_session

__all__ = ["format_saved", "register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``play`` subcommand."""
    parser = subparsers.add_parser("play", help="play solo on the server: a new deal, a replay, a saved game")
    parser.add_argument("--variant", default="scorpion", choices=sorted(VARIANTS))
    parser.add_argument("--when-stuck", action="store_true", help="deal the reserve only when stuck")
    parser.add_argument("--no-save", action="store_true", help="do not keep the game for resuming later")
    parser.add_argument(
        "--winnable", action="store_true", help="a deal the solver has proved winnable (most cannot be won)"
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--replay", metavar="GAME", type=game_id, default=None, help="play the deal of a solo game again"
    )
    where.add_argument(
        "--resume",
        metavar="GAME",
        nargs="?",
        const="",
        default=None,
        help="continue a saved game (default: the newest)",
    )
    where.add_argument("--list", action="store_true", help="print your saved games and stop")
    add_server_options(parser)
    parser.set_defaults(handler=run)


def format_saved(saved: SavedGamesList) -> str:
    """Return the saved games as a text table, newest first."""
    if not saved.games:
        return "no saved game"
    lines = [f"{'game':<12} {'variant':<18} {'started (UTC)':<17} {'score':>6} {'runs':>4} {'moves':>5}"]
    for game in saved.games:
        score, runs, moves = (int(game.summary.get(key, 0)) for key in ("score", "runs", "moves"))
        lines.append(
            f"{game.game:<12} {game.variant:<18} {clock_text(game.start, '%Y-%m-%d %H:%M'):<17} "
            f"{score:>6} {runs:>4} {moves:>5}"
        )
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Start (or replay, or resume) a solo game and play it in the full-screen client."""
    rule = "when-stuck" if args.when_stuck else "any-time"

    async def session(client: ScorpionClient) -> int:
        from ..tui import ScorpionApp

        if args.list or args.resume is not None:
            saved = await client.saved_games()
            print(format_saved(saved))
            if args.list:
                return 0
            wanted = args.resume or (saved.games[0].game if saved.games else "")
            if not wanted:
                print("scorpion play: there is no saved game to resume", file=sys.stderr)
                return 4
            await client.solo_resume(wanted)
            await ScorpionApp(client).run_async()
            return 0
        if args.replay is not None:
            game = args.replay
            await ScorpionApp(client, lambda c: c.solo_replay(game)).run_async()
            return 0
        save = not args.no_save
        winnable = args.winnable

        def start(c: ScorpionClient) -> Awaitable[RaceStarted]:
            return c.solo_new(args.variant, rule, save=save, winnable=winnable)

        await ScorpionApp(client, start).run_async()
        return 0

    return run_session(args, session, auto_resume=False)
