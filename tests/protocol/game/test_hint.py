"""Hints: every legal move exactly once, best first by the documented heuristic."""

from __future__ import annotations

import random

import pytest

from protocol.game import (
    DEAL,
    VARIANTS,
    Board,
    board_from_text,
    board_to_text,
    hint_scores,
    hints,
    move_from_text,
)
from tests.protocol.game.test_rules import with_hidden_cards_shuffled

RUN = "scorpion any-time KHQHJHTH9H8H7H6H5H4H3H2H/ASAH/KSQSJSTS9S8S/7S6S5S4S3S2S/-/-/- - CD"
RESERVE = "scorpion any-time -/KS/QSJS/TS9S8S7S6S5S4S3S2SAS/KHQHJHTH9H8H7H6H5H/AH/- 4h3h2h CD"
STUCK = "scorpion any-time 3h4h5hKS/qsjsts9H/6h7h8h9S/8s7s6sTHJH/QHKHAS/3S2HAH/2S4S5S - CD"


def sample_positions() -> list[Board]:
    boards = [board_from_text(text) for text in (RUN, RESERVE, STUCK)]
    rng = random.Random(5)
    for variant in sorted(VARIANTS):
        for rule in ("any-time", "when-stuck"):
            board = Board.new(variant, rng.randrange(1, 10**12), rule)
            for _ in range(rng.randrange(0, 40)):
                moves = board.legal_moves()
                if not moves:
                    break
                board.push(rng.choice(moves))
            boards.append(board.copy(stack=False))
    return boards


@pytest.mark.parametrize("board", sample_positions(), ids=board_to_text)
def test_every_legal_move_is_hinted_exactly_once(board: Board) -> None:
    listed = hints(board)
    assert len(listed) == len(set(listed))
    assert sorted(listed) == sorted(board.legal_moves())
    assert [move for move, _ in hint_scores(board)] == listed


@pytest.mark.parametrize("board", sample_positions(), ids=board_to_text)
def test_hints_leave_the_board_as_they_found_it(board: Board) -> None:
    before = (board.key(), board.move_stack, board._where[:], board._hidden[:])
    hint_scores(board)
    assert (board.key(), board.move_stack, board._where[:], board._hidden[:]) == before


def test_run_completing_move_ranks_first() -> None:
    board = board_from_text(RUN)
    ranked = hint_scores(board)
    # AH: +1000 for the run, +30 for the emptied column, -110 for the eleven links it takes
    # away. 7S and AS each empty a column (+30) and add a link (+10): a tie, kept in the
    # generator's order (by target column).
    assert [(str(move), score) for move, score in ranked] == [
        ("AH:2-1", 1000 + 30 - 110),
        ("7S:4-3", 40),
        ("AS:2-4", 40),
    ]


def test_deal_ranks_below_the_other_moves() -> None:
    board = board_from_text(RESERVE)
    ranked = hint_scores(board)
    assert ranked[-1] == (DEAL, -50)
    # QS (carrying JS) empties column 3 and lies on KS; TS empties column 4 and lies on JS.
    assert [(str(move), score) for move, score in ranked] == [("QS:3-2", 40), ("TS:4-3", 40), ("deal", -50)]


def test_hint_does_not_know_that_the_deal_would_finish_a_run() -> None:
    # The reserve's AH would finish the hearts, but the reserve is face down: the hint
    # must not know it, so the deal keeps its flat -50.
    board = board_from_text(
        "scorpion any-time KHQHJHTH9H8H7H6H5H4H3H2H/KSQSJSTS9S8S/7S6S5S4S/-/-/-/3S ah2sas CD"
    )
    assert hint_scores(board)[-1] == (DEAL, -50)


def test_hint_does_not_know_the_card_a_move_turns_up() -> None:
    # Moving 9S turns up 2H in one position and JH in the other; 2H would lie on the
    # face-down 3H. Both moves score the same +100 (turn up) +10 (9S onto TS).
    first = board_from_text(
        "scorpion-ii any-time 6d8h2h9HTD6C2CAC/3d8sjh9S5CJDAS/kd4s4h7S9CQD4C/3C5D3S9D4D2STS/"
        "5H8CADJC5S7CKS/KC7DTCQSJS6HKH/8D2D6SQCAHTH 7h3hqh -"
    )
    second = board_from_text(
        "scorpion-ii any-time 8h7h4h9HTD6C2CAC/jh3h2h9S5CJDAS/3d4s8s7S9CQD4C/3C5D3S9D4D2STS/"
        "5H8CADJC5S7CKS/KC7DTCQSJS6HKH/8D2D6SQCAHTH 6dqhkd -"
    )
    assert hint_scores(first) == hint_scores(second)
    assert hint_scores(first)[0] == (move_from_text("9S:2-4"), 110)


@pytest.mark.parametrize("seed", range(4))
def test_hints_do_not_depend_on_face_down_cards_or_the_reserve(seed: int) -> None:
    rng = random.Random(seed)
    checked = 0
    for _ in range(60):
        variant = rng.choice(sorted(VARIANTS))
        board = Board.new(variant, rng.randrange(1, 10**20), rng.choice(("any-time", "when-stuck")))
        for _ in range(rng.randrange(0, 25)):
            moves = board.legal_moves()
            if not moves:
                break
            board.push(rng.choice(moves))
        board = board.copy(stack=False)
        for shuffle_seed in range(3):
            other = with_hidden_cards_shuffled(board, shuffle_seed)
            assert hint_scores(other) == hint_scores(board), board_to_text(board)
            checked += other.key() != board.key()
    assert checked > 100


def test_turning_up_a_card_beats_a_plain_move() -> None:
    board = board_from_text(
        "scorpion any-time ah2h7H/8H/KSQS/JS8S/TS9S/2S3S4S5S6S7SAS/3H4H5H6H9HTHJHQHKH - CD"
    )
    ranked = hint_scores(board)
    assert ranked[0] == (move_from_text("7H:1-2"), 100 + 10)


def test_hints_are_deterministic() -> None:
    for board in sample_positions():
        assert hints(board) == hints(board.copy())


def test_stuck_position_has_no_hint() -> None:
    assert hints(board_from_text(STUCK)) == []
