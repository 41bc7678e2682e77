"""The messages of the wire contract: the rules of single fields (names, ids, room codes,
room options, moves, watch targets).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given

from protocol.game.move import CELL_BASE, DEAL, Move
from protocol.wire.error import ErrorCode
from protocol.wire.message import Hello, Options, PlayMove, RoomCreate, RoomJoin, Watch, WireMove, from_dict
from tests.protocol.wire.strategies import error_of, game_moves


@pytest.mark.parametrize("name", ["", "   ", "x" * 25, "a\u0000b", "tab\there", "zero\u200bwidth", "a\nb", 7])
def test_bad_display_names_are_refused(name: Any) -> None:
    error = error_of({"type": "hello", "name": name})
    assert (error.code, error.field) == (ErrorCode.BAD_FIELD, "name")


def test_display_names_are_stripped_and_may_use_any_printable_letters() -> None:
    assert Hello(name="  Zoë 🦂  ").name == "Zoë 🦂"
    assert Hello(name="x" * 24).name == "x" * 24


@pytest.mark.parametrize("game", ["", "x" * 33, "a b", "g/1", "é"])
def test_game_ids_are_short_plain_text(game: str) -> None:
    assert error_of({"type": "replay", "game": game}).field == "game"


def test_room_codes_are_read_in_either_case_and_ambiguous_letters_are_refused() -> None:
    assert RoomJoin(room="abcdef").room == "ABCDEF"
    for bad in ["ABCDE", "ABCDEFG", "ABCDE0", "ABCDEO", "ABCDE1", "ABCDEI", "ABCDEL"]:
        assert error_of({"type": "room_join", "room": bad}).field == "room"


def test_room_options_default_to_undo_and_hints_allowed_and_are_checked() -> None:
    created = from_dict({"type": "room_create", "variant": "wasp"})
    assert created == RoomCreate(variant="wasp", max_players=2, options=Options())
    assert Options() == Options(undo=True, hints=True, spectators=True, reserve_rule="any-time")
    for options, name in [
        ({"spectator_delay": 301}, "spectator_delay"),
        ({"reserve_rule": "never"}, "reserve_rule"),
    ]:
        error = error_of({"type": "room_create", "variant": "wasp", "options": options})
        # The error names the field inside the options (docs/protocol.md, section 2).
        assert (error.code, error.field) == (ErrorCode.BAD_FIELD, f"options.{name}")
        assert f"options.{name}" in error.message
    for players in [1, 9]:
        assert (
            error_of({"type": "room_create", "variant": "wasp", "max_players": players}).field
            == "max_players"
        )
    assert error_of({"type": "room_create", "variant": "klondike"}).field == "variant"


def move_request(move: Any) -> dict[str, Any]:
    """Return the wire map of a move request carrying ``move``."""
    return {"type": "move", "game": "g1", "v": 3, "move": move}


def test_a_move_request_carries_an_engine_move() -> None:
    message = from_dict(move_request({"card": "7h", "from": 2, "to": 5}))
    assert isinstance(message, PlayMove)
    assert message.engine_move == Move(32, 1, 4)
    assert message.to_dict()["move"] == {"card": "7H", "from": 2, "to": 5}
    reserve = from_dict(move_request({"card": "KS", "from": "r2", "to": 10}))
    assert isinstance(reserve, PlayMove) and reserve.engine_move == Move(51, CELL_BASE + 1, 9)
    assert reserve.to_dict()["move"] == {"card": "KS", "from": "R2", "to": 10}
    assert (
        isinstance(dealt := from_dict(move_request({"deal": True})), PlayMove) and dealt.engine_move == DEAL
    )
    assert dealt.to_dict()["move"] == {"deal": True}


@given(game_moves)
def test_an_engine_move_survives_the_wire_form(move: Move) -> None:
    assert WireMove.of(move).to_move() == move


@pytest.mark.parametrize(
    "move",
    [
        {"card": "1H", "from": 2, "to": 5},
        {"card": "7H", "from": 0, "to": 5},
        {"card": "7H", "from": 11, "to": 5},
        {"card": "7H", "from": 2, "to": 11},
        {"card": "7H", "from": "R3", "to": 5},
        {"card": "7H", "from": "R", "to": 5},
        {"card": "7H", "from": True, "to": 5},
        {"card": "7H", "from": 2, "to": 5.0},
        {"card": "7H", "from": 2},
        {"card": "7H", "from": 2, "to": 5, "extra": 1},
        {"card": 7, "from": 2, "to": 5},
        {"deal": False},
        {"deal": True, "card": "7H"},
        {"card": "7H", "from": 2, "to": 2**70},
        "7H:2-5",
        [1, 2, 3],
    ],
)
def test_malformed_moves_are_bad_field_errors(move: Any) -> None:
    error = error_of(move_request(move))
    assert error.code == ErrorCode.BAD_FIELD
    assert error.field is not None and error.field.split(".")[0] == "move"


@pytest.mark.parametrize(
    ("move", "field"),
    [
        ({"card": "1H", "from": 2, "to": 5}, "move.card"),
        ({"card": 7, "from": 2, "to": 5}, "move.card"),
        ({"card": "7H", "from": 0, "to": 5}, "move.from"),
        ({"card": "7H", "from": 11, "to": 5}, "move.from"),
        ({"card": "7H", "from": "R3", "to": 5}, "move.from"),
        ({"card": "7H", "from": 2, "to": 11}, "move.to"),
        ({"card": "7H", "from": 2, "to": 5.0}, "move.to"),
        ({"card": "7H", "from": 2}, "move"),
        ("7H:2-5", "move"),
    ],
)
def test_an_error_inside_a_move_names_the_move_field_at_fault(move: Any, field: str) -> None:
    assert error_of(move_request(move)).field == field


def test_watch_names_exactly_one_of_game_and_room() -> None:
    assert Watch(game="g1").game == "g1"
    assert Watch(room="abcdef").room == "ABCDEF"
    assert error_of({"type": "watch"}).code is ErrorCode.BAD_FIELD
    assert error_of({"type": "watch", "game": "g1", "room": "ABCDEF"}).code is ErrorCode.BAD_FIELD
