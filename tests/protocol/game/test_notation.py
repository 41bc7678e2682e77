"""Card, move and position notations: round trips and clear errors for malformed input."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from protocol.game import (
    CELL_BASE,
    DEAL,
    VARIANTS,
    Board,
    CardError,
    Move,
    MoveError,
    NotationError,
    board_from_text,
    board_to_text,
    card_from_text,
    card_text,
    move_from_json,
    move_from_text,
    move_json,
    move_text,
)

SEVEN_H = card_from_text("7H")
KING_S = card_from_text("KS")
DEAL_ONE = (
    "scorpion any-time jd5hkhAS4HTH8D/2dkd3hAHAC8HQS/9hkc2s3C4D2C6C/jc9sks4C7SJH3D/"
    "5D5S9D5C3S7D8C/7HADQDTSTD6DTC/7CQCJSQH4S8S6S 9c2h6h -"
)
MICE = "three-blind-mice any-time KHQHJHTH9H8H7H6H5H/3H2HAH/-/QSJS/TS9S8S/7S6S5S4S3S/2SAS/-/-/- KS,4H CD"


# -- cards -------------------------------------------------------------------------------


def test_card_text_is_rank_then_suit_with_suits_in_order_c_d_h_s() -> None:
    assert [card_text(c) for c in (0, 12, 13, 26, 39, 51)] == ["AC", "KC", "AD", "AH", "AS", "KS"]
    assert card_text(SEVEN_H) == "7H"
    assert card_text(card_from_text("TD")) == "TD"


def test_every_card_round_trips_through_its_text_in_either_case() -> None:
    for card in range(52):
        text = card_text(card)
        assert card_from_text(text) == card
        assert card_from_text(text.lower()) == card


@pytest.mark.parametrize("text", ["", "7", "10H", "1H", "7X", "H7", "7H ", "ZZ"])
def test_malformed_card_text_raises_card_error(text: str) -> None:
    with pytest.raises(CardError, match="is not a card"):
        card_from_text(text)


@pytest.mark.parametrize("number", [-1, 52, 100])
def test_card_number_outside_the_pack_raises_card_error(number: int) -> None:
    with pytest.raises(CardError, match="is not a card number"):
        card_text(number)


# -- moves -------------------------------------------------------------------------------


def test_move_text_names_the_card_and_columns_from_one() -> None:
    assert move_text(Move(SEVEN_H, 1, 4)) == "7H:2-5"
    assert move_text(Move(KING_S, CELL_BASE, 3)) == "KS:R1-4"
    assert move_text(Move(KING_S, CELL_BASE + 1, 9)) == "KS:R2-10"
    assert move_text(DEAL) == "deal"
    assert str(Move(SEVEN_H, 1, 4)) == "7H:2-5"


def test_move_text_parses_back() -> None:
    assert move_from_text("7H:2-5") == Move(SEVEN_H, 1, 4)
    assert move_from_text("7h:2-5") == Move(SEVEN_H, 1, 4)
    assert move_from_text("  7H:2-5\n") == Move(SEVEN_H, 1, 4)
    assert move_from_text("KS:R1-4") == Move(KING_S, CELL_BASE, 3)
    assert move_from_text("KS:R2-10") == Move(KING_S, CELL_BASE + 1, 9)
    assert move_from_text("deal") == DEAL
    assert move_from_text("DEAL") == DEAL


def test_move_json_form() -> None:
    assert move_json(Move(SEVEN_H, 1, 4)) == {"card": "7H", "from": 2, "to": 5}
    assert move_json(Move(KING_S, CELL_BASE, 3)) == {"card": "KS", "from": "R1", "to": 4}
    assert move_json(DEAL) == {"deal": True}
    assert move_from_json({"card": "7H", "from": 2, "to": 5}) == Move(SEVEN_H, 1, 4)
    assert move_from_json({"card": "ks", "from": "R2", "to": 4}) == Move(KING_S, CELL_BASE + 1, 3)
    assert move_from_json({"deal": True}) == DEAL


def every_move_of_some_games() -> list[Move]:
    moves = {DEAL}
    rng = random.Random(3)
    for variant in VARIANTS:
        for number in (1, 2, 3, 40000):
            board = Board.new(variant, number)
            for _ in range(40):
                legal = board.legal_moves()
                moves.update(legal)
                if not legal:
                    break
                board.push(rng.choice(legal))
    sources = (0, 9, CELL_BASE, CELL_BASE + 1)
    moves.update(Move(card, source, target) for card in range(52) for source in sources for target in (0, 9))
    return sorted(moves)


def test_every_move_round_trips_through_text_and_json() -> None:
    moves = every_move_of_some_games()
    assert any(m.source >= CELL_BASE for m in moves) and DEAL in moves
    for move in moves:
        assert move_from_text(move_text(move)) == move
        assert move_from_json(json.loads(json.dumps(move_json(move)))) == move


@pytest.mark.parametrize(
    "text",
    [
        "",
        "7H",
        "7H:2",
        "7H:2-",
        "7H-2-5",
        "7H:2:5",
        "7H 2-5",
        "7H:0-5",
        "7H:2-0",
        "7H:R0-3",
        "7H:2-R1",
        "7H:123-4",
        "7H:2-345",
        "XX:1-2",
        "1H:1-2",
        "deals",
        "deal 1",
        "7H:-1-2",
    ],
)
def test_malformed_move_text_raises_move_error(text: str) -> None:
    with pytest.raises(MoveError):
        move_from_text(text)


def test_move_errors_say_what_a_move_looks_like() -> None:
    with pytest.raises(MoveError, match=r"write CARD:FROM-TO such as '7H:2-5' \(or 'deal'\)"):
        move_from_text("7H to 5")
    with pytest.raises(MoveError, match="columns are numbered from 1"):
        move_from_text("7H:0-5")
    with pytest.raises(MoveError, match="cells are R1 and R2"):
        move_from_text("7H:R0-5")
    with pytest.raises(MoveError, match="'XX' is not a card"):
        move_from_text("XX:1-2")
    with pytest.raises(MoveError, match="a move must be text, not int"):
        move_from_text(7)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "data",
    [
        None,
        "7H:2-5",
        ["7H", 2, 5],
        {},
        {"deal": False},
        {"deal": 1},
        {"deal": True, "card": "7H"},
        {"card": "7H", "from": 2},
        {"card": "7H", "from": 2, "to": 5, "extra": 1},
        {"card": 7, "from": 2, "to": 5},
        {"card": "7X", "from": 2, "to": 5},
        {"card": "7H", "from": True, "to": 5},
        {"card": "7H", "from": 0, "to": 5},
        {"card": "7H", "from": "2", "to": 5},
        {"card": "7H", "from": 2.0, "to": 5},
        {"card": "7H", "from": "R", "to": 5},
        {"card": "7H", "from": "R0", "to": 5},
        {"card": "7H", "from": "Rx", "to": 5},
        {"card": "7H", "from": 2, "to": True},
        {"card": "7H", "from": 2, "to": 0},
        {"card": "7H", "from": 2, "to": "5"},
        {"card": "7H", "from": 2, "to": "R1"},
    ],
)
def test_malformed_move_json_raises_move_error(data: object) -> None:
    with pytest.raises(MoveError):
        move_from_json(data)


# -- positions ---------------------------------------------------------------------------


def test_deal_one_reads_as_documented() -> None:
    board = Board.new("scorpion", 1)
    assert board_to_text(board) == DEAL_ONE
    assert board_from_text(DEAL_ONE).key() == board.key()


def test_position_text_records_variant_rule_columns_reserve_and_foundations() -> None:
    board = board_from_text(MICE)
    assert board.variant.name == "three-blind-mice"
    assert board.rule.value == "any-time"
    assert board.columns[2] == []
    assert [card_text(c) for c in board.cells] == ["KS", "4H"]
    assert board.foundations == [0, 1]
    assert board_to_text(board) == MICE


def test_openings_of_every_variant_round_trip() -> None:
    for variant in VARIANTS:
        for rule in ("any-time", "when-stuck"):
            for number in (1, 32000, 32001, 10**20 - 1):
                board = Board.new(variant, number, rule)
                text = board_to_text(board)
                assert board_from_text(text).key() == board.key()
                assert text.split(" ")[:2] == [variant, rule]


def test_surrounding_whitespace_is_ignored() -> None:
    assert board_from_text(f"  {DEAL_ONE}\n").key() == Board.new("scorpion", 1).key()


def replace_field(text: str, index: int, value: str) -> str:
    fields = text.split(" ")
    fields[index] = value
    return " ".join(fields)


MALFORMED = {
    "four fields": (" ".join(DEAL_ONE.split(" ")[:4]), "a position has 5 fields"),
    "six fields": (DEAL_ONE + " extra", "a position has 5 fields"),
    "two spaces": (DEAL_ONE.replace(" ", "  ", 1), "a position has 5 fields"),
    "bad variant": (replace_field(DEAL_ONE, 0, "spider"), "unknown variant 'spider'"),
    "bad rule": (replace_field(DEAL_ONE, 1, "never"), "unknown reserve rule 'never'"),
    "six columns": (DEAL_ONE.replace("/7CQCJSQH4S8S6S", ""), "Scorpion has 7 columns, the tableau lists 6"),
    "duplicated card": (DEAL_ONE.replace("8D/", "8S/", 1), "8S appears twice"),
    "missing card": (DEAL_ONE.replace("TH8D/", "TH/", 1), "the position lacks 8D"),
    "face down above face up": (
        DEAL_ONE.replace("jd5hkhAS", "jd5hKHas"),
        "face-down card above a face-up one",
    ),
    "column all face down": (DEAL_ONE.replace("7CQCJSQH4S8S6S", "7cqcjsqh4s8s6s"), "has no face-up card"),
    "upper case reserve": (replace_field(DEAL_ONE, 3, "9C2H6H"), "write them in lower case"),
    "mixed case reserve": (replace_field(DEAL_ONE, 3, "9c2H6h"), "write them in lower case"),
    "short reserve": (replace_field(DEAL_ONE, 3, "9c2h"), "the reserve holds 3 cards or none"),
    "mixed case card": (DEAL_ONE.replace("AS4H", "As4H"), "mixes upper and lower case"),
    "odd characters": (DEAL_ONE.replace("8D/", "8D7/", 1), "odd number of characters"),
    "not a card": (DEAL_ONE.replace("TH8D", "1H8D"), "'1H' in column 1 is not a card"),
    "bad foundation suit": (replace_field(MICE, 4, "CX"), "'X' is not a suit"),
    "foundation twice": (replace_field(MICE, 4, "CC"), "listed twice"),
    "three cells": (replace_field(MICE, 3, "KS,4H,-"), "has 2 reserve cells, not 3"),
    "face-down cell": (replace_field(MICE, 3, "ks,4H"), "a reserve cell holds one face-up card"),
    "two cards in a cell": (replace_field(MICE, 3, "KS4H,-"), "a reserve cell holds one face-up card"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_position_raises_notation_error(case: str) -> None:
    text, message = MALFORMED[case]
    with pytest.raises(NotationError, match=message):
        board_from_text(text)


def test_position_must_be_text() -> None:
    with pytest.raises(NotationError, match="a position must be text"):
        board_from_text(None)  # type: ignore[arg-type]


def test_notation_error_is_a_value_error() -> None:
    assert issubclass(NotationError, ValueError)
    assert issubclass(MoveError, ValueError)
    assert issubclass(CardError, ValueError)


def test_every_position_written_in_the_notation_document_parses_and_round_trips() -> None:
    doc = Path(__file__).resolve().parents[3] / "docs" / "notation.md"
    lines = [line for line in doc.read_text(encoding="utf-8").splitlines() if line.split(" ")[0] in VARIANTS]
    assert len(lines) >= 5
    for line in lines:
        assert board_to_text(board_from_text(line)) == line
    assert board_from_text(lines[0]).key() == Board.new("scorpion", 1).key()
