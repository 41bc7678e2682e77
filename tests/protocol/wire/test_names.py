"""Display names that would show as blank or pass for another name are refused, by
Unicode's properties rather than a list of characters."""

from __future__ import annotations

import json

import pytest

from protocol.wire.codec import JSON, decode
from protocol.wire.error import ErrorCode, ProtocolError
from protocol.wire.message import Hello


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("\u3164", "show as nothing (U+3164"),  # Hangul filler
        ("\u115f\u115f", "show as nothing (U+115F"),  # Hangul choseong filler
        ("\uffa0", "show as nothing (U+FFA0"),  # halfwidth Hangul filler
        ("A\u034fB", "show as nothing (U+034F"),  # combining grapheme joiner: looks like AB
        ("A\ufe0fB", "show as nothing (U+FE0F"),  # variation selector: looks like AB
        ("Ann\u200b", "printable characters only"),  # zero width space: a format character
        ("\u2800\u2800", "at least one letter or digit"),  # braille blanks
        ("!!", "at least one letter or digit"),
    ],
)
def test_a_name_that_shows_as_blank_or_as_another_is_refused(name: str, why: str) -> None:
    with pytest.raises(ProtocolError) as caught:
        decode(json.dumps({"type": "hello", "name": name}), JSON)
    assert caught.value.code is ErrorCode.BAD_FIELD and caught.value.field == "name"
    assert why in str(caught.value), str(caught.value)


@pytest.mark.parametrize("name", ["Ann", "Zoë", "李小龙", "Ωmega_7", "  Bob  ", "A\u2800B"])
def test_names_of_every_script_are_taken(name: str) -> None:
    hello = decode(json.dumps({"type": "hello", "name": name}), JSON)
    assert isinstance(hello, Hello) and hello.name == name.strip()
