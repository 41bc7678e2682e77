"""``scorpion replay GAME``: step through a finished game in the full-screen replay view
(``client.tui.replay``), or print its moves racer by racer (``--print``, or when the output
is not a terminal)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from protocol.game import MoveError, move_from_json, move_text
from protocol.wire.message import ReplayLog

from ..api import ScorpionClient
from .support.session import add_server_options, clock_text, duration_text, run_session

__all__ = ["format_replay", "register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``replay`` subcommand."""
    parser = subparsers.add_parser(
        "replay", help="step through a finished game (← →), or print its moves with --print"
    )
    parser.add_argument("game", help="the game id")
    parser.add_argument(
        "--print", action="store_true", help="print the moves instead of stepping through them"
    )
    parser.add_argument("--player", default=None, help="the racer shown first (default: you, or the winner)")
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
    """Step through a game in the replay view, or print its replay log."""

    async def session(client: ScorpionClient) -> int:
        log = await client.replay(args.game)
        if args.print or not sys.stdout.isatty():
            print(format_replay(log))
            return 0
        from ..tui.replay import ReplayApp

        racers = [racer.player for racer in log.logs]
        winner = [s.player for s in sorted(log.standings, key=lambda s: s.rank)]
        first = next(
            (p for p in (args.player, client.player, *winner) if p in racers), racers[0] if racers else ""
        )
        shown = await client.replay_positions(args.game, first)
        await ReplayApp(log, shown, lambda player: client.replay_positions(args.game, player)).run_async()
        return 0

    return run_session(args, session, auto_resume=False)
