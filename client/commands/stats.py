"""``scorpion stats``: this player's statistics per variant, as a table."""

from __future__ import annotations

import argparse

from protocol.game import VARIANTS
from protocol.wire.message import StatsInfo

from ..api import ScorpionClient
from .support.session import add_server_options, duration_text, run_session

__all__ = ["format_stats", "register"]

COLUMNS = (
    "variant",
    "played",
    "won",
    "win %",
    "best",
    "best time",
    "average",
    "streak",
    "longest",
    "dailies",
)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``stats`` subcommand."""
    parser = subparsers.add_parser("stats", help="print your statistics")
    parser.add_argument("--variant", default=None, choices=sorted(VARIANTS), help="only this variant")
    add_server_options(parser)
    parser.set_defaults(handler=run)


def format_stats(info: StatsInfo) -> str:
    """Return the statistics as a text table, one row per variant."""
    if not info.stats:
        return "no games played yet"
    rows = [COLUMNS]
    for row in info.stats:
        rate = f"{100 * row.won // row.started}" if row.started else "-"
        rows.append(
            (
                row.variant,
                str(row.started),
                str(row.won),
                rate,
                str(row.best_score),
                duration_text(row.best_time),
                str(row.average_score),
                str(row.streak),
                str(row.longest_streak),
                str(row.dailies),
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(COLUMNS))]
    lines = []
    for row_cells in rows:
        first = row_cells[0].ljust(widths[0])
        rest = [cell.rjust(width) for cell, width in zip(row_cells[1:], widths[1:], strict=True)]
        lines.append("  ".join([first, *rest]).rstrip())
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Print the statistics."""

    async def session(client: ScorpionClient) -> int:
        print(format_stats(await client.stats(args.variant)))
        return 0

    return run_session(args, session, auto_resume=False)
