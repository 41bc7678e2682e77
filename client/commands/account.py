"""``scorpion register``, ``login``, ``logout`` and ``sessions``: the account of this terminal.

The password is read without echo, or from ``SCORPION_PASSWORD`` (for bots and scripts).
The session token the server gives is kept in the token store, as a guest's is.
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import os
import sys

from protocol.wire.error import ProtocolError

from ..api import ScorpionClient
from ..errors import ServerError
from .support.session import (
    Session,
    add_server_options,
    clock_text,
    make_client,
    refusal_text,
    server_error_text,
)

__all__ = ["register"]

PASSWORD_VARIABLE = "SCORPION_PASSWORD"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``register``, ``login``, ``logout`` and ``sessions`` subcommands."""
    parser = subparsers.add_parser(
        "register", help="turn this terminal's guest into an account (needed for ranked play)"
    )
    parser.add_argument("username", help="the username to take")
    add_server_options(parser)
    parser.set_defaults(handler=run_register)
    parser = subparsers.add_parser("login", help="log in to your account on this terminal")
    parser.add_argument("username")
    add_server_options(parser)
    parser.set_defaults(handler=run_login)
    parser = subparsers.add_parser("logout", help="end this terminal's session of your account")
    add_server_options(parser)
    parser.set_defaults(handler=run_logout)
    parser = subparsers.add_parser("sessions", help="list your account's sessions, or revoke them")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--revoke", metavar="ID", help="revoke the session with this id")
    which.add_argument("--all", action="store_true", help="revoke every session but this one")
    add_server_options(parser)
    parser.set_defaults(handler=run_sessions)


def read_password(prompt: str = "password: ") -> str:
    """Return the password from ``SCORPION_PASSWORD``, else read it without echo."""
    return os.environ.get(PASSWORD_VARIABLE) or getpass.getpass(prompt)


def _run(args: argparse.Namespace, client: ScorpionClient, action: Session) -> int:
    async def main() -> int:
        try:
            await client.connect()
            return await action(client)
        except ServerError as exc:
            print(f"scorpion {args.command}: {server_error_text(exc)}", file=sys.stderr)
            return 1
        except ProtocolError as exc:
            print(f"scorpion {args.command}: {refusal_text(exc)}", file=sys.stderr)
            return 2
        except (ConnectionError, OSError) as exc:
            print(f"scorpion {args.command}: cannot connect: {exc}", file=sys.stderr)
            return 1
        finally:
            await client.close()

    try:
        return asyncio.run(main())
    except KeyboardInterrupt:
        return 130


def run_register(args: argparse.Namespace) -> int:
    """Register the stored guest (or a new one) as an account."""
    password = read_password("choose a password (8 characters or more): ")

    async def action(client: ScorpionClient) -> int:
        granted = await client.register(args.username, password)
        print(f"you are {granted.username} now: ranked play is open (the session is kept)")
        return 0

    return _run(args, make_client(args, auto_resume=False), action)


def run_login(args: argparse.Namespace) -> int:
    """Log in and keep the session token for the next commands."""
    password = read_password()
    client = make_client(args, auto_resume=False)
    client.credentials = (args.username, password)

    async def action(client: ScorpionClient) -> int:
        welcome = client.welcome
        print(f"logged in as {welcome.username if welcome else args.username}")
        return 0

    return _run(args, client, action)


def run_logout(args: argparse.Namespace) -> int:
    """End the stored session on the server and forget its token."""

    async def action(client: ScorpionClient) -> int:
        if client.welcome is None or client.welcome.username is None:
            print("scorpion logout: this terminal is a guest, not logged in", file=sys.stderr)
            return 1
        await client.logout()
        print("logged out: the stored token is deleted")
        return 0

    return _run(args, make_client(args, auto_resume=False, reconnect=False), action)


def run_sessions(args: argparse.Namespace) -> int:
    """List the account's sessions, or revoke one or all others."""

    async def action(client: ScorpionClient) -> int:
        if args.revoke or args.all:
            await client.session_revoke(args.revoke, all=args.all)
            print("revoked" + (" every other session" if args.all else f" {args.revoke}"))
            return 0
        listed = await client.sessions()
        for entry in listed.sessions:
            mark = "*" if entry.current else " "
            seen = clock_text(entry.seen, "%Y-%m-%d %H:%M")
            print(f"{mark} {entry.session}  last seen {seen} UTC  {entry.device}")
        return 0

    return _run(args, make_client(args, auto_resume=False), action)
