"""The store's key names and pub/sub channels (the key table is in ``server/store/__init__.py``)."""

from __future__ import annotations

import hashlib

from protocol.wire.message import ROOM_ALPHABET, ROOM_CODE_LENGTH

__all__ = [
    "FORGOTTEN_NAME",
    "LIVE_CHANNEL",
    "NODES_KEY",
    "ROOM_ALPHABET",
    "ROOM_CODE_LENGTH",
    "board_channel",
    "board_key",
    "board_of_channel",
    "challenge_key",
    "challenges_of_key",
    "game_channel",
    "game_event",
    "game_key",
    "game_of_channel",
    "is_ghost",
    "is_shard_channel",
    "limit_key",
    "live_change",
    "login_key",
    "passkeys_key",
    "player_channel",
    "player_of_channel",
    "rematch_key",
    "room_key",
    "sessions_key",
    "token_key",
    "username_key",
]

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


def challenge_key(code: str, part: str = "") -> str:
    """Return a challenge's key (``part``: ``ghosts``, ``board``); all in the slot of ``{CODE}``."""
    return f"ch:{{{code}}}:{part}" if part else f"ch:{{{code}}}"


def challenges_of_key(player_id: str) -> str:
    """Return the key of a player's own challenges (code -> expiry, ms)."""
    return f"chs:{{{player_id}}}"


def challenge_sources_key(player_id: str) -> str:
    """Return the key of the games a player made challenges of (game id -> code), in the slot
    of their own challenges."""
    return f"chs:{{{player_id}}}:from"


GHOST_PREFIX = "ghost-"
"""The ids recorded runs race under in a challenge game (``ghost-1`` ...); never a player's."""


def is_ghost(player_id: str) -> bool:
    """Tell whether a racer of a game is a recorded run (no player, no place, no statistics)."""
    return player_id.startswith(GHOST_PREFIX)


def limit_key(kind: str, subject: str, part: str = "") -> str:
    """Return the key of one abuse limit (``guest``, ``room_code``...) of one address."""
    return f"limit:{{{kind}:{subject}}}:{part}" if part else f"limit:{{{kind}:{subject}}}"


def board_key(date: str, variant: str) -> str:
    return f"lb:{{{date}:{variant}}}"


def board_channel(date: str, variant: str) -> str:
    """Return the pub/sub channel announcing changes of a day's leaderboard."""
    return f"lb:{date}:{variant}"


def game_channel(game_id: str) -> str:
    """Return the pub/sub channel of a game's events."""
    return game_key(game_id, "ev")


def is_shard_channel(channel: str) -> bool:
    """Tell whether ``channel`` is a shard channel (``SPUBLISH``/``SSUBSCRIBE``): a game's,
    whose events then pass only through the cluster node that owns the game's slot."""
    return channel.startswith("{g:")


def player_channel(player_id: str) -> str:
    """Return the pub/sub channel of direct notices to one player."""
    return f"u:{player_id}"


def token_key(token: str) -> str:
    """Return the key of a session token: its SHA-256, never the token itself (decision 17)."""
    return "token:" + hashlib.sha256(token.encode()).hexdigest()


def sessions_key(player_id: str) -> str:
    """Return the key listing a player's sessions."""
    return f"sessions:{player_id}"


def login_key(skeleton: str) -> str:
    """Return the key of a username's wrong passwords and lockout (by its skeleton's
    SHA-256: a username nobody has is counted the same way)."""
    return "login:" + hashlib.sha256(skeleton.encode()).hexdigest()


def passkeys_key(player_id: str) -> str:
    """Return the key of a player's passkeys (their public keys, by credential id)."""
    return f"passkeys:{player_id}"


def username_key(skeleton: str) -> str:
    """Return the key reserving a username's look-alike class (by its skeleton's SHA-256)."""
    return "username:" + hashlib.sha256(skeleton.encode()).hexdigest()


# ARGV: seen version, based-on version, op, move, event, origin, summary, status[, finished]


def game_of_channel(channel: str) -> str:
    """Return the game id of a game's channel (the inverse of :func:`game_channel`)."""
    return channel[3 : channel.index("}")]


def player_of_channel(channel: str) -> str:
    """Return the player id of a player's notice channel (the inverse of :func:`player_channel`)."""
    return channel[2:]


def board_of_channel(channel: str) -> tuple[str, str]:
    """Return the date and variant of a leaderboard's channel (the inverse of :func:`board_channel`)."""
    _, date, variant = channel.split(":", 2)
    return date, variant


def game_event(data: str) -> tuple[int, str, str]:
    """Return the version, origin node and JSON event of a message on a game's channel."""
    version, origin, event = data.split("|", 2)
    return int(version), origin, event


def live_change(data: str) -> tuple[bool, str]:
    """Return whether a message on the live channel starts (else ends) a game, and the game's id."""
    return data[0] == "+", data[1:]
