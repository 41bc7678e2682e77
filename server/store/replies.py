"""Typed reads of Redis replies: the one place the store says what a reply must be.

Every connection of the store decodes replies (redis-py's ``decode_responses=True``, and
hiredis readers made with ``encoding="utf-8"``), so text always comes back as ``str``.
redis-py's annotations cannot know that and say ``bytes | str`` (and ``Any`` for
pipelines and scripts). Each helper here takes a reply, checks that it is what the
command must answer, and returns it with that type; a reply of any other kind raises
:class:`UnexpectedReply`, naming what was expected and what came, rather than letting a
``bytes`` or a stray ``None`` travel on into game code.

The helpers only check: a reply that passes is returned as it came (the same object,
neither copied, decoded nor converted).
"""

from __future__ import annotations

__all__ = [
    "UnexpectedReply",
    "as_int",
    "as_int_or_none",
    "as_text",
    "as_text_or_none",
    "text_list",
    "text_map",
    "text_or_none_list",
    "text_set",
]


class UnexpectedReply(TypeError):
    """A Redis reply was not of the kind its command must answer (the store's connections
    decode every reply, so text that arrives as ``bytes`` is an error too)."""


def _shown(value: object) -> str:
    """Describe a value for an error message: its type and the start of its repr."""
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{type(value).__name__} {text}"


def _unexpected(expected: str, reply: object) -> UnexpectedReply:
    return UnexpectedReply(f"expected {expected} from Redis, got {_shown(reply)}")


def as_text(reply: object) -> str:
    """Return a reply that must be text (``GET`` of a key that must exist, ``HGET`` of a
    field that must be set).

    Raises :class:`UnexpectedReply` for anything else, ``None`` (a missing key) included.
    """
    if isinstance(reply, str):
        return reply
    raise _unexpected("text", reply)


def as_text_or_none(reply: object) -> str | None:
    """Return a reply that is text or nil (``GET``, ``HGET``, ``LINDEX``): ``None`` when the
    key or field is missing.

    Raises :class:`UnexpectedReply` for anything else.
    """
    if reply is None or isinstance(reply, str):
        return reply
    raise _unexpected("text or nil", reply)


def text_list(reply: object) -> list[str]:
    """Return a reply that must be a list of text (``LRANGE``, ``ZRANGE`` without scores).

    Raises :class:`UnexpectedReply` when it is not a list, or when an item is not text.
    """
    if not isinstance(reply, list):
        raise _unexpected("a list of text", reply)
    for index, item in enumerate(reply):
        if not isinstance(item, str):
            raise _unexpected(f"text at index {index} of a list", item)
    return reply


def text_or_none_list(reply: object) -> list[str | None]:
    """Return a reply that must be a list of text or nils (``HMGET``, ``MGET``: ``None``
    where a field or key is missing).

    Raises :class:`UnexpectedReply` when it is not a list, or when an item is neither.
    """
    if not isinstance(reply, list):
        raise _unexpected("a list of text or nils", reply)
    for index, item in enumerate(reply):
        if item is not None and not isinstance(item, str):
            raise _unexpected(f"text or nil at index {index} of a list", item)
    return reply


def text_set(reply: object) -> set[str]:
    """Return a reply that must be a set of text (``SMEMBERS``, which redis-py makes a set).

    Raises :class:`UnexpectedReply` when it is not a set, or when a member is not text.
    """
    if not isinstance(reply, set):
        raise _unexpected("a set of text", reply)
    for member in reply:
        if not isinstance(member, str):
            raise _unexpected("text as a member of a set", member)
    return reply


def text_map(reply: object) -> dict[str, str]:
    """Return a reply that must map text to text (``HGETALL``, which redis-py makes a dict;
    empty when the hash does not exist).

    Raises :class:`UnexpectedReply` when it is not a dict, or when a field or value is not text.
    """
    if not isinstance(reply, dict):
        raise _unexpected("a map of text to text", reply)
    for field, value in reply.items():
        if not isinstance(field, str):
            raise _unexpected("text as a field of a map", field)
        if not isinstance(value, str):
            raise _unexpected(f"text as the value of field {field!r}", value)
    return reply


def as_int(reply: object) -> int:
    """Return a reply that must be an integer (``ZCARD``, ``INCR``, ``ZRANK`` of a member).

    Raises :class:`UnexpectedReply` for anything else: text holding digits and booleans
    included (those are other replies, or redis-py's reading of them).
    """
    if isinstance(reply, int) and not isinstance(reply, bool):
        return reply
    raise _unexpected("an integer", reply)


def as_int_or_none(reply: object) -> int | None:
    """Return a reply that is an integer or nil (``ZRANK``, ``ZREVRANK`` without
    ``WITHSCORE``: ``None`` when the member is absent).

    Raises :class:`UnexpectedReply` for anything else.
    """
    return None if reply is None else as_int(reply)
