"""The rules of Scorpion and its variants, as a pure, deterministic engine.

Typical use::

    from protocol.game import Board, move_from_text
    board = Board.new("scorpion", 1)
    board.play(move_from_text("7D:5-1"))
    board.pop()
"""

from .board import FOUNDATION, NO_CARD, STOCK, Board, IllegalMove, Status
from .card import CardError, card_from_text, card_text
from .deal import (
    COMPETITIVE_MIN,
    MAX_NUMBER,
    Deal,
    DealError,
    check_number,
    deal,
    draw_competitive_number,
)
from .game import Game
from .hint import hint_scores, hints
from .move import (
    CELL_BASE,
    DEAL,
    Move,
    MoveError,
    move_from_json,
    move_from_text,
    move_json,
    move_text,
)
from .notation import NotationError, board_from_text, board_to_text
from .score import score, time_bonus
from .variant import VARIANTS, ReserveRule, Variant, VariantError, get_variant
from .view import BoardView, Summary, player_view, spectator_view, summarize, summary_data, view_data

__all__ = [
    "CELL_BASE",
    "COMPETITIVE_MIN",
    "DEAL",
    "FOUNDATION",
    "MAX_NUMBER",
    "NO_CARD",
    "STOCK",
    "VARIANTS",
    "Board",
    "BoardView",
    "CardError",
    "Deal",
    "DealError",
    "Game",
    "IllegalMove",
    "Move",
    "MoveError",
    "NotationError",
    "ReserveRule",
    "Status",
    "Summary",
    "Variant",
    "VariantError",
    "board_from_text",
    "board_to_text",
    "card_from_text",
    "card_text",
    "check_number",
    "deal",
    "draw_competitive_number",
    "get_variant",
    "hint_scores",
    "hints",
    "move_from_json",
    "move_from_text",
    "move_json",
    "move_text",
    "player_view",
    "score",
    "spectator_view",
    "summarize",
    "summary_data",
    "time_bonus",
    "view_data",
]
