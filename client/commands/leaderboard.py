"""``scorpion leaderboard``: the daily and all-time leaderboards."""

from __future__ import annotations

import argparse

from protocol.game import VARIANTS

from .common import add_server_options, not_offered

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``leaderboard`` subcommand."""
    parser = subparsers.add_parser("leaderboard", help="print a leaderboard")
    parser.add_argument("--day", default=None, help="the day, YYYY-MM-DD (default: all time)")
    parser.add_argument("--variant", default="scorpion", choices=sorted(VARIANTS))
    add_server_options(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Print the leaderboard, or say that the server does not offer one yet."""
    # ``leaderboard``/``leaderboard_page`` are reserved by protocol v1 (§8.8), not defined yet.
    return not_offered("leaderboard", "leaderboards")
