"""The records that messages carry: a move on the wire, and the nested records.

:class:`WireMove` (a move as the wire writes it, and its conversions to and from the
engine's :class:`~protocol.game.move.Move`), race options, roster and standings entries,
live games, replay logs. Public through :mod:`protocol.wire.message`.
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from msgspec import Meta

from ..game.card import card_from_text, card_text
from ..game.move import CELL_BASE, DEAL, Move
from .base import Record
from .fields import (
    MAX_LIST,
    MAX_RACERS,
    CardName,
    CellName,
    Column,
    Count,
    Epoch,
    Id,
    Name,
    RacerStatus,
    ReserveRuleName,
    RoomCode,
    Variant,
    _bad,
    _kept,
)


class WireMove(Record, frozen=True, kw_only=True, rename={"source": "from", "target": "to"}):
    """A move as the wire carries it: ``{"card": "7H", "from": 2, "to": 5}`` or ``{"deal": true}``.

    ``from`` is a column number from 1 or a reserve cell ``R1``/``R2``; ``to`` a column.
    """

    card: CardName | None = None
    source: Column | CellName | None = None
    target: Column | None = None
    deal: bool | None = None

    def __post_init__(self) -> None:
        if self.deal is not None:
            if self.deal is not True or not (
                self.card is None and self.source is None and self.target is None
            ):
                raise ValueError("a move has exactly the fields card, from and to (or only deal: true)")
            return
        if self.card is None or self.source is None or self.target is None:
            raise ValueError("a move has exactly the fields card, from and to (or only deal: true)")
        if not self.card.isupper():
            msgspec.structs.force_setattr(self, "card", self.card.upper())
        if type(self.source) is str and not self.source.isupper():
            msgspec.structs.force_setattr(self, "source", self.source.upper())

    @classmethod
    def of(cls, move: Move) -> WireMove:
        """Return the wire form of an engine move."""
        if move.is_deal:
            return cls(deal=True)
        source: int | str = f"R{move.source - CELL_BASE + 1}" if move.source >= CELL_BASE else move.source + 1
        return cls(card=card_text(move.card), source=source, target=move.target + 1)

    def to_move(self) -> Move:
        """Return the engine's move (the fields were checked when the record was decoded)."""
        if self.deal:
            return DEAL
        assert self.card is not None and self.source is not None and self.target is not None
        source = self.source
        index = CELL_BASE + int(source[1:]) - 1 if type(source) is str else int(source) - 1
        return Move(card_from_text(self.card), index, self.target - 1)


# ---------------------------------------------------------------- nested records


class Options(Record, frozen=True, kw_only=True):
    """Hold the options of a race: undo, hints, spectators, reserve rule, spectator delay.

    Friend races and quick matches allow undo and hints unless the host says otherwise.
    """

    undo: bool = _kept(True)
    hints: bool = _kept(True)
    spectators: bool = _kept(True)
    reserve_rule: ReserveRuleName = _kept("any-time")
    spectator_delay: Annotated[int, Meta(ge=0, le=300)] = _kept(0)
    rated: bool = _kept(False)
    """Whether the race changes its racers' ratings (quick matches are; a friend's room opts in)."""


class RoomPlayer(Record, frozen=True, kw_only=True):
    """Describe one player in a room: id, display name, ready flag."""

    player: Id
    name: Name
    ready: bool


class Racer(Record, frozen=True, kw_only=True):
    """Name one racer of a race (the roster entry): player id and display name."""

    player: Id
    name: Name


class RacerProgress(Record, frozen=True, kw_only=True):
    """Show one other racer's progress: summary and status, never the board."""

    player: Id
    summary: dict[str, Any]
    status: RacerStatus


class RacerBoard(Record, frozen=True, kw_only=True):
    """Show one racer to spectators: spectator view, summary and status."""

    player: Id
    name: Name
    view: dict[str, Any]
    summary: dict[str, Any]
    status: RacerStatus


class Standing(Record, frozen=True, kw_only=True):
    """Give one line of a race's final standings."""

    player: Id
    name: Name
    score: Annotated[int, Meta(ge=0, le=10**6)]
    runs: Annotated[int, Meta(ge=0, le=8)]
    elapsed: Count
    status: RacerStatus
    rank: Annotated[int, Meta(ge=1, le=MAX_RACERS)]


class GameInfo(Record, frozen=True, kw_only=True):
    """Describe one live game in the spectators' list."""

    game: Id
    variant: Variant
    players: Annotated[tuple[Racer, ...], Meta(max_length=MAX_RACERS)]
    start: Epoch
    spectators: Count
    room: RoomCode | None = None
    racers: Annotated[tuple[RacerProgress, ...], Meta(max_length=MAX_RACERS)] = _kept(())
    """Each racer's score and progress now (elapsed time is ``now - start``)."""
    rematch_of: Id | None = None
    """The race this one is a rematch of, when its racers asked to race again."""


class PlayerLog(Record, frozen=True, kw_only=True):
    """Hold one racer's move log in a replay: moves with their times (ms after the start)."""

    player: Id
    name: Name
    moves: Annotated[tuple[dict[str, Any], ...], Meta(max_length=MAX_LIST)]
    times: Annotated[tuple[Epoch, ...], Meta(max_length=MAX_LIST)]

    def __post_init__(self) -> None:
        if len(self.moves) != len(self.times):
            raise _bad("times", "must have one time for each move")
