"""What the network subcommands share: server and identity options, running a session."""

from __future__ import annotations

import argparse
import asyncio
import datetime
import getpass
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from websockets.exceptions import InvalidURI
from websockets.uri import parse_uri

from protocol.wire.codec import JSON, MSGPACK
from protocol.wire.error import ProtocolError

from ...api import ScorpionClient
from ...errors import ServerError
from ...identity import TokenStore, configured_servers

__all__ = [
    "DEFAULT_SERVER",
    "Session",
    "add_server_options",
    "clock_text",
    "duration_text",
    "make_client",
    "run_session",
    "server_error_text",
    "server_urls",
]

DEFAULT_SERVER = "ws://127.0.0.1:8765/"

Session = Callable[[ScorpionClient], Awaitable[int]]


def server_url(text: str) -> str:
    """Check a ``--server`` value: a ``ws://`` or ``wss://`` URL (argparse reports the error)."""
    try:
        parse_uri(text)
    except (InvalidURI, ValueError) as exc:
        reason = "it is not a URL" if isinstance(exc, ValueError) else "the scheme is not ws or wss"
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a server URL ({reason}); for example {DEFAULT_SERVER}"
        ) from None
    return text


def add_server_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--server``, ``--name`` and ``--json`` to a subcommand."""
    parser.add_argument(
        "--server",
        action="append",
        default=None,
        type=server_url,
        help=(
            "server websocket URL; repeat to give fallbacks (default: $SCORPION_SERVER, else the "
            f"server of config.json in the config directory, else {DEFAULT_SERVER})"
        ),
    )
    parser.add_argument("--name", default=None, help="display name (default: the stored one, or your login)")
    parser.add_argument("--json-frames", action="store_true", help="speak JSON frames instead of msgpack")


def server_urls(args: argparse.Namespace) -> list[str]:
    """Return the servers to use: ``--server``, else the configured ones (``SCORPION_SERVER``,
    the config file), else :data:`DEFAULT_SERVER`.

    Raises ``argparse.ArgumentTypeError`` naming where a configured URL that is not one came from.
    """
    if args.server:
        return list(args.server)
    configured = configured_servers()
    if configured is None:
        return [DEFAULT_SERVER]
    urls, source = configured
    try:
        return [server_url(url) for url in urls]
    except argparse.ArgumentTypeError as exc:
        raise argparse.ArgumentTypeError(f"{source}: {exc}") from None


def make_client(args: argparse.Namespace, **options: Any) -> ScorpionClient:
    """Return a client for the parsed options, with the stored identity of the server."""
    urls = server_urls(args)
    store = TokenStore()
    known = store.load(urls[0])
    name = args.name or (known.name if known else "") or _login()
    return ScorpionClient(urls, name, store=store, fmt=JSON if args.json_frames else MSGPACK, **options)


def _login() -> str:
    try:
        name = getpass.getuser()
    except Exception:  # no login name in this environment
        name = ""
    name = "".join(ch for ch in name if ch.isprintable()).strip()[:24]
    return name or "Player"


def run_session(args: argparse.Namespace, session: Session, **options: Any) -> int:
    """Connect, run ``session`` and close; report connection failures as exit code 1."""

    async def main() -> int:
        try:
            client = make_client(args, **options)
        except argparse.ArgumentTypeError as exc:
            print(f"scorpion {args.command}: {exc}", file=sys.stderr)
            return 2
        try:
            await client.connect()
        except (ConnectionError, OSError, ServerError) as exc:
            print(
                f"scorpion {args.command}: cannot connect to {client.url}: {exc}\n"
                "a Scorpion Race server must be running: start one with `scorpion-server`, "
                "or name one with --server or SCORPION_SERVER",
                file=sys.stderr,
            )
            return 1
        except ProtocolError as exc:  # a request the client refuses to send
            print(f"scorpion {args.command}: {refusal_text(exc)}", file=sys.stderr)
            return 2
        try:
            return await session(client)
        except ServerError as exc:
            mode = client.race.mode if client.race is not None else None
            print(f"scorpion {args.command}: {server_error_text(exc, mode)}", file=sys.stderr)
            return 1
        except ProtocolError as exc:
            print(f"scorpion {args.command}: {refusal_text(exc)}", file=sys.stderr)
            return 2
        finally:
            await client.close()

    try:
        return asyncio.run(main())
    except KeyboardInterrupt:
        return 130


def server_error_text(exc: ServerError, mode: str | None = None) -> str:
    """Say why the server refused a request; a busy server's refusal says it was retried.

    A request the connection's state refused says in words which game or room is in the
    way and how to leave it (``mode``: that game's, when the client resumed it).
    """
    words = exc.in_the_way(mode)
    if words is not None:
        return words
    text = f"{exc.code}: {exc.message}"
    if exc.code == "account_required":
        return f"{text} (scorpion register USERNAME makes this terminal's player an account)"
    if exc.retryable:
        return f"{text} (the server stayed busy while the request was retried; try again later)"
    return text


_FIELD_WORDS = {"game": "the game id", "room": "the room code", "name": "the name (--name)"}


def refusal_text(exc: ProtocolError) -> str:
    """Say why the client would not send a request built from the command line.

    The client checks every request as the server would (``protocol.wire.message``) before it
    sends it; the fields a user types are named as the command line knows them.
    """
    words = _FIELD_WORDS.get(exc.field or "")
    if words is None:
        return exc.message
    return exc.message.replace(f"field {exc.field!r}", words, 1)


def clock_text(epoch_ms: int, fmt: str = "%H:%M") -> str:
    """Return an epoch-milliseconds time as UTC text."""
    return datetime.datetime.fromtimestamp(epoch_ms / 1000, datetime.UTC).strftime(fmt)


def duration_text(seconds: int | None) -> str:
    """Return seconds as ``m:ss`` (``-`` for none)."""
    if seconds is None:
        return "-"
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes}:{rest:02}"
