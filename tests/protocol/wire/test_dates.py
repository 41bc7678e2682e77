"""Dates in requests: the form is not enough, the day must be in the calendar."""

from __future__ import annotations

import json

import pytest

from protocol.wire.codec import JSON, decode
from protocol.wire.error import ErrorCode, ProtocolError
from protocol.wire.message import AroundMe, Leaderboard


@pytest.mark.parametrize("kind", ["leaderboard", "around_me"])
@pytest.mark.parametrize("date", ["2024-13-01", "2024-00-10", "2023-02-29", "2024-04-31", "2024-01-32"])
def test_an_impossible_date_is_a_bad_field_naming_the_date(kind: str, date: str) -> None:
    with pytest.raises(ProtocolError) as caught:
        decode(json.dumps({"type": kind, "date": date}), JSON)
    assert caught.value.code is ErrorCode.BAD_FIELD
    assert caught.value.field == "date"
    assert "real date" in str(caught.value) and date in str(caught.value)


def test_real_dates_and_no_date_are_taken() -> None:
    leap_day = decode(json.dumps({"type": "leaderboard", "date": "2024-02-29"}), JSON)
    assert leap_day == Leaderboard(date="2024-02-29")
    assert decode(json.dumps({"type": "around_me"}), JSON) == AroundMe()
