"""The bases of every wire record, and the decode adapter that turns plain maps into them.

:class:`Record` (frozen, typed, unknown fields refused, defaults left out), :class:`Message`
(a ``TYPE`` tag and a ``ref``), :class:`Request` and :class:`Reply`. :func:`convert` turns a
plain map into a record; msgspec names the failing field only inside its error's text, and
:func:`field_error` turns that error into the contract's ``bad_field`` ``ProtocolError``
with its field path. Public through :mod:`protocol.wire.message`.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, ClassVar, Final, Self, TypeVar, get_args, get_origin

import msgspec

from .error import ErrorCode, ProtocolError, Ref
from .fields import PATTERN_WORDS, RefValue, _bad

# ---------------------------------------------------------------- bases

_ENCODER: Final = msgspec.msgpack.Encoder()
_PLAIN_DECODER: Final = msgspec.msgpack.Decoder()


class Record(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, omit_defaults=True):
    """The base of every wire record: frozen, typed, unknown fields refused, defaults left out."""

    def to_dict(self) -> dict[str, Any]:
        """Return the wire map of this record (plain dicts, lists, text, integers, booleans)."""
        # Through msgpack rather than msgspec.to_builtins, which keeps tuples as tuples: the
        # map is exactly what a peer decodes (lists, dicts, text, integers, booleans).
        data: dict[str, Any] = _PLAIN_DECODER.decode(_ENCODER.encode(self))
        return data

    @classmethod
    def from_dict(cls, data: object) -> Self:
        """Return the record a wire map describes, or raise ``ProtocolError`` (``bad_field``)."""
        return convert(data, cls)


class Message(Record, tag_field="type", frozen=True, kw_only=True):
    """The base of every message: a ``TYPE`` name (the tag) and an optional client-chosen ``ref``."""

    TYPE: ClassVar[str] = ""
    FROM: ClassVar[str] = ""
    ref: RefValue | None = None

    def answering(self, ref: Ref | None) -> Self:
        """Return this message carrying ``ref`` (nothing else changes)."""
        return msgspec.structs.replace(self, ref=ref)


class Request(Message, frozen=True, kw_only=True):
    """The base of the messages a client sends."""

    FROM: ClassVar[str] = "client"


class Reply(Message, frozen=True, kw_only=True):
    """The base of the messages the server sends (answers and events)."""

    FROM: ClassVar[str] = "server"


# ---------------------------------------------------------------- the decode adapter
# msgspec names the failing field only inside its error's text ("... - at `$.move.to`");
# error.field is part of the contract, so one place turns the one into the other.

_AT = re.compile(r"^(?P<what>.*?)(?: - at `\$(?P<path>[^`]*)`)?$", re.DOTALL)
_UNKNOWN_FIELD = re.compile(r"^Object contains unknown field `(?P<name>[^`]*)`$")
_MISSING_FIELD = re.compile(r"^Object missing required field `(?P<name>[^`]*)`$")
_REGEX = re.compile(r"^Expected `str` matching regex '(?P<regex>.*)'$", re.DOTALL)


_INDEX = re.compile(r"\[\d+\]")


def _path(raw: str) -> str:
    """Return msgspec's path (``.move.to``, ``.roster[2].name``) as the contract writes it.

    The contract names fields, not items: ``roster.name``; an item of a list of events
    whose ``type`` is refused is the list's fault (``events``).
    """
    path = _INDEX.sub("", raw).lstrip(".")
    if path.endswith(".type"):
        path = path[: -len(".type")]
    return path


def _describe(cls: type[Record]) -> str:
    return f"a {cls.TYPE!r} message" if issubclass(cls, Message) else f"a {cls.__name__} record"


def _value_at(data: Any, raw_path: str) -> Any:
    """Return the value at msgspec's ``raw_path`` (``.roster[1].name``) in ``data``, or ``None``."""
    for key, index in re.findall(r"\.([^.\[]+)|\[(\d+)\]", raw_path):
        if key and type(data) is dict:
            data = data.get(key)
        elif index and type(data) is list and int(index) < len(data):
            data = data[int(index)]
        else:
            return None
    return data


def field_error(exc: msgspec.ValidationError, cls: type[Record], data: Any = None) -> ProtocolError:
    """Return the ``bad_field`` error saying, with its field path, what msgspec refused in ``data``."""
    match = _AT.match(str(exc))
    assert match is not None  # the pattern matches any text
    what, path = match["what"], _path(match["path"] or "")
    unknown = _UNKNOWN_FIELD.match(what)
    if unknown:
        name = unknown["name"][:40]
        field = f"{path}.{name}" if path else name
        return _bad(field, f"is not a field of {_describe(cls) if not path else 'this record'}")
    missing = _MISSING_FIELD.match(what)
    if missing:
        field = f"{path}.{missing['name']}" if path else missing["name"]
        return _bad(field, f"is missing: {_describe(cls) if not path else 'this record'} requires it")
    regex = _REGEX.match(what)
    if regex:
        what = f"must be {_PATTERN_WORDS_SHOWN.get(regex['regex'], 'of the documented form')}"
        value = _value_at(data, match["path"] or "")
        if type(value) is str:
            what += f", not {value if len(value) <= 40 else value[:40] + '…'!r}"
    elif what.startswith("Expected "):
        what = "must be " + what[len("Expected ") :].replace("`", "")
    elif what.startswith("Invalid value "):
        what = f"holds a message of a type it may not hold ({what[len('Invalid value ') :]})"
    elif what.startswith("Invalid enum value "):
        what = f"must be one of {', '.join(c.value for c in ErrorCode)}"
    else:
        what = f"is wrong: {what}"
    if not path:
        return ProtocolError(ErrorCode.BAD_FIELD, f"{_describe(cls)} {what}")
    return _bad(path, what)


_R = TypeVar("_R", bound=Record)

_PATTERN_WORDS_SHOWN: Final = {repr(pattern)[1:-1]: words for pattern, words in PATTERN_WORDS.items()}
"""PATTERN_WORDS by the form msgspec shows a pattern in (its repr)."""

_NESTED: dict[type[Record], dict[str, tuple[type[Record], bool]]] = {}


def _records_in(annotation: Any) -> type[Record] | None:
    """Return the record type a field holds (alone, optional or in a tuple), if any."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return _records_in(get_args(annotation)[0])
    if isinstance(annotation, type) and issubclass(annotation, Record):
        return annotation
    for arg in get_args(annotation):
        found = _records_in(arg)
        if found is not None:
            return found
    return None


def _nested(cls: type[Record]) -> dict[str, tuple[type[Record], bool]]:
    """Return, by wire name, the fields of ``cls`` that hold records (and whether as a list)."""
    known = _NESTED.get(cls)
    if known is None:
        known = {}
        for info in msgspec.structs.fields(cls):
            inner = _records_in(info.type)
            if inner is not None and not issubclass(inner, Message):
                known[info.encode_name] = (inner, "tuple" in repr(info.type))
        _NESTED[cls] = known
    return known


def _without_nulls(data: dict[Any, Any], cls: type[Record]) -> dict[Any, Any]:
    """Return ``data`` without its ``null`` values, in it and in the records it holds."""
    nested = _nested(cls)
    out: dict[Any, Any] = {}
    for key, value in data.items():
        if value is None:
            continue
        inner = nested.get(key) if type(key) is str else None
        if inner is not None:
            record, many = inner
            if many and type(value) is list:
                value = [_without_nulls(v, record) if type(v) is dict else v for v in value]
            elif not many and type(value) is dict:
                value = _without_nulls(value, record)
        out[key] = value
    return out


def convert(data: object, cls: type[_R]) -> _R:
    """Return the record of type ``cls`` that plain ``data`` describes, or raise ``ProtocolError``."""
    if type(data) is not dict:
        raise ProtocolError(ErrorCode.BAD_FIELD, f"{_describe(cls)} must be an object, not {_kind(data)}")
    try:
        return msgspec.convert(_without_nulls(data, cls), cls)
    except msgspec.ValidationError as exc:
        raise field_error(exc, cls, data) from None


def _kind(value: object) -> str:
    return "null" if value is None else type(value).__name__
