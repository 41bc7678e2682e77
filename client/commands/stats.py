"""``scorpion stats``: this player's statistics."""

from __future__ import annotations

import argparse

from .common import add_server_options, not_offered

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``stats`` subcommand."""
    parser = subparsers.add_parser("stats", help="print your statistics")
    add_server_options(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Print the statistics, or say that the server does not offer them yet."""
    # ``stats``/``stats_info`` are reserved by protocol v1 (§8.8), not defined yet.
    return not_offered("stats", "player statistics")
