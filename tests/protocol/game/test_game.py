"""Games: a deal plus a move list, rebuilt, restarted and undone."""

from __future__ import annotations

import random

import pytest

from protocol.game import (
    DEAL,
    Board,
    DealError,
    Game,
    IllegalMove,
    Move,
    ReserveRule,
    VariantError,
    board_to_text,
    hints,
    move_from_text,
    move_text,
)


def random_game(variant: str, number: int, length: int, rule: str = "any-time") -> list[Move]:
    """Return the moves of the first seeded random playout of ``length`` moves on this deal."""
    for seed in range(1000):
        board = Board.new(variant, number, rule)
        rng = random.Random(seed)
        while len(board.move_stack) < length:
            moves = board.legal_moves()
            if not moves:
                break
            board.push(rng.choice(moves))
        if len(board.move_stack) == length:
            return board.move_stack
    raise AssertionError(f"no playout of {variant} {number} lasts {length} moves")


def won_game(variant: str) -> tuple[int, list[Move]]:
    """Return a deal number and the moves of a greedy playout that wins it."""
    rng = random.Random(17)
    for _ in range(200):
        number = rng.randrange(1, 10**9)
        board = Board.new(variant, number)
        while board.legal_moves() and len(board.move_stack) < 400:
            ranked = hints(board)
            board.push(ranked[0] if rng.random() < 0.8 else rng.choice(ranked))
        if board.is_won():
            return number, board.move_stack
    raise AssertionError(f"no greedy playout of {variant} won")


# -- new and rebuild ---------------------------------------------------------------------


def test_new_game_starts_from_the_deal() -> None:
    game = Game.new("scorpion", 1)
    assert game.board.key() == Board.new("scorpion", 1).key()
    assert game.moves == []
    assert (game.variant.name, game.number, game.rule) == ("scorpion", 1, ReserveRule.ANY_TIME)


def test_new_game_checks_variant_number_and_rule() -> None:
    with pytest.raises(VariantError):
        Game.new("spider", 1)
    with pytest.raises(DealError):
        Game.new("scorpion", 0)
    with pytest.raises(DealError):
        Game.new("scorpion", True)
    with pytest.raises(VariantError):
        Game.new("scorpion", 1, "sometimes")


def test_rebuild_of_a_200_move_game_reaches_the_same_position() -> None:
    moves = random_game("wasp", 4242, 200)
    played = Board.new("wasp", 4242)
    for move in moves:
        played.play(move)
    game = Game.rebuild("wasp", 4242, moves)
    assert len(game.moves) == 200
    assert game.moves == moves
    assert game.board.key() == played.key()
    assert board_to_text(game.board) == board_to_text(played)


def test_rebuild_accepts_the_moves_written_as_text() -> None:
    moves = random_game("scorpion", 1, 25)
    game = Game.rebuild("scorpion", 1, [move_from_text(move_text(m)) for m in moves])
    assert game.moves == moves


@pytest.mark.parametrize("variant", ["scorpion", "scorpion-ii", "wasp", "three-blind-mice"])
def test_rebuild_of_a_won_game_is_won(variant: str) -> None:
    number, moves = won_game(variant)
    game = Game.rebuild(variant, number, moves)
    assert game.board.is_won()
    summary = game.summary(100)
    assert summary.state == "won"
    assert summary.score == 400 + 500 + 1100
    assert summary.moves == len(moves)


def test_rebuild_names_the_first_illegal_move() -> None:
    moves = random_game("scorpion", 5, 40)
    bad = list(moves)
    bad[20] = moves[19]  # playing the same move twice in a row is never legal
    with pytest.raises(IllegalMove, match=rf"^move 21 \({move_text(moves[19])}\) is illegal: "):
        Game.rebuild("scorpion", 5, bad)


def test_rebuild_checks_the_reserve_rule() -> None:
    opening = Board.new("scorpion", 3, "when-stuck")
    assert opening.legal_moves() and DEAL not in opening.legal_moves()
    assert Game.rebuild("scorpion", 3, [DEAL]).moves == [DEAL]
    with pytest.raises(IllegalMove, match="under the when-stuck rule"):
        Game.rebuild("scorpion", 3, [DEAL], "when-stuck")


# -- play, undo, restart -----------------------------------------------------------------


def test_play_refuses_an_illegal_move_and_changes_nothing() -> None:
    game = Game.new("scorpion", 1)
    before = board_to_text(game.board)
    with pytest.raises(IllegalMove, match="7H cannot go on 8D"):
        game.play(move_from_text("7H:6-1"))
    assert board_to_text(game.board) == before
    assert game.moves == []


def test_undo_takes_back_the_last_move() -> None:
    game = Game.new("scorpion", 1)
    opening = board_to_text(game.board)
    game.play(move_from_text("7D:5-1"))
    game.play(DEAL)
    assert game.undo() == DEAL
    assert game.moves == [move_from_text("7D:5-1")]
    assert game.undo() == move_from_text("7D:5-1")
    assert board_to_text(game.board) == opening


def test_undo_with_no_moves_raises_index_error() -> None:
    game = Game.new("scorpion", 1)
    with pytest.raises(IndexError, match="there is no move to undo"):
        game.undo()
    game.play(move_from_text("7D:5-1"))
    game.undo()
    with pytest.raises(IndexError):
        game.undo()
    assert game.board.key() == Board.new("scorpion", 1).key()


def test_restart_returns_to_the_opening_of_the_same_deal() -> None:
    moves = random_game("three-blind-mice", 9, 20)
    game = Game.rebuild("three-blind-mice", 9, moves, "when-stuck")
    game.restart()
    assert game.moves == []
    assert game.board.key() == Board.new("three-blind-mice", 9, "when-stuck").key()
    assert game.board.rule is ReserveRule.WHEN_STUCK
    game.play(moves[0])
    assert game.moves == [moves[0]]


def test_summary_counts_moves_runs_and_what_is_left() -> None:
    game = Game.new("scorpion", 1)
    assert game.summary(0).as_dict() == {
        "score": 0,
        "runs": 0,
        "face_down_left": 12,
        "moves": 0,
        "reserve_left": 3,
        "state": "in_play",
    }
    game.play(DEAL)
    summary = game.summary(5)
    assert (summary.moves, summary.reserve_left) == (1, 0)
