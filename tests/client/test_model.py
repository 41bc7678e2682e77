"""The local model built from a player's view agrees with the real board (no server needed)."""

from __future__ import annotations

import random

import pytest

from client.model import ViewError, board_from_view, legal_targets
from protocol.game import VARIANTS, Board, hint_scores, player_view


def playouts(variant: str, seed: int, steps: int = 60) -> list[Board]:
    rng = random.Random(seed)
    board = Board.new(variant, rng.randrange(1, 10**9), rng.choice(["any-time", "when-stuck"]))
    boards = [board.copy()]
    for _ in range(steps):
        moves = board.legal_moves()
        if not moves:
            break
        board.push(rng.choice(moves))
        boards.append(board.copy())
    return boards


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_the_model_of_a_view_has_exactly_the_legal_moves_and_hints_of_the_real_board(variant: str) -> None:
    checked = 0
    for seed in range(8):
        for board in playouts(variant, seed):
            model = board_from_view(player_view(board).as_dict(), board.rule)
            assert model.legal_moves() == board.legal_moves(), board
            assert [score for _, score in hint_scores(model)] == [score for _, score in hint_scores(board)]
            for move in board.legal_moves()[:3]:
                assert model.explain(move) is None
            checked += 1
    assert checked > 100


def test_the_model_refuses_a_face_down_card_exactly_like_the_server_would() -> None:
    board = Board.new("scorpion", 1234567890123)
    model = board_from_view(player_view(board).as_dict())
    from protocol.game import Move

    hidden = board.columns[0][0]
    move = Move(hidden, 0, 1)
    assert model.explain(move) == board.explain(move)
    assert model.explain(move) is not None


def test_legal_targets_lists_the_columns_a_picked_card_may_enter() -> None:
    board = Board.new("scorpion", 1234567890123)
    move = next(m for m in board.legal_moves() if not m.is_deal)
    row = board.columns[move.source].index(move.card)
    targets = legal_targets(board_from_view(player_view(board).as_dict()), move.source, row)
    assert move.target in targets and targets[move.target] == move
    assert legal_targets(board, move.source, 0) == {} or board.down[move.source] == 0


def test_a_view_that_hides_the_wrong_number_of_cards_is_refused() -> None:
    view = player_view(Board.new("scorpion", 5)).as_dict()
    view["reserve_left"] = 2
    with pytest.raises(ViewError):
        board_from_view(view)
