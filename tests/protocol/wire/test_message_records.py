"""The messages of the wire contract: batches, records and rules across fields, error
messages, the deal commitment, answering and building messages in Python.
"""

from __future__ import annotations

import hashlib

import pytest

from protocol.game import Board, player_view
from protocol.wire.error import ErrorCode, ProtocolError
from protocol.wire.message import (
    Accepted,
    Batch,
    Error,
    Options,
    PlayerLog,
    Progress,
    RaceEnded,
    Racer,
    RaceStarted,
    SpectateBatch,
    SpectateEvent,
    Standing,
    Watch,
    deal_commitment,
    error_message,
    from_dict,
)
from tests.protocol.wire.strategies import error_of


def progress(v: int, game: str = "g1") -> Progress:
    """Return a progress event at version ``v``."""
    return Progress(game=game, v=v, player="p2", summary={"score": 0}, status="playing")


def test_a_spectator_batch_holds_only_spectator_events_in_order() -> None:
    def event(v: int) -> SpectateEvent:
        return SpectateEvent(
            game="g1",
            v=v,
            player="p1",
            view=player_view(Board.new("scorpion", 5)).as_dict(),
            summary=progress(v).summary,
            status="playing",
        )

    assert SpectateBatch(game="g1", v=4, spectators=2, events=(event(3), event(4))).v == 4
    with pytest.raises(ProtocolError):
        SpectateBatch(game="g1", v=5, spectators=2, events=(event(3), event(5)))
    error = error_of(
        {"type": "spectate_batch", "game": "g1", "v": 3, "spectators": 1, "events": [progress(3).to_dict()]}
    )
    assert error.field == "events"
    assert error_of({"type": "watch", "room": "K7MQ2X", "v": 3}).field == "v"


def test_a_batch_holds_consecutive_events_of_its_game_ending_at_its_version() -> None:
    batch = Batch(game="g1", v=4, events=(progress(3), progress(4)))
    assert from_dict(batch.to_dict()) == batch
    with pytest.raises(ProtocolError, match="consecutive"):
        Batch(game="g1", v=5, events=(progress(3), progress(5)))
    with pytest.raises(ProtocolError, match="last event"):
        Batch(game="g1", v=9, events=(progress(3),))
    with pytest.raises(ProtocolError, match="game"):
        Batch(game="g1", v=3, events=(progress(3, game="g2"),))
    error = error_of({"type": "batch", "game": "g1", "v": 1, "events": [{"type": "ping"}]})
    assert error.field == "events"


def test_server_payloads_are_plain_maps_and_checked_only_for_shape() -> None:
    summary = {
        "score": 100,
        "runs": 1,
        "face_down_left": 3,
        "moves": 9,
        "reserve_left": 0,
        "state": "in_play",
    }
    assert Progress(game="g", v=2, player="p", summary=summary, status="stuck").summary is summary
    error = error_of(
        {"type": "progress", "game": "g", "v": 2, "player": "p", "summary": [1], "status": "stuck"}
    )
    assert error.field == "summary"


def test_the_race_end_reveals_a_number_and_salt_that_match_the_start_commitment() -> None:
    salt = "00112233445566778899aabbccddeeff"
    number = 10**19 + 7  # beyond 2**63: travels as decimal text
    commitment = deal_commitment(number, salt)
    assert commitment == hashlib.sha256(f"{number}:{salt}".encode()).hexdigest()
    ended = RaceEnded(game="g", v=9, standings=(), number=str(number), salt=salt)
    assert ended.to_dict()["number"] == str(number)
    decoded = from_dict(ended.to_dict())
    assert isinstance(decoded, RaceEnded)
    assert decoded.number is not None and decoded.salt is not None
    assert deal_commitment(decoded.number, decoded.salt) == commitment
    for bad in ["0", "012", "1" * 21, "-4", 0]:
        assert error_of({**ended.to_dict(), "number": bad}).field == "number"


def test_a_replay_log_has_one_time_per_move() -> None:
    with pytest.raises(ProtocolError, match="times"):
        PlayerLog(player="p", name="Ann", moves=({"deal": True},), times=())


def test_a_protocol_error_becomes_an_error_message_with_its_code_field_and_ref() -> None:
    error = ProtocolError(ErrorCode.BAD_FIELD, "field 'v' must be an integer", ref=7, field="v")
    message = error_message(error)
    assert message == Error(code="bad_field", message="field 'v' must be an integer", field="v", ref=7)
    assert error.fault == "client"
    assert ProtocolError("internal", "oops").fault == "server"


def test_an_error_message_refuses_codes_outside_the_table() -> None:
    assert error_of({"type": "error", "code": "oops", "message": "m"}).field == "code"


def test_nested_records_are_checked_like_messages() -> None:
    with pytest.raises(ProtocolError) as info:
        Standing.from_dict(
            {
                "player": "p",
                "name": "Ann",
                "score": -1,
                "runs": 0,
                "elapsed": 0,
                "status": "finished",
                "rank": 1,
            }
        )
    assert info.value.field == "score"
    race = RaceStarted(
        game="g",
        v=1,
        variant="scorpion",
        options=Options(),
        start=0,
        commitment="0" * 64,
        view={},
        roster=(Racer(player="p", name="Ann"),),
    )
    wire = race.to_dict()
    wire["roster"] = [{"player": "p", "name": ""}]
    assert error_of(wire).field == "roster.name"


def test_answering_only_changes_the_ref() -> None:
    view = {"variant": "scorpion", "columns": [[None, "7H"]], "reserve_left": 3}
    view.update(cells=[], foundations=[])
    summary = {"score": 0, "runs": 0, "face_down_left": 1, "moves": 1, "reserve_left": 3, "state": "in_play"}
    built = Accepted(game="g1", v=2, view=view, summary=summary)
    assert built.status == "playing" and built.ref is None
    answered = built.answering(7)
    assert answered.ref == 7 and answered.to_dict() == {**built.to_dict(), "ref": 7}
    assert from_dict(answered.to_dict()) == answered


def test_building_a_message_in_python_checks_only_rules_across_fields() -> None:
    # Field constraints are checked where data comes in, when a frame is decoded: what the
    # server builds from its own state is not checked again on the hot path.
    assert Progress(game="g 1", v=-1, player="p", summary={}, status="playing").v == -1
    with pytest.raises(ProtocolError):
        Watch()
    error = error_of({"type": "progress", "game": "g 1", "v": 1, "player": "p", "summary": {}, "status": "x"})
    assert (error.code, error.field) == (ErrorCode.BAD_FIELD, "game")
