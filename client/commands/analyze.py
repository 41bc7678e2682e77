"""``scorpion analyze GAME``: was the deal winnable, where the win slipped away, a winning line."""

from __future__ import annotations

import argparse
import sys

from protocol.game import Move, MoveError, move_from_json, move_text
from protocol.wire.message import Analysis

from ..api import ScorpionClient
from ..errors import ServerError
from .support.arguments import seconds
from .support.session import add_server_options, run_session

__all__ = ["format_analysis", "line_text", "register", "verdict_text"]

VERDICT_TEXT = {"winnable": "yes", "unwinnable": "no", "unknown": "unknown"}
PER_ROW = 8


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``analyze`` subcommand."""
    parser = subparsers.add_parser(
        "analyze", help="print the solver's analysis of one of your finished games"
    )
    parser.add_argument("game", help="the game id")
    parser.add_argument(
        "--wait",
        type=seconds,
        default=30.0,
        metavar="S",
        help="seconds to wait while the server is still computing it (default 30)",
    )
    add_server_options(parser)
    parser.set_defaults(handler=run)


def verdict_text(analysis: Analysis) -> str:
    """Return ``Deal winnable: yes/no/unknown``."""
    return f"Deal winnable: {VERDICT_TEXT.get(analysis.verdict, analysis.verdict)}"


def outcome_text(analysis: Analysis, slipped: Move | None = None) -> str:
    """Return what became of the player's game: won, where the win slipped away, or why not told."""
    if analysis.won:
        return "you won"
    if analysis.slipped is not None:
        where = f"your win slipped away at move {analysis.slipped + 1}"
        return f"{where}: {move_text(slipped)}" if slipped is not None else where
    if analysis.verdict == "winnable":
        return "your game was not proved lost when it ended"
    return ""


def line_text(line: tuple[dict[str, object], ...] | list[dict[str, object]]) -> list[str]:
    """Return a move line as numbered rows of text (``  1. 6S:3-2   2. 8S:5-2 …``)."""
    cells = []
    for index, data in enumerate(line, 1):
        try:
            text = move_text(move_from_json(data))
        except MoveError:
            text = str(data)
        cells.append(f"{index:>3}. {text:<8}")
    return ["".join(cells[i : i + PER_ROW]).rstrip() for i in range(0, len(cells), PER_ROW)]


def format_analysis(analysis: Analysis, slipped: Move | None = None) -> str:
    """Return the analysis as text: verdict, the player's outcome, then the winning line."""
    lines = [f"game {analysis.game}", verdict_text(analysis)]
    outcome = outcome_text(analysis, slipped)
    if outcome:
        lines.append(outcome[0].upper() + outcome[1:])
    lines.append(f"{analysis.moves} move{'s' if analysis.moves != 1 else ''} of yours analysed")
    if analysis.line:
        lines.append("")
        lines.append(f"a winning line from the opening ({len(analysis.line)} moves):")
        lines.extend(line_text(analysis.line))
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Print the analysis of a game (waiting for it while the server computes it)."""

    async def session(client: ScorpionClient) -> int:
        try:
            analysis = await client.analysis(args.game, timeout=args.wait)
        except TimeoutError:
            print(f"scorpion analyze: no analysis of {args.game} within {args.wait:g} s", file=sys.stderr)
            return 1
        try:
            slipped = await client.slipped_move(analysis)
        except ServerError:
            slipped = None  # the move log is gone: the move number alone is told
        print(format_analysis(analysis, slipped))
        return 0

    return run_session(args, session, auto_resume=False)
