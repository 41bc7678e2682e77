"""The ``scorpion`` command: the terminal client and the engine's tools."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from importlib import metadata

from .commands import COMMAND_MODULES

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    """Return the parser with every subcommand registered."""
    parser = argparse.ArgumentParser(prog="scorpion", description="Scorpion Race client and tools")
    parser.add_argument("--version", action="version", version=f"scorpion {package_version()}")
    subparsers = parser.add_subparsers(dest="command", required=True)
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
    args = build_parser().parse_args(argv)
    try:
        code: int = args.handler(args)
    except KeyboardInterrupt:  # a long solve or analysis given up: no traceback
        print(f"\nscorpion {args.command}: interrupted", file=sys.stderr)
        return 130
    return code


if __name__ == "__main__":
    raise SystemExit(main())
