"""Frames of both subprotocols: round trips, limits, and garbage that only ever raises ProtocolError."""

from __future__ import annotations

import json
from typing import Any

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.game import Board, player_view, summarize
from protocol.game.move import Move
from protocol.wire.codec import (
    JSON,
    MAX_CLIENT_FRAME,
    MAX_SERVER_FRAME,
    MSGPACK,
    PROTOCOL_VERSION,
    SUBPROTOCOLS,
    Format,
    decode,
    decode_dict,
    encode,
    format_of,
    from_dict,
    to_dict,
)
from protocol.wire.error import ErrorCode, ProtocolError
from protocol.wire.flow import Credits, Flow
from protocol.wire.message import (
    MESSAGES,
    Accepted,
    Error,
    Hello,
    Message,
    PlayMove,
    Progress,
    WireMove,
    error_message,
)
from tests.protocol.wire.test_message import messages, plain, strategy_for

FORMATS: list[Format] = [MSGPACK, JSON]
DECODING_CODES = {
    ErrorCode.BAD_FRAME,
    ErrorCode.TOO_LARGE,
    ErrorCode.BAD_FIELD,
    ErrorCode.UNKNOWN_TYPE,
    ErrorCode.UNAVAILABLE,
}


def refused(frame: Any, fmt: Format, limit: int = MAX_CLIENT_FRAME) -> ProtocolError:
    """Return the error decoding ``frame`` raises."""
    with pytest.raises(ProtocolError) as info:
        decode(frame, fmt, limit=limit)
    return info.value


def frame_of(data: Any, fmt: Format) -> bytes | str:
    """Return a frame holding arbitrary ``data``."""
    if fmt == MSGPACK:
        return msgpack.packb(data, use_bin_type=True)  # type: ignore[no-any-return]
    return json.dumps(data)


def test_the_subprotocols_are_named_after_the_protocol_version() -> None:
    assert PROTOCOL_VERSION == 1
    assert SUBPROTOCOLS == ("scorpion.v1.msgpack", "scorpion.v1.json")
    assert format_of("scorpion.v1.json") == JSON
    with pytest.raises(ProtocolError):
        format_of("scorpion.v2.json")


def test_msgpack_frames_are_bytes_and_json_frames_are_text() -> None:
    message = Hello(name="Ann", ref=1)
    assert isinstance(encode(message, MSGPACK), bytes)
    text = encode(message, JSON)
    assert text == '{"type":"hello","ref":1,"name":"Ann"}'
    assert to_dict(message) == from_dict(json.loads(str(text))).to_dict()


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("type_name", sorted(MESSAGES))
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_every_message_round_trips_through_both_codecs(
    type_name: str, fmt: Format, data: st.DataObject
) -> None:
    message = data.draw(strategy_for(MESSAGES[type_name]))
    assert decode(encode(message, fmt), fmt, limit=MAX_SERVER_FRAME) == message


@pytest.mark.parametrize("fmt", FORMATS)
@given(messages)
@settings(max_examples=100, deadline=None)
def test_both_codecs_carry_the_same_map(fmt: Format, message: Message) -> None:
    frame = encode(message, fmt)
    assert decode_dict(frame, fmt, limit=MAX_SERVER_FRAME) == message.to_dict()


def test_a_move_request_takes_less_than_64_bytes_in_msgpack() -> None:
    # game ids of up to 10 characters, versions and refs up to 65,535 (see docs/protocol.md)
    move = PlayMove(game="G7K2M9QXa1", v=65_535, move=WireMove.of(Move(32, 1, 4)), ref=65_535)
    frame = encode(move, MSGPACK)
    assert len(frame) < 64
    assert decode(frame) == move


def test_an_accepted_move_with_a_real_view_fits_in_a_client_sized_frame() -> None:
    board = Board.new("scorpion", 7)
    answer = Accepted(
        game="G7K2M9QX",
        v=12,
        view=player_view(board).as_dict(),
        summary=summarize(board, 30).as_dict(),
        ref=3,
    )
    for fmt in FORMATS:
        assert len(encode(answer, fmt)) < MAX_CLIENT_FRAME
        assert decode(encode(answer, fmt), fmt) == answer


# ---------------------------------------------------------------- limits


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_frame_over_8_kib_is_refused_as_too_large_before_it_is_read(fmt: Format) -> None:
    assert MAX_CLIENT_FRAME == 8192
    garbage: bytes | str = b"\xc1" * 8193 if fmt == MSGPACK else "{" * 8193
    assert refused(garbage, fmt).code is ErrorCode.TOO_LARGE
    at_limit: bytes | str = b"\xc1" * 8192 if fmt == MSGPACK else "{" * 8192
    assert refused(at_limit, fmt).code is ErrorCode.BAD_FRAME


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_valid_message_over_the_limit_is_refused_and_accepted_under_a_larger_limit(fmt: Format) -> None:
    big = Progress(game="g", v=1, player="p", summary={"pad": "x" * 9000}, status="playing")
    frame = encode(big, fmt)
    assert refused(frame, fmt).code is ErrorCode.TOO_LARGE
    assert decode(frame, fmt, limit=MAX_SERVER_FRAME) == big


def test_the_json_limit_counts_utf8_bytes_not_characters() -> None:
    small = Progress(game="g", v=1, player="p", summary={"pad": "é" * 3000}, status="playing")
    assert decode(encode(small, JSON), JSON) == small  # 6,000 bytes
    large = Progress(game="g", v=1, player="p", summary={"pad": "€" * 3000}, status="playing")
    frame = encode(large, JSON)
    assert len(frame) < MAX_CLIENT_FRAME
    assert refused(frame, JSON).code is ErrorCode.TOO_LARGE  # 9,000 bytes


def test_each_subprotocol_refuses_the_other_frame_type() -> None:
    assert refused('{"type":"ping"}', MSGPACK).code is ErrorCode.BAD_FRAME
    assert refused(b'{"type":"ping"}', JSON).code is ErrorCode.BAD_FRAME
    assert decode(bytearray(encode(Hello(name="Ann"), MSGPACK))) == Hello(name="Ann")


@pytest.mark.parametrize(
    "frame",
    ["", "[", "NaN", '{"type":"ping","ref":NaN}', '{"type":"ping"} {}', "[" * 4000 + "]" * 4000, "1" * 5000],
)
def test_text_that_is_not_one_json_object_is_a_bad_frame(frame: str) -> None:
    assert refused(frame, JSON).code is ErrorCode.BAD_FRAME


@pytest.mark.parametrize(
    "frame",
    [b"", b"\xc1", b"\x81\xa4type", b"\x80\x80", b"\x91" * 3000 + b"\x90", b"\x81\x01\x02", b"\xd4\x01\x02"],
)
def test_bytes_that_are_not_one_msgpack_map_are_a_bad_frame(frame: bytes) -> None:
    assert refused(frame, MSGPACK).code is ErrorCode.BAD_FRAME


def test_an_integer_too_large_for_the_field_is_a_bad_field() -> None:
    frame = msgpack.packb({"type": "undo", "game": "g", "v": 2**64 - 1})
    assert refused(frame, MSGPACK).code is ErrorCode.BAD_FIELD
    assert refused('{"type":"undo","game":"g","v":1e3}', JSON).code is ErrorCode.BAD_FIELD


def test_binary_strings_are_not_text() -> None:
    frame = msgpack.packb({"type": "hello", "name": b"Ann"}, use_bin_type=True)
    assert refused(frame, MSGPACK).field == "name"


def test_data_the_wire_cannot_carry_is_an_internal_error_when_encoding() -> None:
    broken = Progress(game="g", v=1, player="p", summary={"when": object()}, status="playing")
    for fmt in FORMATS:
        with pytest.raises(ProtocolError) as info:
            encode(broken, fmt)
        assert info.value.code is ErrorCode.INTERNAL
        assert info.value.fault == "server"


# ---------------------------------------------------------------- garbage in, ProtocolError out


@pytest.mark.parametrize("fmt", FORMATS)
@given(st.binary(max_size=300) | st.text(max_size=300))
@settings(max_examples=300, deadline=None)
def test_random_frames_only_ever_raise_the_protocol_error(fmt: Format, frame: bytes | str) -> None:
    try:
        decode(frame, fmt)
    except ProtocolError as exc:
        assert exc.code in DECODING_CODES


@pytest.mark.parametrize("fmt", FORMATS)
@given(plain)
@settings(max_examples=300, deadline=None)
def test_random_nested_structures_only_ever_raise_the_protocol_error(fmt: Format, data: Any) -> None:
    try:
        decode(frame_of(data, fmt), fmt)
    except ProtocolError as exc:
        assert exc.code in DECODING_CODES


@st.composite
def mutated(draw: st.DrawFn) -> dict[str, Any]:
    """Draw the wire map of a valid message with one field replaced, removed or added."""
    wire = draw(messages).to_dict()
    key = draw(st.sampled_from(sorted(wire)) | st.text(max_size=6))
    action = draw(st.sampled_from(["replace", "remove"]))
    if action == "remove":
        wire.pop(key, None)
    else:
        wire[key] = draw(plain)
    return wire


@pytest.mark.parametrize("fmt", FORMATS)
@given(mutated())
@settings(max_examples=300, deadline=None)
def test_mutated_messages_only_ever_raise_the_protocol_error(fmt: Format, wire: dict[str, Any]) -> None:
    try:
        decode(frame_of(wire, fmt), fmt, limit=MAX_SERVER_FRAME)
    except ProtocolError as exc:
        assert exc.code in (ErrorCode.BAD_FIELD, ErrorCode.UNKNOWN_TYPE, ErrorCode.UNAVAILABLE)


# ---------------------------------------------------------------- every error code


def reach(code: ErrorCode) -> ProtocolError | None:
    """Return the error the protocol layer itself raises with ``code`` (None for server-only codes)."""
    attempts = {
        ErrorCode.BAD_FRAME: lambda: decode(b"\xc1"),
        ErrorCode.TOO_LARGE: lambda: decode(b"\x00" * 9000),
        ErrorCode.UNKNOWN_TYPE: lambda: decode(msgpack.packb({"type": "fly"})),
        ErrorCode.BAD_FIELD: lambda: decode(msgpack.packb({"type": "hello"})),
        ErrorCode.HELLO_FIRST: lambda: Flow().check(PlayMove(game="g", v=0, move=WireMove.of(Move(0, 0, 1)))),
        ErrorCode.NOT_ALLOWED: lambda: Flow().check(Hello(name="a")) or Flow().check(Hello(name="a")),
        ErrorCode.UNAVAILABLE: lambda: decode(msgpack.packb({"type": "daily_result"})),
        ErrorCode.INTERNAL: lambda: encode(
            Progress(game="g", v=1, player="p", summary={"x": object()}, status="left")
        ),
    }
    if code is ErrorCode.NOT_ALLOWED:
        flow = Flow()
        flow.sent(from_dict({"type": "welcome", "player": "p", "token": "t" * 16, "name": "a", "now": 0}))
        attempts[code] = lambda: flow.check(Hello(name="a"))
    attempt = attempts.get(code)
    if attempt is None:
        return None
    with pytest.raises(ProtocolError) as info:
        attempt()
    return info.value


@pytest.mark.parametrize("code", list(ErrorCode))
@pytest.mark.parametrize("fmt", FORMATS)
def test_every_error_code_reaches_the_client_intact(code: ErrorCode, fmt: Format) -> None:
    error = reach(code) or ProtocolError(code, f"a sentence about {code.value}", ref="r9")
    assert error.code is code
    message = error_message(error.with_ref("r9"))
    decoded = decode(encode(message, fmt), fmt)
    assert isinstance(decoded, Error)
    assert (decoded.code, decoded.ref) == (code.value, "r9")
    assert decoded.message


def test_rate_limited_is_what_spent_credits_give() -> None:
    credits = Credits(capacity=2, period=10.0)
    assert [credits.take(0.0) for _ in range(3)] == ["ok", "ok", "rate_limited"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_ref_of_a_frame_is_read_without_checking_the_rest_of_it(fmt: Format) -> None:
    from protocol.wire.codec import peek_ref

    def frame(data: object) -> bytes | str:
        return msgpack.packb(data) if fmt == MSGPACK else json.dumps(data)

    assert peek_ref(frame({"type": "ping", "ref": 7}), fmt) == 7
    assert peek_ref(frame({"type": "nonsense", "extra": 1, "ref": "r-1"}), fmt) == "r-1"
    assert peek_ref(frame({"type": "ping"}), fmt) is None
    assert peek_ref(frame({"type": "ping", "ref": "x" * 65}), fmt) is None
    assert peek_ref(frame({"type": "ping", "ref": 2**53}), fmt) is None
    assert peek_ref(frame([1, 2]), fmt) is None
    assert peek_ref(b"\xc1" if fmt == MSGPACK else "{", fmt) is None
