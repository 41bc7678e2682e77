"""One test per sentence of the rules, on positions written by hand in the position notation.

Positions put two suits in the foundations (the ``CD`` or ``HS`` field at the end) so that
only 26 cards need placing; the notation is described in ``docs/notation.md``.
"""

from __future__ import annotations

import random

import pytest

from protocol.game import (
    CELL_BASE,
    DEAL,
    Board,
    IllegalMove,
    Move,
    ReserveRule,
    Status,
    board_from_text,
    board_to_text,
    card_from_text,
    card_text,
    deal,
    move_from_text,
    score,
    summarize,
    time_bonus,
)


def position(text: str) -> Board:
    return board_from_text(text)


def mv(text: str) -> Move:
    return move_from_text(text)


def texts(moves: list[Move]) -> list[str]:
    return [str(move) for move in moves]


def column(board: Board, number: int) -> str:
    """Return column ``number`` (from 1) as notation: face-down cards in lower case."""
    col = board.columns[number - 1]
    down = board.down[number - 1]
    return "".join(card_text(c).lower() if row < down else card_text(c) for row, c in enumerate(col))


# Column 3 holds 7H under QS; column 2 exposes 8H; column 4 exposes 8S.
SEVENS = "scorpion any-time ah2hKS/8H/7HQS/JS8S/TS9S/2S3S4S5S6S7SAS/3H4H5H6H9HTHJHQHKH - CD"
# 7H is face up on a face-down KS; 8H is covered by 9S; 7S lies face down under QS; 8S is exposed.
COVERED = "scorpion any-time ks7H/8H9S/7sQS/8S/AH2H3H4H5H6H9HTHJHQHKH/2S3S4S5S6SAS/JSTS - CD"
# AD exposed in column 2, KC face up on 2D in column 1, three empty columns.
ACES = "scorpion any-time 2DKC/3DAD/QC4D5D6D7D8D9DTDJDQDKD/ACJC2C3C4C5C6C7C8C9CTC/-/-/- - HS"
# Column 4 is empty; KH carries the unordered 5C 9H; KC heads column 6 on its own.
EMPTY = "AC2C/3CKH5C9H/4CQH/-/JH8H7H6H5H4H3H2HAH/KCQCJCTC9C8C7C6C/TH - DS"
# KH down to 2H in column 1, AH exposed in column 2: one move finishes the hearts.
RUN = "scorpion any-time KHQHJHTH9H8H7H6H5H4H3H2H/ASAH/KSQSJSTS9S8S/7S6S5S4S3S2S/-/-/- - CD"
# Every exposed card waits for a card that is face down, in its own column, or not there.
STUCK = "scorpion any-time 3h4h5hKS/qsjsts9H/6h7h8h9S/8s7s6sTHJH/QHKHAS/3S2HAH/2S4S5S - CD"
# The same kind of dead end, with the reserve still to deal.
STUCK_WITH_RESERVE = "3h4h5hKS/qsjsts9H/6h7h8h9S/8s7s6sTHJH/QHKH/3S2H/4S5S ahas2s CD"
# Column 1 is empty, the reserve (4H 3H 2H) is still undealt.
RESERVE = "scorpion any-time -/KS/QSJS/TS9S8S7S6S5S4S3S2SAS/KHQHJHTH9H8H7H6H5H/AH/- 4h3h2h CD"
# Three Blind Mice: KS and 4H wait in the open reserve cells, column 3 is empty.
MICE = "three-blind-mice any-time KHQHJHTH9H8H7H6H5H/3H2HAH/-/QSJS/TS9S8S/7S6S5S4S3S/2SAS/-/-/- KS,4H CD"


# -- where a card may go ------------------------------------------------------------------


def test_seven_of_hearts_goes_on_exposed_eight_of_hearts() -> None:
    board = position(SEVENS)
    board.play(mv("7H:3-2"))
    assert column(board, 2) == "8H7HQS"
    assert column(board, 3) == ""


def test_seven_of_hearts_cannot_go_on_eight_of_spades() -> None:
    board = position(SEVENS)
    with pytest.raises(IllegalMove, match="7H cannot go on 8S: it needs the 8H exposed"):
        board.play(mv("7H:3-4"))
    assert board_to_text(board) == SEVENS


def test_seven_of_hearts_cannot_go_on_a_covered_eight_of_hearts() -> None:
    board = position(COVERED)
    assert board.explain(mv("7H:1-2")) == "7H cannot go on 9S: it needs the 8H exposed"
    assert mv("7H:1-2") not in board.legal_moves()


def test_move_takes_the_card_with_every_card_on_top_of_it() -> None:
    board = position(SEVENS)
    board.play(mv("7S:6-4"))
    assert column(board, 4) == "JS8S7SAS"
    assert column(board, 6) == "2S3S4S5S6S"


def test_group_order_does_not_matter() -> None:
    # 7H leads QS, which is no sequence at all; only 7H has to fit on 8H.
    board = position(SEVENS)
    assert board.is_legal(mv("7H:3-2"))
    board.play(mv("7H:3-2"))
    assert board.columns[1][-2:] == [card_from_text("7H"), card_from_text("QS")]


def test_only_the_leading_card_is_checked_not_the_cards_it_carries() -> None:
    # 8S may leave with nothing on it, and 7S may leave carrying the Ace of spades.
    board = position(SEVENS)
    assert set(texts(board.legal_moves())) == {"QS:3-1", "7H:3-2", "JS:4-3", "7S:6-4", "8S:4-5"}


def test_face_down_card_cannot_be_moved() -> None:
    board = position(COVERED)
    assert board.explain(mv("7S:3-4")) == "there is no face-up 7S in column 3"
    assert all(move.card != card_from_text("7S") for move in board.legal_moves())


def test_card_must_be_in_the_column_it_leaves() -> None:
    board = position(SEVENS)
    assert board.explain(mv("7H:2-2")) == "there is no face-up 7H in column 2"
    assert board.explain(mv("8H:2-2")) == "8H is already in column 2"


def test_nothing_goes_on_an_ace() -> None:
    board = position(ACES)
    # KC is the card just below AD in the engine's numbering: the rule still forbids it.
    assert board.explain(mv("KC:1-2")) == "nothing can go on an Ace (AD is exposed in column 2)"
    assert all(move.target != 1 for move in board.legal_moves())


def test_king_cannot_go_on_a_card() -> None:
    board = position(ACES)
    assert board.explain(mv("KC:1-4")) == "a King cannot go on another card (KC onto TC)"
    assert board.explain(mv("KD:3-4")) == "a King cannot go on another card (KD onto TC)"
    assert board.explain(mv("KC:1-3")) == "a King cannot go on another card (KC onto KD)"


def test_queen_goes_on_the_king_of_its_suit_carrying_everything_on_it() -> None:
    board = position(ACES)
    board.play(mv("QC:3-1"))
    assert column(board, 1) == "2DKCQC4D5D6D7D8D9DTDJDQDKD"
    assert column(board, 3) == ""


# -- empty columns -----------------------------------------------------------------------


def test_lower_card_cannot_enter_empty_column() -> None:
    board = position("scorpion any-time " + EMPTY)
    assert board.explain(mv("QH:3-4")) == "only a King (with the cards on it) can fill an empty column"
    assert board.explain(mv("5C:2-4")) == "only a King (with the cards on it) can fill an empty column"
    assert [m for m in board.legal_moves() if m.target == 3] == [mv("KH:2-4")]


def test_king_fills_empty_column() -> None:
    board = position(ACES)
    board.play(mv("KC:1-5"))
    assert column(board, 5) == "KC"
    assert column(board, 1) == "2D"


def test_king_led_unordered_group_fills_empty_column() -> None:
    board = position("scorpion any-time " + EMPTY)
    board.play(mv("KH:2-4"))
    assert column(board, 4) == "KH5C9H"
    assert column(board, 2) == "3C"


def test_king_heading_its_column_is_not_moved_into_an_empty_column() -> None:
    board = position("scorpion any-time " + EMPTY)
    assert board.explain(mv("KC:6-4")) == "moving a whole column into an empty column changes nothing"
    assert mv("KC:6-4") not in board.legal_moves()


def test_wasp_lets_any_card_with_its_group_fill_an_empty_column() -> None:
    board = position("wasp any-time " + EMPTY)
    into_empty = {str(m) for m in board.legal_moves() if m.target == 3}
    assert {"KH:2-4", "5C:2-4", "QH:3-4", "9H:2-4", "AH:5-4", "2C:1-4", "6C:6-4"} <= into_empty
    board.play(mv("5C:2-4"))
    assert column(board, 4) == "5C9H"
    assert column(board, 2) == "3CKH"


def test_wasp_does_not_move_a_whole_column_into_an_empty_column() -> None:
    board = position("wasp any-time " + EMPTY)
    assert board.explain(mv("TH:7-4")) == "moving a whole column into an empty column changes nothing"
    assert board.explain(mv("AC:1-4")) == "moving a whole column into an empty column changes nothing"


def test_wasp_keeps_the_scorpion_rules_between_cards() -> None:
    board = position("wasp any-time " + EMPTY)
    assert board.explain(mv("TH:7-1")) == "TH cannot go on 2C: it needs the JH exposed"
    assert board.explain(mv("KH:2-7")) == "a King cannot go on another card (KH onto TH)"


# -- turning up and runs -----------------------------------------------------------------


def test_uncovered_face_down_card_turns_up() -> None:
    board = position("scorpion any-time ah2h7H/8H/KSQS/JS8S/TS9S/2S3S4S5S6S7SAS/3H4H5H6H9HTHJHQHKH - CD")
    assert not board.is_face_up(card_from_text("2H"))
    board.play(mv("7H:1-2"))
    assert column(board, 1) == "ah2H"
    assert board.is_face_up(card_from_text("2H"))
    assert board.down[0] == 1
    assert board.face_down_left == 1


def test_undo_re_hides_revealed_card() -> None:
    text = "scorpion any-time ah2h7H/8H/KSQS/JS8S/TS9S/2S3S4S5S6S7SAS/3H4H5H6H9HTHJHQHKH - CD"
    board = position(text)
    board.play(mv("7H:1-2"))
    assert board.pop() == mv("7H:1-2")
    assert board_to_text(board) == text
    assert not board.is_face_up(card_from_text("2H"))


def test_finished_run_goes_to_the_foundations() -> None:
    board = position(RUN)
    board.play(mv("AH:2-1"))
    assert board.foundations == [0, 1, 2]
    assert column(board, 1) == ""
    assert column(board, 2) == "AS"
    assert board.runs == 3


def test_undo_uncollects_run() -> None:
    board = position(RUN)
    board.play(mv("AH:2-1"))
    board.pop()
    assert board_to_text(board) == RUN
    assert board.runs == 2


def test_collecting_a_run_turns_up_the_card_beneath() -> None:
    text = "scorpion any-time 9sKHQHJHTH9H8H7H6H5H4H3H2H/ASAH/KSQSJSTS/8S7S6S5S4S3S2S/-/-/- - CD"
    board = position(text)
    board.play(mv("AH:2-1"))
    assert column(board, 1) == "9S"
    assert board.is_face_up(card_from_text("9S"))
    board.pop()
    assert board_to_text(board) == text
    assert not board.is_face_up(card_from_text("9S"))
    assert board.explain(mv("9S:1-5")) == "there is no face-up 9S in column 1"


def test_run_with_face_down_card_is_not_collected() -> None:
    board = position("scorpion any-time khQHJHTH9H8H7H6H5H4H3H2H/ASAH/KSQSJSTS9S8S/7S6S5S4S3S2S/-/-/- - CD")
    board.play(mv("AH:2-1"))
    assert board.runs == 2
    assert column(board, 1) == "khQHJHTH9H8H7H6H5H4H3H2HAH"


def test_unordered_group_never_completes_a_run() -> None:
    # 6H carries 4H 5H 3H 2H AH: thirteen hearts from KH to an exposed AH, out of order.
    board = position("scorpion any-time KHQHJHTH9H8H7H/6H4H5H3H2HAH/KSQSJSTS9S8S7S/6S5S4S3S2SAS/-/-/- - CD")
    board.play(mv("6H:2-1"))
    assert board.runs == 2
    assert column(board, 1) == "KHQHJHTH9H8H7H6H4H5H3H2HAH"
    board.play(mv("6S:4-3"))
    assert board.foundations == [0, 1, 3]


def test_run_uncovered_by_moving_the_card_on_it_is_collected() -> None:
    board = position("scorpion any-time KHQHJHTH9H8H7H6H5H4H3H2HAH9S/TS/KSQSJS/8S7S6S5S4S3S2SAS/-/-/- - CD")
    board.play(mv("9S:1-2"))
    assert board.foundations == [0, 1, 2]
    assert column(board, 1) == ""
    assert column(board, 2) == "TS9S"


def test_four_runs_win() -> None:
    board = position(RUN)
    board.play(mv("AH:2-1"))
    assert board.status() is Status.IN_PLAY
    board.play(mv("7S:4-3"))
    board.play(mv("AS:2-3"))
    assert board.foundations == [0, 1, 2, 3]
    assert board.is_won()
    assert board.status() is Status.WON
    assert board_to_text(board) == "scorpion any-time -/-/-/-/-/-/- - CDHS"


# -- the reserve -------------------------------------------------------------------------


def test_reserve_deals_one_face_up_card_onto_each_of_columns_one_to_three() -> None:
    board = position("scorpion any-time " + STUCK_WITH_RESERVE)
    board.play(DEAL)
    assert column(board, 1) == "3h4h5hKSAH"
    assert column(board, 2) == "qsjsts9HAS"
    assert column(board, 3) == "6h7h8h9S2S"
    assert board.stock == []
    assert all(board.is_face_up(card_from_text(c)) for c in ("AH", "AS", "2S"))


def test_reserve_deals_onto_empty_column() -> None:
    board = position(RESERVE)
    board.play(DEAL)
    assert column(board, 1) == "4H"
    assert column(board, 2) == "KS3H"
    assert column(board, 3) == "QSJS2H"


def test_reserve_deals_only_once() -> None:
    board = position(RESERVE)
    board.play(DEAL)
    assert DEAL not in board.legal_moves()
    with pytest.raises(IllegalMove, match="the reserve has already been dealt"):
        board.play(DEAL)


def test_undo_deal_puts_the_cards_back_into_the_reserve() -> None:
    board = position(RESERVE)
    board.play(DEAL)
    assert board.pop() == DEAL
    assert board_to_text(board) == RESERVE
    assert DEAL in board.legal_moves()


def test_reserve_may_be_dealt_at_any_time_by_default() -> None:
    board = position(RESERVE)
    assert texts(board.legal_moves()) == ["QS:3-2", "TS:4-3", "deal"]
    assert board.explain(DEAL) is None


def test_reserve_deal_completes_a_run() -> None:
    text = "scorpion any-time KHQHJHTH9H8H7H6H5H4H3H2H/KSQSJSTS9S8S/7S6S5S4S/-/-/-/3S ah2sas CD"
    board = position(text)
    board.play(DEAL)
    assert board.foundations == [0, 1, 2]
    assert column(board, 1) == ""
    board.pop()
    assert board_to_text(board) == text


def test_when_stuck_rule_forbids_the_deal_while_another_move_exists() -> None:
    board = position("scorpion when-stuck KHQHJHTH9H8H7H6H5H4H3H2H/KSQSJSTS9S8S/7S6S5S4S/-/-/-/3S ah2sas CD")
    assert texts(board.legal_moves()) == ["7S:3-2", "3S:7-3"]
    assert board.explain(DEAL) == (
        "under the when-stuck rule the reserve is dealt only when no other move exists"
    )
    with pytest.raises(IllegalMove):
        board.play(DEAL)


def test_when_stuck_rule_allows_the_deal_when_no_other_move_exists() -> None:
    board = position("scorpion when-stuck KHQHJHTH9H8H7H6H5H4H3H2H/KSQSJSTS9S8S/7S6S5S4S/-/-/-/3S ah2sas CD")
    board.play(mv("7S:3-2"))
    board.play(mv("3S:7-2"))
    assert texts(board.legal_moves()) == ["deal"]
    board.play(DEAL)  # AH finishes the hearts, AS lands in the empty column 3
    board.play(mv("AS:3-2"))
    assert board.status() is Status.WON


def test_when_stuck_reserve_is_the_only_move_of_a_dead_end() -> None:
    board = position("scorpion when-stuck " + STUCK_WITH_RESERVE)
    assert board.legal_moves() == [DEAL]
    assert board.status() is Status.IN_PLAY


def test_rule_option_is_part_of_the_position() -> None:
    assert position("scorpion when-stuck " + STUCK_WITH_RESERVE).rule is ReserveRule.WHEN_STUCK
    assert position("scorpion any-time " + STUCK_WITH_RESERVE).rule is ReserveRule.ANY_TIME


# -- status ------------------------------------------------------------------------------


def test_position_without_any_legal_move_is_stuck() -> None:
    board = position(STUCK)
    assert board.legal_moves() == []
    assert board.status() is Status.STUCK


def test_undealt_reserve_keeps_a_dead_end_in_play() -> None:
    board = position("scorpion any-time " + STUCK_WITH_RESERVE)
    assert board.legal_moves() == [DEAL]
    assert board.status() is Status.IN_PLAY


def test_opening_position_is_in_play() -> None:
    assert Board.new("scorpion", 1).status() is Status.IN_PLAY


# -- variants' layouts -------------------------------------------------------------------


def test_scorpion_deals_seven_columns_of_seven_rows_one_to_three_of_columns_one_to_four_face_down() -> None:
    layout = deal("scorpion", 7)
    assert [len(col) for col in layout.columns] == [7] * 7
    assert layout.face_down == (3, 3, 3, 3, 0, 0, 0)
    assert len(layout.reserve) == 3
    board = Board.from_deal(layout)
    assert board.stock == list(layout.reserve)
    assert board.cells == []


def test_scorpion_ii_deals_face_down_cards_only_in_columns_one_to_three() -> None:
    layout = deal("scorpion-ii", 7)
    assert layout.face_down == (3, 3, 3, 0, 0, 0, 0)
    assert layout.columns == deal("scorpion", 7).columns
    board = Board.from_deal(layout)
    assert board.face_down_left == 9
    assert board.is_face_up(layout.columns[3][0])


def test_wasp_deals_like_scorpion() -> None:
    assert deal("wasp", 7).face_down == (3, 3, 3, 3, 0, 0, 0)
    assert deal("wasp", 7).columns == deal("scorpion", 7).columns


def test_three_blind_mice_deals_ten_columns_of_five_and_two_open_cells() -> None:
    layout = deal("three-blind-mice", 7)
    assert [len(col) for col in layout.columns] == [5] * 10
    assert layout.face_down == (0, 0, 0, 0, 0, 0, 0, 3, 3, 3)
    board = Board.from_deal(layout)
    assert board.cells == list(layout.reserve)
    assert len(board.cells) == 2
    assert board.stock == []
    assert all(board.is_face_up(card) for card in board.cells)


def test_three_blind_mice_plays_a_card_from_a_reserve_cell() -> None:
    board = position(MICE)
    board.play(mv("4H:R2-1"))
    assert column(board, 1) == "KHQHJHTH9H8H7H6H5H4H"
    assert board_to_text(board).split(" ")[3] == "KS,-"
    board.play(mv("3H:2-1"))
    assert board.foundations == [0, 1, 2]


def test_three_blind_mice_king_from_a_cell_fills_an_empty_column() -> None:
    board = position(MICE)
    assert [str(m) for m in board.legal_moves() if m.card == card_from_text("KS")] == [
        "KS:R1-3",
        "KS:R1-8",
        "KS:R1-9",
        "KS:R1-10",
    ]
    board.play(mv("KS:R1-3"))
    assert column(board, 3) == "KS"
    board.play(mv("QS:4-3"))
    assert column(board, 3) == "KSQSJS"


def test_three_blind_mice_cells_are_never_a_target() -> None:
    board = position(MICE)
    board.play(mv("4H:R2-1"))
    # Cell R2 is empty now, and still nothing may be put into it.
    into_r2 = Move(card_from_text("QS"), 3, CELL_BASE + 1)
    into_r1 = Move(card_from_text("AS"), 6, CELL_BASE)
    assert board.explain(into_r2) == "there is no column 102: columns are 1 to 10"
    assert board.explain(into_r1) == "there is no column 101: columns are 1 to 10"
    assert all(m.target < 10 for m in board.legal_moves())


def test_three_blind_mice_empty_cell_cannot_be_played_from() -> None:
    board = position(MICE)
    board.play(mv("4H:R2-1"))
    assert board.explain(mv("4H:R2-1")) == "reserve cell R2 does not hold 4H"
    assert board.explain(mv("KS:R3-3")) == "there is no reserve cell R3"


def test_undo_puts_a_card_back_into_its_reserve_cell() -> None:
    board = position(MICE)
    board.play(mv("4H:R2-1"))
    board.play(mv("3H:2-1"))
    board.pop()
    board.pop()
    assert board_to_text(board) == MICE


def test_three_blind_mice_has_no_reserve_deal() -> None:
    board = position(MICE)
    assert DEAL not in board.legal_moves()
    assert board.explain(DEAL) == "Three Blind Mice has no reserve to deal"
    assert Board.new("three-blind-mice", 3).explain(DEAL) == "Three Blind Mice has no reserve to deal"


# -- score -------------------------------------------------------------------------------


def test_each_finished_run_scores_one_hundred() -> None:
    assert score(0, False, 10) == 0
    assert score(3, False, 10) == 300


def test_a_win_adds_five_hundred_and_the_time_bonus() -> None:
    assert score(4, True, 0) == 400 + 500 + 1200
    assert score(4, True, 61) == 400 + 500 + 1139
    assert score(4, True, 1200) == 900
    assert score(4, True, 5000) == 900


def test_time_bonus_loses_a_point_a_whole_second_and_never_goes_negative() -> None:
    assert [time_bonus(s) for s in (0, 1, 2, 1199, 1200, 1201, 10**6)] == [1200, 1199, 1198, 1, 0, 0, 0]


def test_time_must_be_whole_nonnegative_seconds_and_runs_at_most_four() -> None:
    with pytest.raises(TypeError):
        time_bonus(1.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        time_bonus(True)
    with pytest.raises(ValueError):
        time_bonus(-1)
    with pytest.raises(ValueError):
        score(5, True, 0)


def test_summary_scores_the_runs_collected_so_far() -> None:
    board = position(RUN)
    assert summarize(board, 30).score == 200
    board.play(mv("AH:2-1"))
    summary = summarize(board, 30)
    assert summary.as_dict() == {
        "score": 300,
        "runs": 3,
        "face_down_left": 0,
        "moves": 1,
        "reserve_left": 0,
        "state": "in_play",
    }
    board.play(mv("7S:4-3"))
    board.play(mv("AS:2-3"))
    assert summarize(board, 30).as_dict()["score"] == 400 + 500 + 1170
    assert summarize(board, 30).as_dict()["state"] == "won"


# -- explanations never reveal a face-down card ------------------------------------------


def with_hidden_cards_shuffled(board: Board, seed: int) -> Board:
    """Return ``board`` with the face-down and reserve-stock cards dealt among themselves anew."""
    hidden = [c for col, down in zip(board.columns, board.down, strict=True) for c in col[:down]]
    hidden += board.stock
    random.Random(seed).shuffle(hidden)
    cards = iter(hidden)
    columns = [
        [next(cards) if row < down else c for row, c in enumerate(col)]
        for col, down in zip(board.columns, board.down, strict=True)
    ]
    stock = [next(cards) for _ in board.stock]
    return Board(board.variant, columns, board.down, stock, board.cells, board.foundations, board.rule)


ALL_EXPLAIN_CASES = [("scorpion", 1), ("scorpion-ii", 2), ("wasp", 40000), ("three-blind-mice", 5)]


@pytest.mark.parametrize(("variant", "number"), ALL_EXPLAIN_CASES)
def test_explain_messages_never_reveal_a_face_down_card(variant: str, number: int) -> None:
    board = Board.new(variant, number)
    others = [with_hidden_cards_shuffled(board, seed) for seed in range(3)]
    assert all(other.key() != board.key() for other in others), "the shuffle must change something"
    count = len(board.columns)
    hidden = {card_text(c) for c in range(52) if not board.is_face_up(c)}
    sources = [*range(count), CELL_BASE, CELL_BASE + 1]
    checked = 0
    for card in range(52):
        name = card_text(card)
        # A message may name the card the player named and the card it would need.
        named = {name, card_text(card + 1)} if card % 13 != 12 else {name}
        for source in sources:
            for target in range(count):
                move = Move(card, source, target)
                reason = board.explain(move)
                # What the player cannot see makes no difference to the answer...
                assert all(other.explain(move) == reason for other in others), move
                if reason is None:
                    continue
                checked += 1
                # ...and no unseen card is named, except those the player asked about.
                leaked = {word for word in hidden - named if word in reason}
                assert not leaked, (name, source, target, reason)
                if source < count and not board.is_face_up(card):
                    assert reason == f"there is no face-up {name} in column {source + 1}"
    assert checked > 52 * count
    assert all(other.explain(DEAL) == board.explain(DEAL) for other in others)


def test_when_stuck_deal_explanation_does_not_depend_on_the_hidden_cards() -> None:
    board = Board.new("scorpion", 11, ReserveRule.WHEN_STUCK)
    reason = board.explain(DEAL)
    assert reason == "under the when-stuck rule the reserve is dealt only when no other move exists"
    for seed in range(5):
        assert with_hidden_cards_shuffled(board, seed).explain(DEAL) == reason


def test_face_down_card_and_absent_card_get_the_same_explanation() -> None:
    board = position(COVERED)
    # 7S is face down in column 3; 7D is in the foundations; 8S is face up in column 4.
    assert board.explain(mv("7S:3-4")) == "there is no face-up 7S in column 3"
    assert board.explain(mv("7D:3-4")) == "there is no face-up 7D in column 3"
    assert board.explain(mv("8S:3-4")) == "there is no face-up 8S in column 3"
    assert board.explain(mv("KS:1-4")) == "there is no face-up KS in column 1"
