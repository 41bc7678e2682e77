"""Turn messages into websocket frames and back, for both subprotocols.

``scorpion.v1.msgpack`` carries each message as one binary frame holding a msgpack map;
``scorpion.v1.json`` as one text frame holding a JSON object. Both carry the same maps.
:func:`decode` refuses a frame longer than its limit before reading it, and raises only
:class:`~protocol.wire.error.ProtocolError`, whatever the bytes.
"""

from __future__ import annotations

from typing import Any, Final, Literal, Union

import msgspec

from .error import ErrorCode, ProtocolError, Ref
from .message import MAX_REF, MAX_REF_TEXT, MESSAGES, Message, from_dict

__all__ = [
    "FORMATS",
    "JSON",
    "MAX_CLIENT_FRAME",
    "MAX_SERVER_FRAME",
    "MSGPACK",
    "PROTOCOL_VERSION",
    "SUBPROTOCOLS",
    "Format",
    "decode",
    "decode_dict",
    "encode",
    "format_of",
    "from_dict",
    "peek_ref",
    "to_dict",
]

PROTOCOL_VERSION: Final = 1
"""Version of the wire contract; it is part of both subprotocol names."""

MSGPACK: Final = "scorpion.v1.msgpack"
"""Subprotocol name of the binary msgpack format (the default for programs)."""
JSON: Final = "scorpion.v1.json"
"""Subprotocol name of the text JSON format."""
SUBPROTOCOLS: Final = (MSGPACK, JSON)
"""Subprotocols a server offers, preferred first."""
FORMATS: Final = frozenset(SUBPROTOCOLS)
"""The two frame formats, named by their subprotocol."""

Format = Literal["scorpion.v1.msgpack", "scorpion.v1.json"]

MAX_CLIENT_FRAME: Final = 8192
"""Longest frame a client may send, in bytes (UTF-8 bytes for text frames)."""
MAX_SERVER_FRAME: Final = 1 << 20
"""Longest frame the server sends (snapshots, batches and replays may exceed 8 KiB)."""

_ANY_MESSAGE: Any = Union[tuple(MESSAGES.values())]  # noqa: UP007 (a union built from the registry)
_msgpack_decoder = msgspec.msgpack.Decoder(_ANY_MESSAGE)
_json_decoder = msgspec.json.Decoder(_ANY_MESSAGE)
_msgpack_plain = msgspec.msgpack.Decoder()
_json_plain = msgspec.json.Decoder()
_msgpack_encoder = msgspec.msgpack.Encoder()
_json_encoder = msgspec.json.Encoder()


def format_of(subprotocol: str | None) -> Format:
    """Return the format of a negotiated subprotocol, or raise ``ProtocolError`` (``bad_frame``)."""
    if subprotocol == MSGPACK:
        return MSGPACK
    if subprotocol == JSON:
        return JSON
    raise ProtocolError(ErrorCode.BAD_FRAME, f"unknown subprotocol {subprotocol!r}: use {MSGPACK} or {JSON}")


def to_dict(message: Message) -> dict[str, Any]:
    """Return the wire map of ``message``."""
    return message.to_dict()


def encode(message: Message, fmt: Format = MSGPACK) -> bytes | str:
    """Return the frame of ``message``: ``bytes`` for msgpack, ``str`` for JSON."""
    try:
        if fmt == MSGPACK:
            return _msgpack_encoder.encode(message)
        if fmt == JSON:
            return _json_encoder.encode(message).decode("utf-8")
    except (TypeError, ValueError, OverflowError, RecursionError, msgspec.EncodeError) as exc:
        raise ProtocolError(
            ErrorCode.INTERNAL, f"{message.TYPE!r} message holds data the wire cannot carry: {exc}"
        ) from None
    raise ValueError(f"unknown format {fmt!r}: use {MSGPACK} or {JSON}")


def _checked_size(frame: bytes | str, fmt: Format, limit: int) -> bytes | str:
    """Return ``frame`` as its format's type, or raise when it is of the wrong kind or too long."""
    if fmt == MSGPACK:
        if type(frame) is not bytes:
            if isinstance(frame, bytearray | memoryview):
                frame = bytes(frame)
            else:
                raise ProtocolError(ErrorCode.BAD_FRAME, f"{MSGPACK} uses binary frames, not text frames")
        if len(frame) > limit:
            raise ProtocolError(
                ErrorCode.TOO_LARGE, f"the frame has {len(frame)} bytes; the limit is {limit}"
            )
        return frame
    if fmt == JSON:
        if type(frame) is not str:
            raise ProtocolError(ErrorCode.BAD_FRAME, f"{JSON} uses text frames, not binary frames")
        size = len(frame)
        if size > limit or (size * 4 > limit and len(frame.encode("utf-8", "surrogatepass")) > limit):
            raise ProtocolError(ErrorCode.TOO_LARGE, f"the frame is over the limit of {limit} bytes")
        return frame
    raise ValueError(f"unknown format {fmt!r}: use {MSGPACK} or {JSON}")


def decode_dict(frame: bytes | str, fmt: Format = MSGPACK, *, limit: int = MAX_CLIENT_FRAME) -> Any:
    """Return the plain data in ``frame`` (not yet a message), refusing frames over ``limit`` bytes."""
    frame = _checked_size(frame, fmt, limit)
    try:
        if type(frame) is bytes:  # checked to be msgpack's binary frame
            data = _msgpack_plain.decode(frame)
            if not _has_text_keys(data):
                raise ValueError("a map key that is not text")
            return data
        return _json_plain.decode(frame)
    except (msgspec.DecodeError, RecursionError, UnicodeError, ValueError):
        what = "msgpack" if fmt == MSGPACK else "JSON"
        raise ProtocolError(ErrorCode.BAD_FRAME, f"the frame is not one valid {what} value") from None


def _has_text_keys(data: Any) -> bool:
    """Tell whether every map in ``data`` has text (or binary) keys, as the contract's maps do."""
    if type(data) is dict:
        return all(type(k) in (str, bytes) for k in data) and all(_has_text_keys(v) for v in data.values())
    if type(data) is list:
        return all(_has_text_keys(v) for v in data)
    return True


def peek_ref(frame: bytes | str, fmt: Format = MSGPACK, *, limit: int = MAX_CLIENT_FRAME) -> Ref | None:
    """Return the ``ref`` a frame carries, or ``None`` when it has none or it cannot be read.

    For an answer to a frame that is refused before it is checked (over the message
    credits): the error still carries the request's ``ref``.
    """
    try:
        data = decode_dict(frame, fmt, limit=limit)
    except ProtocolError:
        return None
    ref = data.get("ref") if type(data) is dict else None
    if type(ref) is int and -MAX_REF <= ref <= MAX_REF:
        return ref
    if type(ref) is str and len(ref) <= MAX_REF_TEXT:
        return ref
    return None


def decode(frame: bytes | str, fmt: Format = MSGPACK, *, limit: int = MAX_CLIENT_FRAME) -> Message:
    """Return the message in ``frame``, or raise ``ProtocolError`` saying what is wrong with it.

    A well-formed frame is decoded and checked by msgspec in one pass; any other frame
    is read again as plain data, so that the error names the field at fault, carries
    the request's ``ref`` and reads a ``null`` as an absent field. The server keeps the
    default ``limit`` (8 KiB); a client decoding server frames passes
    ``limit=MAX_SERVER_FRAME``.
    """
    frame = _checked_size(frame, fmt, limit)
    try:
        message: Message = (
            _msgpack_decoder.decode(frame) if type(frame) is bytes else _json_decoder.decode(frame)
        )
        return message
    except (msgspec.ValidationError, msgspec.DecodeError, RecursionError, UnicodeError, ValueError):
        pass  # said precisely below
    except ProtocolError:
        pass  # a rule across fields: said again below, with the request's ref
    data = decode_dict(frame, fmt, limit=limit)
    try:
        return from_dict(data)
    except RecursionError:
        raise ProtocolError(ErrorCode.BAD_FRAME, "the frame is nested too deeply") from None
