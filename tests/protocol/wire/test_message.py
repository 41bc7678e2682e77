"""The messages of the wire contract: the catalogue, round trips, decoding checks, the reference.

The strategies drawing the messages are in ``strategies.py``; the rules of single fields are
in ``test_message_fields.py``, those of records and across fields in
``test_message_records.py``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, get_origin

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.wire.error import ErrorCode
from protocol.wire.message import (
    CLIENT_TYPES,
    MAX_VERSION,
    MESSAGES,
    RESERVED_TYPES,
    SERVER_TYPES,
    Hello,
    Message,
    Record,
    RoomJoin,
    from_dict,
)
from tests.protocol.wire.strategies import error_of, field_strategy, messages, strategy_for
from tests.protocol.wire.strategies import plain as plain  # test_codec.py imports it from here

# ---------------------------------------------------------------- shape of the catalogue


def test_every_message_type_is_unique_and_sent_by_exactly_one_side() -> None:
    assert CLIENT_TYPES.isdisjoint(SERVER_TYPES)
    assert set(MESSAGES) == CLIENT_TYPES | SERVER_TYPES
    assert RESERVED_TYPES.isdisjoint(MESSAGES)
    assert {cls.TYPE for cls in MESSAGES.values()} == set(MESSAGES)


def test_every_message_class_is_frozen_has_slots_and_a_docstring() -> None:
    for cls in MESSAGES.values():
        assert issubclass(cls, msgspec.Struct)
        assert cls.__struct_config__.frozen, cls
        assert cls.__struct_config__.forbid_unknown_fields, cls
        assert "__slots__" in cls.__dict__, cls
        assert cls.__doc__ and "\n" not in cls.__doc__.strip(), cls


CUSTOM_STRATEGIES = {"batch", "spectate_batch", "watch", "session_revoke"}


def test_every_message_field_has_a_strategy() -> None:
    for cls in MESSAGES.values():
        if cls.TYPE in CUSTOM_STRATEGIES:
            continue
        for f in msgspec.structs.fields(cls):
            assert field_strategy(cls.TYPE, f.name) is not None


def test_a_message_cannot_be_changed_after_construction() -> None:
    message = RoomJoin(room="ABCDEF")
    with pytest.raises(AttributeError):
        message.room = "GHJKMN"  # type: ignore[misc]


# ---------------------------------------------------------------- round trips


@pytest.mark.parametrize("type_name", sorted(MESSAGES))
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_every_message_round_trips_through_its_wire_map(type_name: str, data: st.DataObject) -> None:
    message = data.draw(strategy_for(MESSAGES[type_name]))
    wire = message.to_dict()
    assert wire["type"] == type_name
    assert None not in wire.values()
    assert from_dict(wire) == message


@given(messages)
@settings(max_examples=200, deadline=None)
def test_decoding_the_wire_map_of_any_message_gives_it_back(message: Message) -> None:
    assert from_dict(message.to_dict()) == message


# ---------------------------------------------------------------- decoding failures


@pytest.mark.parametrize("type_name", sorted(MESSAGES))
@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_a_missing_required_field_is_a_bad_field_error_naming_it(type_name: str, data: st.DataObject) -> None:
    message = data.draw(strategy_for(MESSAGES[type_name]))
    wire = message.to_dict()
    for f in msgspec.structs.fields(message):
        if not f.required:
            continue
        broken = {k: v for k, v in wire.items() if k != f.encode_name}
        error = error_of(broken)
        assert error.code is ErrorCode.BAD_FIELD
        assert error.field == f.encode_name
        assert repr(f.encode_name) in error.message


def test_an_unknown_field_is_a_bad_field_error() -> None:
    error = error_of({"type": "room_join", "room": "ABCDEF", "colour": "red", "ref": 4})
    assert (error.code, error.field, error.ref) == (ErrorCode.BAD_FIELD, "colour", 4)


def test_an_unknown_type_is_an_unknown_type_error_carrying_the_ref() -> None:
    error = error_of({"type": "teleport", "ref": "r1"})
    assert (error.code, error.ref) == (ErrorCode.UNKNOWN_TYPE, "r1")


@pytest.mark.parametrize("type_name", sorted(RESERVED_TYPES))
def test_a_reserved_type_is_unavailable_rather_than_unknown(type_name: str) -> None:
    assert error_of({"type": type_name}).code is ErrorCode.UNAVAILABLE


@pytest.mark.parametrize("data", [[], "hello", 3, None, b"x"])
def test_a_value_that_is_not_a_map_is_a_bad_frame(data: Any) -> None:
    assert error_of(data).code is ErrorCode.BAD_FRAME


@pytest.mark.parametrize("kind", [None, 3, ["hello"]])
def test_a_missing_or_non_text_type_is_a_bad_field(kind: Any) -> None:
    data = {"name": "Ann"} if kind is None else {"type": kind, "name": "Ann"}
    error = error_of(data)
    assert (error.code, error.field) == (ErrorCode.BAD_FIELD, "type")


@pytest.mark.parametrize("ref", [True, 1.5, "x" * 65, 2**53, [1], {"a": 1}])
def test_a_bad_ref_is_refused(ref: Any) -> None:
    error = error_of({"type": "ping", "ref": ref})
    assert (error.code, error.field) == (ErrorCode.BAD_FIELD, "ref")


@pytest.mark.parametrize("ref", [0, -5, 2**53 - 1, "", "x" * 64])
def test_a_good_ref_is_kept_and_echoed_in_errors(ref: Any) -> None:
    assert from_dict({"type": "ping", "ref": ref}).ref == ref
    assert error_of({"type": "move", "ref": ref}).ref == ref


@pytest.mark.parametrize("v", [-1, MAX_VERSION + 1, True, 1.0, "3"])
def test_versions_are_bounded_integers(v: Any) -> None:
    error = error_of({"type": "undo", "game": "g1", "v": v})
    assert (error.code, error.field) == (ErrorCode.BAD_FIELD, "v")


def test_a_null_optional_field_means_absent() -> None:
    assert from_dict({"type": "hello", "name": "Ann", "token": None}) == Hello(name="Ann")


def test_every_struct_subclass_in_the_module_is_documented() -> None:
    import protocol.wire.message as module

    for name in module.__all__:
        obj = getattr(module, name)
        if get_origin(obj) is not None:  # a type alias, such as RacerEvent
            continue
        if (isinstance(obj, type) and issubclass(obj, Record)) or callable(obj):
            assert obj.__doc__, name


# ---------------------------------------------------------------- the reference document

DOC = Path(__file__).resolve().parents[3] / "docs" / "protocol.md"


def doc_examples() -> list[dict[str, Any]]:
    """Return every JSON example of docs/protocol.md."""
    blocks = re.findall(r"```json\n(.*?)\n```", DOC.read_text(encoding="utf-8"), flags=re.S)
    return [json.loads(block) for block in blocks]


def test_every_json_example_in_the_protocol_document_is_a_valid_message() -> None:
    examples = doc_examples()
    assert examples
    for example in examples:
        message = from_dict(example)
        assert from_dict(message.to_dict()) == message


def test_the_protocol_document_shows_every_message_type_every_error_code_and_every_reserved_name() -> None:
    text = DOC.read_text(encoding="utf-8")
    shown = {example["type"] for example in doc_examples()}
    assert shown == set(MESSAGES)
    for code in ErrorCode:
        assert f"| `{code.value}` |" in text, code
    for name in RESERVED_TYPES:
        assert f"`{name}`" in text, name


@pytest.mark.parametrize(
    ("data", "field", "words"),
    [
        ({"type": "undo", "game": "g1", "v": "3"}, "v", "must be int"),
        ({"type": "undo", "game": "g1", "v": -1}, "v", ">= 0"),
        ({"type": "undo", "game": "g1"}, "v", "is missing"),
        ({"type": "undo", "game": "g1", "v": 1, "x": 1}, "x", "is not a field"),
        ({"type": "replay", "game": "a b"}, "game", "1 to 32 letters"),
        ({"type": "room_create", "variant": "nope"}, "variant", "one of scorpion"),
        ({"type": "room_create", "variant": "wasp", "options": {"undo": 1}}, "options.undo", "must be bool"),
        ({"type": "room_create", "variant": "wasp", "options": {"z": 1}}, "options.z", "is not a field"),
        ({"type": "room_create", "variant": "wasp", "options": 3}, "options", "must be object"),
        (
            {"type": "move", "game": "g", "v": 1, "move": {"card": "ZZ", "from": 1, "to": 2}},
            "move.card",
            "a card",
        ),
        (
            {"type": "move", "game": "g", "v": 1, "move": {"card": "7H", "from": 1}},
            "move",
            "exactly the fields",
        ),
        ({"type": "hello", "name": "   "}, "name", "after removing outer spaces"),
        ({"type": "watch"}, "game", "must be given"),
        ({"type": "error", "code": "nope", "message": "m"}, "code", "must be one of bad_frame"),
        ({"type": "batch", "game": "g", "v": 1, "events": [{"type": "ping"}]}, "events", "may not hold"),
        (
            {"type": "match_found", "variant": "wasp", "players": [{"player": "p"}], "start": 1},
            "players.name",
            "is missing",
        ),
    ],
)
def test_every_form_of_refusal_names_its_field_and_says_why(
    data: dict[str, Any], field: str, words: str
) -> None:
    error = error_of({**data, "ref": "r9"})
    assert (error.code, error.field, error.ref) == (ErrorCode.BAD_FIELD, field, "r9")
    assert repr(field) in error.message and words in error.message, error.message
