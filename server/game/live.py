"""A node's record of one game, and what each recipient receives of its events.

:class:`LiveGame` is what a node knows of a game (its settings, and per racer a board
rebuilt from the racer's move list in Redis). Events are stored once, in a neutral form
(never a face-down card, never the deal number before the end); :func:`project` turns one
into what a racer (their own board, the others' progress) or a spectator receives.
Pure: no I/O here.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from protocol.game import Board, ReserveRule, Status, score, view_data
from protocol.rating import standing_key
from protocol.wire.message import (
    Accepted,
    Message,
    Options,
    Progress,
    RaceEnded,
    Racer,
    RacerProgress,
    RaceStarted,
    SpectateEvent,
    Standing,
)

from .fairness import Uncovered, spectator_view

__all__ = [
    "DONE",
    "RACER_STATUS",
    "GameListener",
    "GameSpec",
    "LiveGame",
    "game_event",
    "new_game_id",
    "now_ms",
    "project",
    "race_ended_event",
    "race_started_event",
    "racer_fields",
    "rank_racers",
]


class GameListener(Protocol):
    """A connection that follows a game as one of its racers (a :class:`server.session.Session`)."""

    player: str | None
    games: dict[str, int]
    """The games it races in, each with the last version it was sent."""

    def send(self, message: Message) -> None:
        """Queue an answer or notice for this connection."""

    def deliver(self, game_id: str, version: int, event: dict[str, Any], spectator: bool) -> None:
        """Queue one of the game's events for this connection."""


DONE = ("finished", "stuck", "resigned", "left")


_ID_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"


def new_game_id() -> str:
    """Return a fresh game id: 10 letters and digits (59 random bits).

    Short enough to keep move frames under 64 bytes, and never starting with ``-`` (which
    a command line would take for an option).
    """
    return "".join(secrets.choice(_ID_ALPHABET) for _ in range(10))


def now_ms() -> int:
    """Return the server's wall clock in milliseconds."""
    return int(time.time() * 1000)


@dataclass(frozen=True, slots=True, kw_only=True)
class GameSpec:
    """How to start a game: its variant and options, its kind, and what is fixed beforehand."""

    variant: str
    options: Options
    mode: str = "race"
    """``race``, ``solo``, ``daily`` (the ranked attempt) or ``practice`` (the daily, unranked)."""
    number: int | None = None
    """The deal; ``None`` draws a fresh secret one."""
    salt: str | None = None
    daily: str | None = None
    """The day of a daily game."""
    room: str | None = None
    rematch_of: str | None = None
    saved: bool = False
    """A solo game kept for its player to resume later."""
    time_limit: float | None = None
    """Seconds; ``None`` is the node's race limit and 0 none."""
    challenge: str | None = None
    """The challenge a challenge game races (``None``: a fresh deal played first)."""


@dataclass
class LiveGame:
    """What a node knows of one game (rebuildable from Redis at any time)."""

    game_id: str
    variant: str
    rule: ReserveRule
    options: Options
    start: int
    number: int
    salt: str
    commitment: str
    roster: list[tuple[str, str]]
    room: str | None
    time_limit_ms: int
    mode: str = "race"
    daily: str | None = None
    saved: bool = False
    rematch_of: str | None = None
    """The race this one is a rematch of (its racers asked to race again)."""
    challenge: str | None = None
    """The challenge's code, in a game that races one (mode ``challenge``, or ``practice``)."""
    version: int = 0
    ended: bool = False
    ending: bool = False
    """This node is ending the race (every racer is done)."""
    boards: dict[str, Board | None] = field(default_factory=dict)
    changed: dict[str, int] = field(default_factory=dict)
    status: dict[str, str] = field(default_factory=dict)
    summary: dict[str, dict[str, Any]] = field(default_factory=dict)
    locks: dict[str, asyncio.Lock] = field(default_factory=dict)
    listeners: set[GameListener] = field(default_factory=set)
    timer: asyncio.Task[None] | None = None
    paused: list[tuple[int, int]] = field(default_factory=list)
    """Storage outages during the game (``(start_ms, end_ms)``, disjoint, in order): their
    time is not counted on the game's clock."""
    outages_seen: int = 0
    """How many of this node's outages were added to ``paused`` (its ``StoreHealth.generation``)."""
    uncovered: dict[str, Uncovered] = field(default_factory=dict)
    """Per racer, the cards their latest view shows them and its version (kept for rated
    races only: what their spectators may be shown, :mod:`server.game.fairness`)."""

    def racer_ids(self) -> list[str]:
        """Return the racers' ids in seat order."""
        return [pid for pid, _ in self.roster]

    def elapsed_seconds(self, at_ms: int) -> int:
        """Return the whole seconds the game's clock shows at ``at_ms``: the time since the
        start, less the storage outages in it (never negative)."""
        return max(0, (at_ms - self.start - self.paused_ms(at_ms)) // 1000)

    def paused_ms(self, at_ms: int) -> int:
        """Return how long, from the start to ``at_ms``, the game's storage was unreachable."""
        if not self.paused:
            return 0
        return sum(max(0, min(end, at_ms) - max(begin, self.start)) for begin, end in self.paused)

    def limit_end(self, at_ms: int) -> int:
        """Return when (server clock, ms) the time limit runs out, as of ``at_ms``: the start,
        plus the limit, plus the outages until then (meaningless when there is no limit)."""
        return self.start + self.time_limit_ms + self.paused_ms(at_ms)

    def racers(self) -> tuple[Racer, ...]:
        """Return the roster as wire records."""
        return tuple(Racer(player=pid, name=name) for pid, name in self.roster)

    def progress(self) -> tuple[RacerProgress, ...]:
        """Return every racer's latest summary and status, in seat order."""
        return tuple(
            RacerProgress(player=pid, summary=self.summary.get(pid, {}), status=self.status[pid])
            for pid in self.racer_ids()
        )


RACER_STATUS = {Status.WON: "finished", Status.STUCK: "stuck"}
"""A racer's status after a move that leaves the game won or stuck (else ``playing``)."""


def racer_fields(summary: dict[str, Any], status: str, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """Return a racer's stored fields: its summary and status, and any ``extra``."""
    out: dict[str, Any] = {"summary": json.dumps(summary), "status": status}
    if extra:
        out.update(extra)
    return out


class RacerResult(Protocol):
    """What a finished race's standings are made from: one racer's stored record."""

    @property
    def player_id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def fields(self) -> Mapping[str, str]: ...


def rank_racers(
    game: LiveGame, racers: Iterable[RacerResult], now: int
) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """Return a race's standings (best first) and when each racer finished.

    Scores run on the game's clock (outages left out); a racer still playing at the end
    is scored as of ``now``, or of the time limit if that came first. The order rewards
    playing on (:func:`protocol.rating.standing_key`, decision 12): score, then how the
    racer ended (finished, then stuck or still playing at the time limit, then resigned or
    left), then the shorter time among those who finished and the longer stay among those
    who resigned or left. Racers equal on all of these share a rank (1, 1, 3), listed by
    who finished first, then in seat order.
    """
    limit_end = game.limit_end(now)
    rows: list[tuple[dict[str, Any], int]] = []
    for racer in racers:
        summary = json.loads(racer.fields.get("summary", "{}"))
        finished = int(racer.fields.get("finished", now))
        if game.time_limit_ms:
            finished = min(finished, limit_end)
        elapsed = game.elapsed_seconds(finished)
        runs = int(summary.get("runs", 0))
        row: dict[str, Any] = {
            "player": racer.player_id,
            "name": racer.name,
            "runs": runs,
            "elapsed": elapsed,
        }
        row.update(score=score(runs, racer.status == "finished", elapsed), status=racer.status)
        rows.append((row, finished))

    def place(row: dict[str, Any]) -> tuple[int, int, int]:
        return standing_key(row["score"], row["status"], row["elapsed"])

    rows.sort(key=lambda r: (place(r[0]), r[1]))
    standings: list[dict[str, Any]] = []
    for index, (row, _) in enumerate(rows):
        tied = index > 0 and place(row) == place(standings[-1])
        standings.append({**row, "rank": standings[-1]["rank"] if tied else index + 1})
    return standings, {row["player"]: finished for row, finished in rows}


def race_started_event(board: Board, at: int) -> dict[str, Any]:
    """Return a game's first event: the opening position, as its racers see it."""
    return {"type": "race_started", "view": view_data(board), "at": at}


def game_event(
    kind: str,
    *,
    player: str,
    action: str,
    move: str,
    view: Mapping[str, Any],
    summary: dict[str, Any],
    status: str,
    origin: str,
    at: int,
) -> dict[str, Any]:
    """Return the stored event of a racer's action (``kind`` ``move``) or change of status
    (``status``): the racer's board as they see it (``view``: :func:`view_data` of it, no
    face-down card, the stock a count), their summary and status, and where and when it was committed."""
    return {
        "type": kind,
        "player": player,
        "action": action,
        "move": move,
        "view": view,
        "summary": summary,
        "status": status,
        "origin": origin,
        "at": at,
    }


def race_ended_event(game: LiveGame, standings: list[dict[str, Any]], at: int) -> dict[str, Any]:
    """Return a game's last event: its standings, and its deal revealed unless it is a daily's.

    A daily deal is everyone's all day: it is revealed when the day is over. The number is
    written as text: it may not fit in 64 bits, past which a JSON reader may hand it back
    as an inexact float.
    """
    ending: dict[str, Any] = {"type": "race_ended", "standings": standings, "at": at}
    if game.mode not in ("daily", "practice"):
        ending.update(number=str(game.number), salt=game.salt)
    return ending


def project(game: LiveGame, version: int, event: dict[str, Any], viewer: str | None) -> Message | None:
    """Return what ``viewer`` (a racer's id, or ``None`` for a spectator) receives of an event."""
    kind = event["type"]
    if kind == "race_started":
        if viewer is None:
            return None
        return RaceStarted(
            game=game.game_id,
            v=version,
            variant=game.variant,
            options=game.options,
            start=game.start,
            commitment=game.commitment,
            view=event["view"],
            roster=game.racers(),
            room=game.room,
            daily=game.daily,
            mode=game.mode,
        )
    if kind in ("move", "status"):
        player = event["player"]
        if viewer is None:
            return SpectateEvent(
                game=game.game_id,
                v=version,
                player=player,
                view=spectator_view(game, event["view"]),
                summary=event["summary"],
                status=event["status"],
            )
        if viewer == player:
            return Accepted(
                game=game.game_id,
                v=version,
                view=event["view"],
                summary=event["summary"],
                status=event["status"],
            )
        return Progress(
            game=game.game_id, v=version, player=player, summary=event["summary"], status=event["status"]
        )
    if kind == "race_ended":
        return RaceEnded(
            game=game.game_id,
            v=version,
            standings=tuple(Standing(**s) for s in event["standings"]),
            # The node's own copy of the number, exact whatever the event's reader made of it.
            number=str(game.number) if event.get("number") is not None else None,
            salt=event.get("salt"),
        )
    return None
