"""A game is its deal plus its move list; everything else is derived from the two."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from .board import Board
from .deal import check_number
from .move import Move
from .variant import ReserveRule, Variant, get_variant
from .view import Summary, summarize

__all__ = ["Game"]


@dataclass
class Game:
    """One game of a deal: its rules, its number and the board its moves have built."""

    variant: Variant
    number: int
    rule: ReserveRule
    board: Board = field(repr=False)

    @classmethod
    def new(
        cls,
        variant: Variant | str,
        number: int,
        rule: ReserveRule | str = ReserveRule.ANY_TIME,
    ) -> Game:
        """Start game ``number`` of ``variant``."""
        rules = get_variant(variant)
        reserve_rule = ReserveRule.parse(rule)
        check_number(number)
        return cls(rules, number, reserve_rule, Board.new(rules, number, reserve_rule))

    @classmethod
    def rebuild(
        cls,
        variant: Variant | str,
        number: int,
        moves: Iterable[Move],
        rule: ReserveRule | str = ReserveRule.ANY_TIME,
    ) -> Game:
        """Rebuild a game from its deal and move list, checking every move."""
        game = cls.new(variant, number, rule)
        game.board.replay(moves)
        return game

    @property
    def moves(self) -> list[Move]:
        """Return the moves played, first to last."""
        return self.board.move_stack

    def play(self, move: Move) -> None:
        """Check and play ``move`` (raises :class:`~.board.IllegalMove`)."""
        self.board.play(move)

    def undo(self) -> Move:
        """Take back the last move; raise ``IndexError`` when there is none."""
        if not self.board.depth:
            raise IndexError("there is no move to undo")
        return self.board.pop()

    def restart(self) -> None:
        """Replay: return to the opening position of the same deal."""
        self.board = Board.new(self.variant, self.number, self.rule)

    def summary(self, elapsed_seconds: int) -> Summary:
        """Return score and progress after ``elapsed_seconds`` of play."""
        return summarize(self.board, elapsed_seconds)
