"""``scorpion quick``: race whoever else is waiting, in the terminal."""

from __future__ import annotations

import argparse

from protocol.game import VARIANTS

from ..api import ScorpionClient
from .support.session import add_server_options, run_session

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``quick`` subcommand."""
    parser = subparsers.add_parser("quick", help="join the quick-match queue and race")
    parser.add_argument("--variant", default="scorpion", choices=sorted(VARIANTS))
    parser.add_argument("--unrated", action="store_true", help="join the casual queue (ratings unchanged)")
    add_server_options(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Queue for a match and race in the full-screen client."""

    async def session(client: ScorpionClient) -> int:
        from ..tui import ScorpionApp

        await client.queue_join(args.variant, rated=not args.unrated)
        await ScorpionApp(client).run_async()
        return 0

    return run_session(args, session)
