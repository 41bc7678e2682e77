"""What the store answers with: records of games and racers, and its errors."""

from __future__ import annotations

import json
from dataclasses import dataclass

from redis.exceptions import (
    ClusterDownError,
    ClusterError,
    MasterDownError,
    SlotNotCoveredError,
    TryAgainError,
)
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

__all__ = [
    "UNREACHABLE",
    "ActionOutcome",
    "GameRecord",
    "RacerRecord",
    "RatingRecord",
    "StoreError",
    "Unreplicated",
    "Waiting",
]

UNREACHABLE: tuple[type[BaseException], ...] = (
    ConnectionError,
    OSError,
    TimeoutError,
    RedisConnectionError,  # redis-py's own, not the builtin; also raised while Redis loads its data
    RedisTimeoutError,
    ClusterDownError,  # a cluster failing over: some slot has no primary for a moment
    MasterDownError,
    TryAgainError,  # a slot being migrated: its keys are split between two nodes for a moment
    SlotNotCoveredError,
    ClusterError,  # the cluster client gave up following redirects and failures ("TTL exhausted")
)
"""The errors that mean Redis could not be reached just now (the request may be retried)."""


class Unreplicated(Exception):
    """A racer's action was made on the primary, but fewer replicas than asked for confirmed
    it in time: a failover could still lose it, so it is not acknowledged as made."""

    def __init__(self, version: int, replicas: int) -> None:
        super().__init__(f"the action (version {version}) reached {replicas} replica(s) only")
        self.version = version
        self.replicas = replicas


class StoreError(RuntimeError):
    """Raise when a store operation is refused for a reason the caller must report."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True, slots=True)
class ActionOutcome:
    """What the store did with a game action: ``ok`` with the new version, or why not."""

    result: str
    value: str

    @property
    def version(self) -> int:
        """Return the new event version (only meaningful when ``result == 'ok'``)."""
        return int(self.value)


@dataclass(slots=True)
class RacerRecord:
    """One racer of a game as stored: status, summary fields and move list."""

    player_id: str
    name: str
    status: str
    changed: int
    fields: dict[str, str]
    moves: list[str]


@dataclass(slots=True)
class GameRecord:
    """A game as stored (the secret number and salt included: server-side only)."""

    game_id: str
    meta: dict[str, str]
    racers: list[RacerRecord]

    @property
    def version(self) -> int:
        """Return the game's current event version."""
        return int(self.meta.get("ver", "0"))

    @property
    def roster(self) -> list[dict[str, str]]:
        """Return the racers' ids and names in seat order."""
        result: list[dict[str, str]] = json.loads(self.meta["roster"])
        return result


@dataclass(frozen=True, slots=True)
class RatingRecord:
    """A player's stored rating in one variant (Glicko scale) and what it rests on."""

    rating: float
    deviation: float
    volatility: float
    games: int
    """Rated races played in the variant."""
    at: int
    """When the last of them ended (ms)."""
    best: float

    def to_json(self) -> str:
        """Return the stored form of the record."""
        return json.dumps(
            {
                "r": self.rating,
                "rd": self.deviation,
                "vol": self.volatility,
                "n": self.games,
                "at": self.at,
                "best": self.best,
            }
        )

    @classmethod
    def from_json(cls, text: str) -> RatingRecord:
        """Return the record a stored text holds."""
        data = json.loads(text)
        return cls(
            rating=float(data["r"]),
            deviation=float(data["rd"]),
            volatility=float(data["vol"]),
            games=int(data["n"]),
            at=int(data["at"]),
            best=float(data.get("best", data["r"])),
        )


@dataclass(frozen=True, slots=True)
class Waiting:
    """A player waiting in a rated queue: their rating and when their wait began (ms)."""

    player: str
    rating: float
    joined: int
