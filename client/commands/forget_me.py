"""``scorpion forget-me``: erase this player's identity and records on the server."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..api import ScorpionClient
from ..identity import TokenStore
from .support.session import add_server_options, run_session, server_urls

__all__ = ["format_removed", "register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``forget-me`` subcommand."""
    parser = subparsers.add_parser("forget-me", help="erase your identity and records on the server")
    parser.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    add_server_options(parser)
    parser.set_defaults(handler=run)


def format_removed(removed: dict[str, Any]) -> str:
    """Return the ``removed`` counts of ``forgotten``, one per line (``saved games  1``)."""
    if not removed:
        return "  nothing"
    labels = {key: key.replace("_", " ") for key in removed}
    width = max(len(label) for label in labels.values())
    lines = []
    for key, value in removed.items():
        shown = ("yes" if value else "no") if isinstance(value, bool) else str(value)
        lines.append(f"  {labels[key]:<{width}}  {shown}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Ask the server to forget this player, then drop the stored token."""
    try:
        server = server_urls(args)[0]
    except argparse.ArgumentTypeError as exc:
        print(f"scorpion forget-me: {exc}", file=sys.stderr)
        return 2
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
        print(f"{server} forgot you. Removed:")
        print(format_removed(answer.removed))
        print("the stored token is deleted: the next session starts a new identity")
        return 0

    return run_session(args, session, auto_resume=False)
