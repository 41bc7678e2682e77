"""``scorpion play``: a solo game on the server (new deal, replay, undo, hint)."""

from __future__ import annotations

import argparse

from protocol.game import VARIANTS

from .common import add_server_options, not_offered

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``play`` subcommand."""
    parser = subparsers.add_parser("play", help="play solo on the server: a new deal, or replay one")
    parser.add_argument("--variant", default="scorpion", choices=sorted(VARIANTS))
    parser.add_argument("--replay", metavar="GAME", default=None, help="replay the deal of a finished game")
    add_server_options(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Start a solo game, or say that the server does not offer solo play yet."""
    # Solo play (solo_new, solo_replay, solo_resume) is reserved by protocol v1 (§8.8) and
    # not yet defined: never pretend, say so.
    return not_offered("play", "solo play (solo_new, solo_replay)")
