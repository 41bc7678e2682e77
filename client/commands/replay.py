"""``scorpion replay GAME``: print the moves of a finished game, racer by racer."""

from __future__ import annotations

import argparse
from typing import Any

from protocol.game import MoveError, move_from_json, move_text
from protocol.wire.message import ReplayLog

from ..api import ScorpionClient
from .support.session import add_server_options, clock_text, duration_text, run_session

__all__ = ["format_replay", "register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``replay`` subcommand."""
    parser = subparsers.add_parser("replay", help="print the moves of a finished game")
    parser.add_argument("game", help="the game id")
    add_server_options(parser)
    parser.set_defaults(handler=run)


def _move(data: dict[str, Any]) -> str:
    if data.get("undo"):
        return "undo"
    try:
        return move_text(move_from_json(data))
    except MoveError:
        return str(data)


def _at(ms: int) -> str:
    minutes, rest = divmod(ms, 60_000)
    return f"{minutes}:{rest / 1000:04.1f}"


def format_replay(log: ReplayLog) -> str:
    """Return a replay log as text: the deal, then each racer's moves with their times."""
    options = log.options
    lines = [
        f"game {log.game} · {log.variant} · started {clock_text(log.start, '%Y-%m-%d %H:%M')} UTC",
        f"deal {log.number} (salt {log.salt})",
        f"undo {'on' if options.undo else 'off'} · hints {'on' if options.hints else 'off'} · "
        f"reserve {options.reserve_rule}",
    ]
    for racer in log.logs:
        count = len(racer.moves)
        lines.append("")
        lines.append(f"{racer.name} ({racer.player}): {count} move{'s' if count != 1 else ''}")
        for index, (move, at) in enumerate(zip(racer.moves, racer.times, strict=False), 1):
            lines.append(f"  {index:>4}  {_at(at):>7}  {_move(move)}")
    if log.standings:
        lines.append("")
        lines.append("standings")
        for standing in log.standings:
            lines.append(
                f"  {standing.rank}. {standing.name[:20]:<20} {standing.score:>7} pts "
                f"{standing.runs} runs {duration_text(standing.elapsed):>6} {standing.status}"
            )
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Print the replay log of a game."""

    async def session(client: ScorpionClient) -> int:
        print(format_replay(await client.replay(args.game)))
        return 0

    return run_session(args, session, auto_resume=False)
