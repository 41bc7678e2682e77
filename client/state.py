"""What a client knows of the race it plays or watches, rebuilt from the server's messages.

:class:`RaceState` applies ``race_started``, ``accepted``, ``progress``, ``race_ended``,
``batch``, ``snapshot`` (as a racer) and ``spectate``, ``spectate_event``, ``spectators``
(as a spectator). It keeps the last version seen, refuses duplicates and reports gaps, so
the connection knows when to send ``resume``. Its :meth:`RaceState.board` is a local model
of the player's own board for legality checks (see :mod:`client.model`).

A race may be a multi-player race (mode ``race``), a solo game (``solo``), the daily ranked
attempt (``daily``) or a daily practice (``practice``); the last three have one racer. A
daily ``race_ended`` carries no deal number until the day is over (:attr:`RaceState.revealed`).

After the game ends the server's solver sends the player an ``analysis`` (was the deal
winnable, a winning line, after which move the win slipped away): the last one received
for the race is :attr:`RaceState.analysis`. In a solo game the answer to ``winnable`` (is
the position still winnable, with a winning move) is :attr:`RaceState.winnable` while the
board is the one it was given for.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from protocol.game import Board, Move, MoveError, move_from_json
from protocol.wire.message import (
    Accepted,
    Analysis,
    Batch,
    Message,
    Options,
    Progress,
    RaceEnded,
    RaceStarted,
    ReplayLog,
    Snapshot,
    SpectateBatch,
    SpectateEvent,
    Spectators,
    SpectatorSnapshot,
    WinnableInfo,
)

from .model import board_from_view, legal_targets

__all__ = ["Applied", "RaceState", "RacerState", "final_line"]

RACE_EVENTS = (RaceStarted, Accepted, Progress, RaceEnded)


@dataclass(slots=True)
class RacerState:
    """One racer as this client knows them."""

    player: str
    name: str
    summary: dict[str, Any] | None = None
    status: str = "playing"
    view: dict[str, Any] | None = None  # known to spectators only (racers see only their own)


@dataclass(frozen=True, slots=True)
class Applied:
    """What applying a message did: ``changed`` the state; found a ``gap`` (resume from ``v``)."""

    changed: bool
    gap: bool = False


@dataclass(slots=True)
class RaceState:
    """One race, seen by one of its racers (``me``) or by a spectator (``me`` is ``None``)."""

    game: str
    variant: str
    options: Options
    start: int
    me: str | None
    v: int = 0
    commitment: str = ""
    room: str | None = None
    daily: str | None = None
    mode: str = "race"
    view: dict[str, Any] | None = None
    summary: dict[str, Any] | None = None
    status: str = "playing"
    racers: dict[str, RacerState] = field(default_factory=dict)
    spectators: int = 0
    ended: RaceEnded | None = None
    analysis: Analysis | None = None
    last_winnable: WinnableInfo | None = field(default=None, repr=False)
    stash: dict[int, Message] = field(default_factory=dict, repr=False)
    _board: Board | None = field(default=None, repr=False)
    _board_view: object = field(default=None, repr=False)

    # -- building -------------------------------------------------------------------------

    @classmethod
    def from_started(cls, message: RaceStarted, me: str | None) -> RaceState:
        """Return the state at the start of a race."""
        state = cls(
            game=message.game,
            variant=message.variant,
            options=message.options,
            start=message.start,
            me=me,
            v=message.v,
            commitment=message.commitment,
            room=message.room,
            daily=message.daily,
            mode=message.mode,
            view=message.view,
        )
        for racer in message.roster:
            state.racers[racer.player] = RacerState(racer.player, racer.name)
        return state

    @classmethod
    def from_snapshot(cls, message: Snapshot, me: str | None) -> RaceState:
        """Return the state a ``snapshot`` describes (everything known before is dropped)."""
        state = cls(
            game=message.game,
            variant=message.variant,
            options=message.options,
            start=message.start,
            me=me,
            v=message.v,
            commitment=message.commitment,
            daily=message.daily,
            mode=message.mode,
            view=message.view,
            summary=message.summary,
            status=message.status,
        )
        for racer in message.roster:
            state.racers[racer.player] = RacerState(racer.player, racer.name)
        if me is not None and me in state.racers:
            state.racers[me].summary, state.racers[me].status = message.summary, message.status
        for progress in message.racers:
            known = state.racers.setdefault(progress.player, RacerState(progress.player, progress.player))
            known.summary, known.status = progress.summary, progress.status
        return state

    @classmethod
    def from_spectate(cls, message: SpectatorSnapshot) -> RaceState:
        """Return the state a spectator starts from."""
        state = cls(
            game=message.game,
            variant=message.variant,
            options=message.options,
            start=message.start,
            me=None,
            v=message.v,
            room=message.room,
            spectators=message.spectators,
        )
        for racer in message.racers:
            state.racers[racer.player] = RacerState(
                racer.player, racer.name, racer.summary, racer.status, racer.view
            )
        return state

    # -- applying -------------------------------------------------------------------------

    def apply(self, message: Message) -> Applied:
        """Apply one message about this race; say whether it changed anything or left a gap."""
        if isinstance(message, (Analysis, WinnableInfo)):
            if message.game != self.game or (isinstance(message, Analysis) and message.player != self.me):
                return Applied(False)
            if isinstance(message, Analysis):
                self.analysis = message
            else:
                self.last_winnable = message
            return Applied(True)
        if isinstance(message, Spectators):
            if message.game != self.game:
                return Applied(False)
            self.spectators = message.count
            return Applied(True)
        if isinstance(message, Batch | SpectateBatch):
            if isinstance(message, SpectateBatch) and message.game == self.game:
                self.spectators = message.spectators
            if message.game != self.game:
                return Applied(False)
            changed = False
            for event in message.events:
                result = self.apply(event)
                changed = changed or result.changed
                if result.gap:
                    return Applied(changed, gap=True)
            return Applied(changed)
        if not isinstance(message, (*RACE_EVENTS, SpectateEvent)):
            return Applied(False)
        if getattr(message, "game", None) != self.game:
            return Applied(False)
        version: int = message.v
        if version <= self.v:
            return Applied(False)  # seen already (an answer and its echo, or a resent event)
        if version > self.v + 1 and not isinstance(message, SpectateEvent):
            # Out of order (an answer can overtake the events before it): keep it for later.
            self.stash[version] = message
            return Applied(False, gap=True)
        self._apply_event(message)
        while self.v + 1 in self.stash:
            self._apply_event(self.stash.pop(self.v + 1))
        for old in [v for v in self.stash if v <= self.v]:
            del self.stash[old]
        return Applied(True)

    @property
    def missing(self) -> bool:
        """Tell whether events after :attr:`v` arrived while some before them did not."""
        return bool(self.stash)

    def _apply_event(self, message: Message) -> None:
        version: int = message.v  # type: ignore[attr-defined]
        self.v = version
        if isinstance(message, Accepted):
            self.view, self.summary, self.status = message.view, message.summary, message.status
            if self.me is not None and self.me in self.racers:
                self.racers[self.me].summary = message.summary
                self.racers[self.me].status = message.status
        elif isinstance(message, Progress):
            racer = self.racers.setdefault(message.player, RacerState(message.player, message.player))
            racer.summary, racer.status = message.summary, message.status
            if message.player == self.me:
                self.summary, self.status = message.summary, message.status
        elif isinstance(message, SpectateEvent):
            racer = self.racers.setdefault(message.player, RacerState(message.player, message.player))
            racer.summary, racer.status, racer.view = message.summary, message.status, message.view
        elif isinstance(message, RaceEnded):
            self.ended = message
            for standing in message.standings:
                racer = self.racers.setdefault(standing.player, RacerState(standing.player, standing.name))
                racer.status = standing.status
                if standing.player == self.me:
                    self.status = standing.status
        elif isinstance(message, RaceStarted):
            self.view = message.view

    # -- reading --------------------------------------------------------------------------

    @property
    def spectating(self) -> bool:
        """Tell whether this client watches the race rather than racing in it."""
        return self.me is None

    @property
    def playing(self) -> bool:
        """Tell whether this client may still move in this race."""
        return not self.spectating and self.ended is None and self.status == "playing"

    @property
    def solo(self) -> bool:
        """Tell whether this is a one-racer game (solo, daily attempt or practice)."""
        return self.mode != "race"

    @property
    def revealed(self) -> bool:
        """Tell whether the race is over and its deal number and salt are known."""
        return self.ended is not None and self.ended.number is not None and self.ended.salt is not None

    @property
    def rule(self) -> str:
        """Return the race's reserve rule."""
        return self.options.reserve_rule

    @property
    def winnable(self) -> WinnableInfo | None:
        """Return the last ``winnable_info`` while the board is still the one it was given for."""
        info = self.last_winnable
        return info if info is not None and info.v == self.v and self.playing else None

    def board(self) -> Board | None:
        """Return the local model of this player's board (``None`` before any view)."""
        if self.view is None:
            return None
        if self._board is None or self._board_view is not self.view:
            self._board = board_from_view(self.view, self.rule)
            self._board_view = self.view
        return self._board

    def legal_moves(self) -> list[Move]:
        """Return the legal moves of this player's board (empty when not playing)."""
        board = self.board()
        if board is None or not self.playing:
            return []
        return board.legal_moves()

    def explain(self, move: Move) -> str | None:
        """Return why ``move`` is illegal now, or ``None`` when the server should accept it."""
        if self.spectating:
            return "spectators do not move"
        if self.ended is not None or self.status != "playing":
            return "your part of the race is over"
        board = self.board()
        if board is None:
            return "the board is not known yet"
        return board.explain(move)

    def targets(self, column: int, row: int) -> dict[int, Move]:
        """Return the columns (from 0) the card at ``column``/``row`` may go to now."""
        board = self.board()
        if board is None or not self.playing:
            return {}
        return legal_targets(board, column, row)


def final_line(log: ReplayLog, player: str) -> list[Move]:
    """Return a racer's final line from a game's ``replay_log``: their moves with the undos applied.

    This is the line an ``analysis`` counts in (its ``moves`` and ``slipped``).
    """
    line: list[Move] = []
    for racer in log.logs:
        if racer.player != player:
            continue
        for data in racer.moves:
            if data.get("undo"):
                if line:
                    line.pop()
                continue
            try:
                line.append(move_from_json(data))
            except MoveError:
                continue
    return line
