"""Which client message is legal when, the transitions, and the message credits."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from protocol.game.move import Move
from protocol.wire.error import ErrorCode, ProtocolError
from protocol.wire.flow import (
    ALLOWED,
    ANYWHERE,
    PLAYER_CREDITS,
    SPECTATOR_CREDITS,
    TRANSITIONS,
    Credits,
    Flow,
    State,
    after,
    allowed,
    check,
)
from protocol.wire.message import (
    CLIENT_TYPES,
    MESSAGES,
    SERVER_TYPES,
    Batch,
    Error,
    Hello,
    Message,
    Ok,
    Options,
    PlayMove,
    Progress,
    QueueTimeout,
    RaceEnded,
    RaceStarted,
    RoomState,
    SpectatorSnapshot,
    Welcome,
    WireMove,
)

WELCOME = Welcome(player="p1", token="t" * 16, name="Ann", now=0)
ROOM = RoomState(room="ABCDEF", variant="scorpion", max_players=2, options=Options(), host="p1", players=())
STARTED = RaceStarted(
    game="g1", v=1, variant="scorpion", options=Options(), start=0, commitment="0" * 64, view={}, roster=()
)
ENDED = RaceEnded(game="g1", v=9, standings=(), number="5", salt="0" * 32)
SPECTATE = SpectatorSnapshot(
    game="g1", v=3, variant="wasp", options=Options(), start=0, now=5, spectators=1, racers=()
)


def minimal(type_name: str) -> Message:
    """Return a bare message of ``type_name``: only its ``TYPE`` and ``ref`` matter to the checks."""
    cls = MESSAGES[type_name]
    # Building a message checks only the rules across fields: give those what they need.
    needed: dict[str, Any] = {"name": "Ann", "game": "g1", "room": "ABCDEF", "v": 0, "events": ()}
    needed["times"] = ()
    needed["moves"] = ()
    needed.update(username="ann", password="a password", new_password="another one", all=True)
    needed.update(purpose="login", credential="{}", options="{}", timeout_ms=0)
    fields = msgspec.structs.fields(cls)
    return cls(**{f.name: needed.get(f.name) for f in fields if f.required or f.name in ("game", "all")})


def test_every_client_type_is_allowed_in_some_state_and_only_client_types_are_listed() -> None:
    listed = set().union(*ALLOWED.values())
    assert listed == CLIENT_TYPES
    assert set(ALLOWED) == set(State)


def test_transitions_happen_only_on_messages_the_server_sends() -> None:
    for _state, key in TRANSITIONS:
        assert key.split(":")[0] in SERVER_TYPES
        if key.startswith("ok:"):
            assert key[3:] in CLIENT_TYPES


BEFORE_HELLO = {"hello", "ping", "login", "passkey_options", "passkey_login"}


@pytest.mark.parametrize("type_name", sorted(CLIENT_TYPES - BEFORE_HELLO))
def test_before_hello_every_request_but_ping_and_login_is_refused_with_hello_first(type_name: str) -> None:
    with pytest.raises(ProtocolError) as info:
        check(State.CONNECTED, minimal(type_name))
    assert info.value.code is ErrorCode.HELLO_FIRST


def test_hello_opens_the_session_and_a_second_hello_is_not_allowed() -> None:
    flow = Flow()
    flow.check(Hello(name="Ann"))
    assert flow.sent(WELCOME) is State.IDLE
    with pytest.raises(ProtocolError) as info:
        flow.check(Hello(name="Ann", ref=5))
    assert (info.value.code, info.value.ref) == (ErrorCode.NOT_ALLOWED, 5)


@pytest.mark.parametrize("state", [s for s in State if s is not State.CONNECTED])
def test_each_state_refuses_what_it_does_not_list_with_not_allowed(state: State) -> None:
    for type_name in sorted(CLIENT_TYPES):
        message = minimal(type_name)
        if type_name in allowed(state):
            check(state, message)
        else:
            with pytest.raises(ProtocolError) as info:
                check(state, message)
            assert info.value.code is ErrorCode.NOT_ALLOWED


def test_moves_are_only_allowed_while_racing() -> None:
    move = PlayMove(game="g1", v=1, move=WireMove.of(Move(0, 0, 1)))
    for state in State:
        if state is State.RACING:
            check(state, move)
        else:
            with pytest.raises(ProtocolError):
                check(state, move)


def test_ping_and_lookups_are_allowed_everywhere_after_hello() -> None:
    for state in State:
        if state not in (State.CONNECTED, State.CLOSED):
            assert allowed(state) >= ANYWHERE


def walk(*messages: Message) -> list[State]:
    """Return the states a connection passes through as the server sends ``messages``."""
    flow = Flow()
    return [flow.sent(m) for m in messages]


def test_racing_a_friend_goes_from_the_room_to_the_race_and_back() -> None:
    states = walk(WELCOME, ROOM, ROOM, STARTED, ENDED)
    assert states == [State.IDLE, State.IN_ROOM, State.IN_ROOM, State.RACING, State.IDLE]


def test_leaving_a_room_returns_to_idle() -> None:
    assert walk(WELCOME, ROOM, Ok(to="room_leave"))[-1] is State.IDLE


def test_the_queue_ends_in_a_race_a_timeout_or_a_cancel() -> None:
    queued = MESSAGES["queued"](variant="wasp", waiting=1)  # type: ignore[call-arg]
    assert walk(WELCOME, queued, STARTED)[-1] is State.RACING
    assert walk(WELCOME, queued, QueueTimeout(variant="wasp", waited=60))[-1] is State.IDLE
    assert walk(WELCOME, queued, Ok(to="queue_cancel"))[-1] is State.IDLE


def test_watching_starts_with_the_snapshot_and_ends_with_unwatch_or_the_race_end() -> None:
    assert walk(WELCOME, SPECTATE) == [State.IDLE, State.WATCHING]
    assert walk(WELCOME, SPECTATE, Ok(to="unwatch"))[-1] is State.IDLE
    assert walk(WELCOME, SPECTATE, ENDED)[-1] is State.IDLE


def progress(v: int) -> Progress:
    """Return a progress event of game g1."""
    return Progress(game="g1", v=v, player="p2", summary={}, status="playing")


def test_resuming_enters_the_race_unless_the_missed_events_end_it() -> None:
    assert walk(WELCOME, Batch(game="g1", v=4, events=(progress(4),)))[-1] is State.RACING
    assert walk(WELCOME, Batch(game="g1", v=9, events=(progress(8), ENDED)))[-1] is State.IDLE
    assert walk(WELCOME, Batch(game="g1", v=3, events=()))[-1] is State.RACING
    assert walk(WELCOME, STARTED, Batch(game="g1", v=9, events=(ENDED,)))[-1] is State.IDLE


def test_an_error_never_changes_the_state() -> None:
    error = Error(code="room_full", message="the room is full")
    for state in State:
        assert after(state, error) is state


def test_forget_me_closes_the_session_for_good() -> None:
    states = walk(WELCOME, Ok(to="forget_me"))
    assert states[-1] is State.CLOSED
    assert allowed(State.CLOSED) == frozenset()


def test_a_refused_request_keeps_its_ref() -> None:
    with pytest.raises(ProtocolError) as info:
        check(State.IN_ROOM, PlayMove(game="g1", v=1, move=WireMove.of(Move(0, 0, 1)), ref="m7"))
    assert info.value.ref == "m7"


# ---------------------------------------------------------------- credits


def test_players_have_60_messages_per_10_seconds_and_spectators_fewer() -> None:
    assert PLAYER_CREDITS == (60, 10.0)
    assert SPECTATOR_CREDITS[0] < PLAYER_CREDITS[0]
    credits = Credits()
    assert all(credits.take(0.0) == "ok" for _ in range(60))
    assert credits.take(0.0) == "rate_limited"


def test_credits_refill_with_time() -> None:
    credits = Credits(capacity=10, period=10.0)
    for _ in range(10):
        credits.take(100.0)
    assert credits.take(100.0) == "rate_limited"
    assert credits.take(101.0) == "ok"  # one credit a second
    assert credits.take(101.0) == "rate_limited"
    assert [credits.take(1000.0) for _ in range(11)].count("ok") == 10  # never more than the capacity


def test_a_client_that_keeps_sending_while_limited_is_closed() -> None:
    credits = Credits(capacity=1, period=10.0, strikes_before_close=3)
    taken = [credits.take(0.0) for _ in range(6)]
    assert taken == ["ok", "rate_limited", "rate_limited", "rate_limited", "close", "close"]


def test_a_clock_going_backwards_gives_no_credit() -> None:
    credits = Credits(capacity=1, period=10.0)
    assert credits.take(50.0) == "ok"
    assert credits.take(10.0) == "rate_limited"


def test_a_refusal_names_what_holds_the_connection_when_told() -> None:
    move = PlayMove(game="g1", v=1, move=WireMove.of(Move(0, 0, 1)))
    with pytest.raises(ProtocolError) as held:
        check(State.IN_ROOM, move, "room K7MQ2X")
    assert held.value.message.startswith("'move' is not allowed in a room (room K7MQ2X); allowed: ")
    with pytest.raises(ProtocolError) as plain:
        check(State.IN_ROOM, move)
    assert plain.value.message.startswith("'move' is not allowed in a room; allowed: ")
