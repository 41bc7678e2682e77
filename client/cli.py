"""The ``scorpion`` command: the terminal client and the engine's tools."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from importlib import metadata

from .commands import COMMAND_MODULES

__all__ = ["build_parser", "main"]


SERVER_HELP = """\
Playing (play, race, quick, daily, watch, replay, ...) needs a Scorpion Race server.
Start one on this machine with `scorpion-server` (it starts its own store and listens
on ws://127.0.0.1:8765/, the default), or name another with --server ws://HOST:PORT/. To name it
once for every command, set SCORPION_SERVER or put {"server": "ws://HOST:PORT/"} in
config.json in the config directory (where the identity is kept; SCORPION_CONFIG_DIR
moves it). deal, solve and study need no server.

Start with `scorpion play` (a solo game) or `scorpion race new` (race a friend)."""


def build_parser() -> argparse.ArgumentParser:
    """Return the parser with every subcommand registered."""
    parser = argparse.ArgumentParser(
        prog="scorpion",
        description="Scorpion Race client and tools",
        epilog=SERVER_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"scorpion {package_version()}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def package_version() -> str:
    """The installed scorpion-race package's version ("unknown" when it is not installed)."""
    try:
        return metadata.version("scorpion-race")
    except metadata.PackageNotFoundError:
        return "unknown"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``scorpion`` command line and return its exit code (130 after Ctrl-C)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:  # plain `scorpion`: what it can do, and what it needs
        parser.print_help()
        return 0
    try:
        code: int = args.handler(args)
    except KeyboardInterrupt:  # a long solve or analysis given up: no traceback
        print(f"\nscorpion {args.command}: interrupted", file=sys.stderr)
        return 130
    return code


if __name__ == "__main__":
    raise SystemExit(main())
