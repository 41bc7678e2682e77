"""The position of one Scorpion game and its move stack.

A :class:`Board` is a position plus the stack of moves that led to it. ``push`` applies a
move (turning up an uncovered face-down card and collecting finished runs on the way) and
``pop`` takes the last one back exactly, so undo, replay and search all use one mechanism.
``push`` trusts its move; ``play`` checks it first and says precisely why it is illegal.

Layout of the state, chosen for a cheap move generator:

- ``columns[i]`` lists the cards of column ``i`` from the first dealt to the exposed one;
  the first ``down[i]`` of them are face down (face-down cards only ever lie at the bottom).
- ``stock`` holds the undealt reserve in the order its cards land (columns 1, 2, 3).
- ``cells`` holds the open reserve cells of Three Blind Mice (``NO_CARD`` when empty).
- ``foundations`` lists the suits of collected runs in the order they were collected.
- ``_where[card]`` is the column, cell, stock or foundation the card is in, and
  ``_hidden[card]`` tells whether its identity is unknown to the player.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from enum import StrEnum

from .card import SUITS, card_text
from .deal import Deal, deal
from .move import CELL_BASE, DEAL, Move, source_text
from .variant import ReserveRule, Variant, get_variant

__all__ = [
    "FOUNDATION",
    "NO_CARD",
    "STOCK",
    "Board",
    "IllegalMove",
    "Status",
]

NO_CARD = -1
STOCK = 200
FOUNDATION = 300

# The 13 cards of a finished run as they lie in a column: King first, Ace exposed.
_RUNS: tuple[list[int], ...] = tuple([suit * 13 + rank for rank in range(12, -1, -1)] for suit in range(4))
_KINGS = (12, 25, 38, 51)


class Status(StrEnum):
    """Where a game stands."""

    IN_PLAY = "in_play"
    WON = "won"
    STUCK = "stuck"


class IllegalMove(ValueError):
    """Raise when a move breaks a rule; the message says which."""


class Board:
    """A Scorpion position and the stack of moves pushed onto it."""

    __slots__ = (
        "_hidden",
        "_stack",
        "_where",
        "cells",
        "columns",
        "down",
        "foundations",
        "rule",
        "stock",
        "variant",
    )

    def __init__(
        self,
        variant: Variant | str,
        columns: Sequence[Sequence[int]],
        down: Sequence[int],
        stock: Sequence[int] = (),
        cells: Sequence[int] = (),
        foundations: Sequence[int] = (),
        rule: ReserveRule | str = ReserveRule.ANY_TIME,
    ) -> None:
        self.variant = get_variant(variant)
        self.rule = ReserveRule.parse(rule)
        self.columns: list[list[int]] = [list(col) for col in columns]
        self.down: list[int] = list(down)
        self.stock: list[int] = list(stock)
        self.cells: list[int] = list(cells)
        self.foundations: list[int] = list(foundations)
        self._stack: list[tuple[Move, int, bool, list[tuple[int, bool]]]] = []
        self._where = [NO_CARD] * 52
        self._hidden = [False] * 52
        for index, col in enumerate(self.columns):
            for row, card in enumerate(col):
                self._where[card] = index
                self._hidden[card] = row < self.down[index]
        for card in self.stock:
            self._where[card] = STOCK
            self._hidden[card] = True
        for index, card in enumerate(self.cells):
            if card != NO_CARD:
                self._where[card] = CELL_BASE + index
        for suit in self.foundations:
            for card in _RUNS[suit]:
                self._where[card] = FOUNDATION

    # -- construction -------------------------------------------------------------------

    @classmethod
    def from_deal(
        cls,
        layout: Deal,
        rule: ReserveRule | str = ReserveRule.ANY_TIME,
    ) -> Board:
        """Return the opening position of ``layout``."""
        variant = layout.variant
        stock = layout.reserve if variant.stock else ()
        cells = layout.reserve if variant.cells else ()
        return cls(variant, layout.columns, layout.face_down, stock, cells, (), rule)

    @classmethod
    def new(
        cls,
        variant: Variant | str,
        number: int,
        rule: ReserveRule | str = ReserveRule.ANY_TIME,
    ) -> Board:
        """Return the opening position of game ``number`` of ``variant``."""
        return cls.from_deal(deal(variant, number), rule)

    def copy(self, *, stack: bool = True) -> Board:
        """Return an independent copy (with the move stack unless ``stack`` is false)."""
        other = Board.__new__(Board)
        other.variant = self.variant
        other.rule = self.rule
        other.columns = [col[:] for col in self.columns]
        other.down = self.down[:]
        other.stock = self.stock[:]
        other.cells = self.cells[:]
        other.foundations = self.foundations[:]
        other._where = self._where[:]
        other._hidden = self._hidden[:]
        other._stack = [(m, n, f, rec[:]) for m, n, f, rec in self._stack] if stack else []
        return other

    # -- reading ------------------------------------------------------------------------

    @property
    def move_stack(self) -> list[Move]:
        """Return the moves pushed so far, first to last."""
        return [entry[0] for entry in self._stack]

    @property
    def depth(self) -> int:
        """Return how many moves have been pushed (``len(move_stack)`` without the copy)."""
        return len(self._stack)

    @property
    def runs(self) -> int:
        """Return how many finished runs have gone to the foundations."""
        return len(self.foundations)

    @property
    def face_down_left(self) -> int:
        """Return how many tableau cards are still face down."""
        return sum(self.down)

    @property
    def reserve_left(self) -> int:
        """Return how many reserve cards are still to be played (stock or open cells)."""
        return len(self.stock) + sum(1 for card in self.cells if card != NO_CARD)

    def is_won(self) -> bool:
        """Tell whether all four runs are collected."""
        return len(self.foundations) == 4

    def is_face_up(self, card: int) -> bool:
        """Tell whether ``card`` is visible to the player (face up in a column or a cell)."""
        where = self._where[card]
        return where < STOCK and not self._hidden[card]

    def location(self, card: int) -> int:
        """Return where ``card`` is: a column index, ``CELL_BASE + i``, ``STOCK`` or ``FOUNDATION``."""
        return self._where[card]

    def status(self) -> Status:
        """Return whether the game is won, stuck (no legal move left) or in play."""
        if len(self.foundations) == 4:
            return Status.WON
        if self.stock:
            return Status.IN_PLAY  # the deal is legal: at any time, or once nothing else is
        if not self.legal_moves():
            return Status.STUCK
        return Status.IN_PLAY

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Board):
            return NotImplemented
        return self.key() == other.key()

    def __hash__(self) -> int:
        return hash(self.key())

    def key(self) -> tuple[object, ...]:
        """Return a hashable key of the position (not of the move stack)."""
        return (
            self.variant.name,
            self.rule.value,
            tuple(tuple(col) for col in self.columns),
            tuple(self.down),
            tuple(self.stock),
            tuple(self.cells),
            tuple(self.foundations),
        )

    def __repr__(self) -> str:
        return f"Board({self.text()!r})"

    def text(self) -> str:
        """Return the position in the one-line notation (``docs/notation.md``).

        Its parser, which also checks that a position is possible, is
        :func:`protocol.game.notation.board_from_text`.
        """
        columns = []
        for col, down in zip(self.columns, self.down, strict=True):
            columns.append("".join(_card_text(card, row < down) for row, card in enumerate(col)) or "-")
        if self.variant.cells:
            reserve = ",".join(card_text(c) if c != NO_CARD else "-" for c in self.cells)
        else:
            reserve = "".join(_card_text(card, True) for card in self.stock) or "-"
        foundations = "".join(SUITS[suit] for suit in self.foundations) or "-"
        return " ".join((self.variant.name, self.rule.value, "/".join(columns), reserve, foundations))

    # -- move generation ----------------------------------------------------------------

    def legal_moves(self) -> list[Move]:
        """Return every legal move, deterministically ordered, the reserve deal last."""
        columns = self.columns
        where = self._where
        hidden = self._hidden
        count = len(columns)
        moves: list[Move] = []
        empty: list[int] = []
        for target in range(count):
            col = columns[target]
            if not col:
                empty.append(target)
                continue
            top = col[-1]
            if not top % 13:
                continue  # nothing goes on an Ace
            card = top - 1
            source = where[card]
            if source < count:
                if source != target and not hidden[card]:
                    moves.append(Move(card, source, target))
            elif source < STOCK:
                moves.append(Move(card, source, target))
        if empty:
            self._moves_into_empty(empty, moves)
        if self.stock and (self.rule is ReserveRule.ANY_TIME or not moves):
            moves.append(DEAL)
        return moves

    def _moves_into_empty(self, empty: list[int], moves: list[Move]) -> None:
        columns = self.columns
        count = len(columns)
        if self.variant.any_card_fills_empty:
            leaders: list[tuple[int, int]] = []
            for source, col in enumerate(columns):
                for row in range(max(self.down[source], 1), len(col)):
                    leaders.append((col[row], source))
            for index, card in enumerate(self.cells):
                if card != NO_CARD:
                    leaders.append((card, CELL_BASE + index))
        else:
            leaders = []
            for king in _KINGS:
                source = self._where[king]
                if source < count:
                    if self._hidden[king] or columns[source][0] == king:
                        continue  # face down, or already heads its column
                elif source >= STOCK:
                    continue
                leaders.append((king, source))
        for card, source in leaders:
            for target in empty:
                moves.append(Move(card, source, target))

    def explain(self, move: Move) -> str | None:
        """Return why ``move`` is illegal here, or ``None`` when it is legal.

        The reasons never reveal a face-down card: a card that is face down and a card
        that is elsewhere get the same answer.
        """
        if move.is_deal:
            if not self.stock:
                if not self.variant.stock:
                    return f"{self.variant.title} has no reserve to deal"
                return "the reserve has already been dealt"
            if self.rule is ReserveRule.WHEN_STUCK and any(not m.is_deal for m in self.legal_moves()):
                return "under the when-stuck rule the reserve is dealt only when no other move exists"
            return None
        card, source, target = move
        count = len(self.columns)
        if not isinstance(card, int) or not 0 <= card < 52:
            return "that is not a card"
        if not isinstance(target, int) or not 0 <= target < count:
            return f"there is no column {target + 1}: columns are 1 to {count}"
        name = card_text(card)
        if source >= CELL_BASE:
            cell = source - CELL_BASE
            if cell >= len(self.cells):
                return f"there is no reserve cell {source_text(source)}"
            if self.cells[cell] != card:
                return f"reserve cell {source_text(source)} does not hold {name}"
        elif not 0 <= source < count:
            return f"there is no column {source + 1}: columns are 1 to {count}"
        elif self._where[card] != source or self._hidden[card]:
            return f"there is no face-up {name} in column {source + 1}"
        if source == target:
            return f"{name} is already in column {target + 1}"
        column = self.columns[target]
        if not column:
            if not self.variant.accepts_on_empty(card):
                return "only a King (with the cards on it) can fill an empty column"
            if source < count and self.columns[source][0] == card:
                return "moving a whole column into an empty column changes nothing"
            return None
        top = column[-1]
        if not top % 13:
            return f"nothing can go on an Ace ({card_text(top)} is exposed in column {target + 1})"
        if card % 13 == 12:
            return f"a King cannot go on another card ({name} onto {card_text(top)})"
        if top != card + 1:
            return f"{name} cannot go on {card_text(top)}: it needs the {card_text(card + 1)} exposed"
        return None

    def is_legal(self, move: Move) -> bool:
        """Tell whether ``move`` is legal in this position."""
        return self.explain(move) is None

    # -- making and unmaking moves ------------------------------------------------------

    def play(self, move: Move) -> None:
        """Check ``move`` and push it, or raise :class:`IllegalMove` saying why not."""
        reason = self.explain(move)
        if reason is not None:
            raise IllegalMove(reason)
        self.push(move)

    def push(self, move: Move) -> None:
        """Apply a legal ``move`` (unchecked: use :meth:`play` for untrusted moves)."""
        collected: list[tuple[int, bool]] = []
        if move.card < 0:
            self._push_deal(collected)
            return
        card, source, target = move
        where = self._where
        columns = self.columns
        flipped = False
        if source >= CELL_BASE:
            self.cells[source - CELL_BASE] = NO_CARD
            columns[target].append(card)
            where[card] = target
            size = 1
        else:
            col = columns[source]
            row = col.index(card)
            group = col[row:]
            del col[row:]
            if row and row == self.down[source]:
                self.down[source] = row - 1
                self._hidden[col[-1]] = False
                flipped = True
            columns[target] += group
            for moved in group:
                where[moved] = target
            size = len(group)
            self._collect(target, collected)
            self._collect(source, collected)
            self._stack.append((move, size, flipped, collected))
            return
        self._collect(target, collected)
        self._stack.append((move, size, flipped, collected))

    def _push_deal(self, collected: list[tuple[int, bool]]) -> None:
        stock = self.stock
        dealt = len(stock)
        for index, card in enumerate(stock):
            self.columns[index].append(card)
            self._where[card] = index
            self._hidden[card] = False
        self.stock = []
        for index in range(dealt):
            self._collect(index, collected)
        self._stack.append((DEAL, dealt, False, collected))

    def _collect(self, index: int, collected: list[tuple[int, bool]]) -> None:
        col = self.columns[index]
        while len(col) >= 13:
            ace = col[-1]
            if ace % 13:
                return
            run = _RUNS[ace // 13]
            if col[-13:] != run or len(col) - 13 < self.down[index]:
                return
            del col[-13:]
            for card in run:
                self._where[card] = FOUNDATION
            self.foundations.append(ace // 13)
            flipped = False
            if col and len(col) == self.down[index]:
                self.down[index] -= 1
                self._hidden[col[-1]] = False
                flipped = True
            collected.append((index, flipped))

    def pop(self) -> Move:
        """Take back the last move exactly and return it."""
        move, size, flipped, collected = self._stack.pop()
        columns = self.columns
        where = self._where
        for index, was_flipped in reversed(collected):
            col = columns[index]
            if was_flipped:
                self._hidden[col[-1]] = True
                self.down[index] += 1
            run = _RUNS[self.foundations.pop()]
            col += run
            for card in run:
                where[card] = index
        if move.card < 0:
            stock = [columns[index].pop() for index in range(size)]
            for card in stock:
                where[card] = STOCK
                self._hidden[card] = True
            self.stock = stock
            return move
        card, source, target = move
        if source >= CELL_BASE:
            columns[target].pop()
            self.cells[source - CELL_BASE] = card
            where[card] = source
            return move
        dst = columns[target]
        group = dst[-size:]
        del dst[-size:]
        col = columns[source]
        if flipped:
            self._hidden[col[-1]] = True
            self.down[source] += 1
        col += group
        for moved in group:
            where[moved] = source
        return move

    def replay(self, moves: Iterable[Move]) -> None:
        """Play ``moves`` in order, checking each; raise :class:`IllegalMove` at the first bad one."""
        for number, move in enumerate(moves, start=1):
            reason = self.explain(move)
            if reason is not None:
                raise IllegalMove(f"move {number} ({move}) is illegal: {reason}")
            self.push(move)


def _card_text(card: int, hidden: bool) -> str:
    """Write a card as the notation does: lower case when it is face down."""
    text = card_text(card)
    return text.lower() if hidden else text
