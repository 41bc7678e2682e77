"""``scorpion forget-me``: erase this player's identity and records on the server."""

from __future__ import annotations

import argparse
import sys

from ..connection import ScorpionClient
from ..identity import TokenStore
from .common import DEFAULT_SERVER, add_server_options, run_session

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``forget-me`` subcommand."""
    parser = subparsers.add_parser("forget-me", help="erase your identity and records on the server")
    parser.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    add_server_options(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Ask the server to forget this player, then drop the stored token."""
    server = (args.server or [DEFAULT_SERVER])[0]
    if TokenStore().load(server) is None:
        print(f"scorpion forget-me: no identity is stored for {server}: nothing to forget")
        return 0
    if not args.yes:
        answer = input(f"Erase your identity and records on {server}? [y/N] ")
        if answer.strip().lower() not in ("y", "yes"):
            print("nothing was erased")
            return 1

    async def session(client: ScorpionClient) -> int:
        answer = await client.forget_me()
        removed = getattr(answer, "removed", None)
        detail = f" (removed: {removed})" if removed else ""
        print(f"the server forgot you{detail}; the stored token for {server} is deleted", file=sys.stdout)
        return 0

    return run_session(args, session, auto_resume=False)
