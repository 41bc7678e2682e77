"""``scorpion challenge``: race a friend's recorded run, or send them yours.

``new`` plays a fresh deal and prints its challenge's code and link when it ends; ``take
CODE`` races a challenge's ghosts (shown as rivals: they come as a rival's progress does)
and prints its board; ``make [GAME]`` turns a finished game into a challenge; ``list``
prints this player's challenges with their takers' results; ``board CODE`` one board.
"""

from __future__ import annotations

import argparse
import asyncio

from protocol.game import VARIANTS
from protocol.wire.message import Challenge, ChallengeBoardInfo

from ..api import ScorpionClient, challenge_link
from .support.session import add_server_options, clock_text, run_session

__all__ = ["format_board", "format_challenge", "register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``challenge`` subcommand."""
    parser = subparsers.add_parser("challenge", help="race a friend's recorded run (ghost), or send yours")
    actions = parser.add_subparsers(dest="action", required=True)
    new = actions.add_parser("new", help="play a fresh deal; its run becomes a challenge to send")
    new.add_argument("--variant", default="scorpion", choices=sorted(VARIANTS))
    take = actions.add_parser("take", help="race a challenge's ghosts")
    take.add_argument("code", help="the challenge's code (6 letters and digits)")
    make = actions.add_parser("make", help="make a challenge of a finished game of yours")
    make.add_argument("game", help="the game's id")
    board = actions.add_parser("board", help="print a challenge's board")
    board.add_argument("code")
    actions.add_parser("list", help="print your challenges and their takers' results")
    for sub in (new, take, make, board, actions.choices["list"]):
        add_server_options(sub)
    parser.set_defaults(handler=run)


def format_challenge(challenge: Challenge, server: str) -> str:
    """Return a challenge's code, link, ghosts and expiry as text."""
    ghosts = ", ".join(f"{g.name} ({g.score}, {g.status})" for g in challenge.ghosts)
    return "\n".join(
        [
            f"challenge {challenge.code} · {challenge.variant} · ghosts: {ghosts}",
            f"link {challenge_link(server, challenge.code)}",
            f"expires {clock_text(challenge.expires, '%Y-%m-%d %H:%M')} UTC",
        ]
    )


def format_board(board: ChallengeBoardInfo) -> str:
    """Return a challenge's board as text: its ghosts, then each taker's best result."""
    lines = [f"challenge {board.code} · {board.variant}"]
    lines += [f"  ghost {g.name:<24} {g.score:>6} {g.elapsed:>5}s {g.status}" for g in board.ghosts]
    if not board.entries:
        lines.append("  nobody has taken it yet")
    for e in board.entries:
        lines.append(f"{e.rank:>3}. {e.name:<24} {e.score:>6} {e.elapsed:>5}s {e.status} (place {e.place})")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Run one ``challenge`` action."""

    async def session(client: ScorpionClient) -> int:
        if args.action == "list":
            mine = await client.challenge_list()
            print("\n".join(format_board(b) for b in mine.challenges) or "you have no challenges")
            return 0
        if args.action == "board":
            print(format_board(await client.challenge_board(args.code)))
            return 0
        if args.action == "make":
            print(format_challenge(await client.challenge_create(args.game), client.url))
            return 0
        from ..tui import ScorpionApp

        if args.action == "new":
            made = asyncio.ensure_future(client.wait_for(Challenge, timeout=3600))
            try:
                await ScorpionApp(client, lambda c: c.challenge_new(args.variant)).run_async()
                print(format_challenge(await asyncio.wait_for(made, 10), client.url))
            except TimeoutError:
                print("the game did not end: no challenge was made")
                return 4
            finally:
                if not made.done():
                    made.cancel()
                elif not made.cancelled():
                    made.exception()  # seen: a lost connection is reported once, by the session
            return 0
        # The code is checked before the race opens: a wrong or expired one is a one-line
        # refusal, and the ghosts to race are printed first.
        code = args.code.upper()
        print(format_board(await client.challenge_board(code)))
        await ScorpionApp(client, lambda c: c.challenge_take(code)).run_async()
        print(format_board(await client.challenge_board(code)))
        return 0

    return run_session(args, session)
