"""The store's key names and pub/sub channels (the key table is in ``server/store/__init__.py``)."""

from __future__ import annotations

import hashlib

__all__ = [
    "FORGOTTEN_NAME",
    "LIVE_CHANNEL",
    "NODES_KEY",
    "ROOM_ALPHABET",
    "ROOM_CODE_LENGTH",
    "board_channel",
    "board_key",
    "game_channel",
    "game_key",
    "player_channel",
    "rematch_key",
    "room_key",
    "token_key",
]

ROOM_ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
ROOM_CODE_LENGTH = 6
FORGOTTEN_NAME = "forgotten player"
NODES_KEY = "nodes"
"""Sorted set of node names by their last heartbeat (ms)."""
LIVE_CHANNEL = "live"
"""Pub/sub channel announcing games that start (``+ID``) and end (``-ID``)."""


def game_key(game_id: str, part: str) -> str:
    return f"{{g:{game_id}}}:{part}"


def rematch_key(game_id: str, part: str = "") -> str:
    return f"rematch:{{{game_id}}}:{part}" if part else f"rematch:{{{game_id}}}"


def room_key(code: str, part: str = "") -> str:
    return f"room:{{{code}}}:{part}" if part else f"room:{{{code}}}"


def board_key(date: str, variant: str) -> str:
    return f"lb:{{{date}:{variant}}}"


def board_channel(date: str, variant: str) -> str:
    """Return the pub/sub channel announcing changes of a day's leaderboard."""
    return f"lb:{date}:{variant}"


def game_channel(game_id: str) -> str:
    """Return the pub/sub channel of a game's events."""
    return game_key(game_id, "ev")


def player_channel(player_id: str) -> str:
    """Return the pub/sub channel of direct notices to one player."""
    return f"u:{player_id}"


def token_key(token: str) -> str:
    return "token:" + hashlib.sha256(token.encode()).hexdigest()


# ARGV: seen version, based-on version, op, move, event, origin, summary, status[, finished]
