"""Turn messages into websocket frames and back, for both subprotocols.

``scorpion.v1.msgpack`` carries each message as one binary frame holding a msgpack map;
``scorpion.v1.json`` as one text frame holding a JSON object. Both carry the same maps.
:func:`decode` refuses a frame longer than its limit before reading it, and raises only
:class:`~protocol.wire.error.ProtocolError`, whatever the bytes.
"""

from __future__ import annotations

import json
from typing import Any, Final, Literal

import msgpack  # type: ignore[import-untyped]

from .error import ErrorCode, ProtocolError, Ref
from .message import MAX_REF, MAX_REF_TEXT, Message, from_dict

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

_json_encoder = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


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
    data = message.to_dict()
    try:
        if fmt == MSGPACK:
            return msgpack.packb(data, use_bin_type=True)  # type: ignore[no-any-return]
        if fmt == JSON:
            return _json_encoder.encode(data)
    except (TypeError, ValueError, OverflowError, RecursionError) as exc:
        raise ProtocolError(
            ErrorCode.INTERNAL, f"{message.TYPE!r} message holds data the wire cannot carry: {exc}"
        ) from None
    raise ValueError(f"unknown format {fmt!r}: use {MSGPACK} or {JSON}")


def decode_dict(frame: bytes | str, fmt: Format = MSGPACK, *, limit: int = MAX_CLIENT_FRAME) -> Any:
    """Return the plain data in ``frame`` (not yet a message), refusing frames over ``limit`` bytes."""
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
        try:
            return msgpack.unpackb(frame, raw=False, use_list=True, strict_map_key=True)
        except Exception:  # msgpack raises many kinds of errors on bad input
            raise ProtocolError(ErrorCode.BAD_FRAME, "the frame is not one valid msgpack value") from None
    if fmt == JSON:
        if type(frame) is not str:
            raise ProtocolError(ErrorCode.BAD_FRAME, f"{JSON} uses text frames, not binary frames")
        size = len(frame)
        if size > limit or (size * 4 > limit and len(frame.encode("utf-8", "surrogatepass")) > limit):
            raise ProtocolError(ErrorCode.TOO_LARGE, f"the frame is over the limit of {limit} bytes")
        try:
            return json.loads(frame, parse_constant=_no_constant)
        except (ValueError, RecursionError):
            raise ProtocolError(ErrorCode.BAD_FRAME, "the frame is not one valid JSON value") from None
    raise ValueError(f"unknown format {fmt!r}: use {MSGPACK} or {JSON}")


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

    The server keeps the default ``limit`` (8 KiB); a client decoding server frames passes
    ``limit=MAX_SERVER_FRAME``.
    """
    data = decode_dict(frame, fmt, limit=limit)
    try:
        return from_dict(data)
    except ProtocolError:
        raise
    except RecursionError:
        raise ProtocolError(ErrorCode.BAD_FRAME, "the frame is nested too deeply") from None
