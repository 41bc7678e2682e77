"""The messages of the wire contract: decoding checks, wire maps, round trips."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any, get_origin

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.game import Board, player_view, summarize
from protocol.game.move import CELL_BASE, DEAL, Move, move_json
from protocol.game.variant import VARIANTS
from protocol.wire.error import ErrorCode, ProtocolError
from protocol.wire.message import (
    CLIENT_TYPES,
    MAX_VERSION,
    MESSAGES,
    RACER_STATUSES,
    RESERVED_TYPES,
    ROOM_ALPHABET,
    SERVER_TYPES,
    Accepted,
    Batch,
    Error,
    GameInfo,
    Hello,
    LeaderboardEntry,
    Message,
    Options,
    PlayerLog,
    PlayMove,
    Progress,
    RaceEnded,
    Racer,
    RacerBoard,
    RacerProgress,
    RaceStarted,
    RatingDelta,
    RatingEntry,
    RatingInfo,
    RecentGame,
    Record,
    ReplayPositionsInfo,
    RoomCreate,
    RoomJoin,
    RoomPlayer,
    SavedGame,
    SpectateBatch,
    SpectateEvent,
    Standing,
    VariantStats,
    Watch,
    WireMove,
    deal_commitment,
    error_message,
    from_dict,
)

# ---------------------------------------------------------------- strategies

ids = st.text(alphabet="abcdefghijkmnopqrstuvwxyzABCXYZ0123456789-_", min_size=1, max_size=32)
tokens = st.text(alphabet="abcdefXYZ0123456789-_", min_size=16, max_size=128)
visible = st.characters(categories=["L", "M", "N", "P", "S"])
names = st.builds(
    lambda first, rest: (first + rest).strip(), visible, st.text(alphabet=visible | st.just(" "), max_size=23)
)
versions = st.integers(0, MAX_VERSION)
epochs = st.integers(0, 2**53 - 1)
counts = st.integers(0, MAX_VERSION)
refs = st.none() | st.integers(-(2**53) + 1, 2**53 - 1) | st.text(max_size=64)
rooms = st.text(alphabet=ROOM_ALPHABET, min_size=6, max_size=6)
variants = st.sampled_from(sorted(VARIANTS))
statuses = st.sampled_from(RACER_STATUSES)
hexes = st.text(alphabet="0123456789abcdef", min_size=64, max_size=64)
salts = st.text(alphabet="0123456789abcdef", min_size=32, max_size=64)
dates = st.dates().map(lambda d: d.isoformat()).filter(lambda s: len(s) == 10)
plain = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
plain_maps = st.dictionaries(st.text(max_size=12), plain, max_size=6)


@st.composite
def real_views(draw: st.DrawFn) -> dict[str, Any]:
    """Draw the view of a real deal (what the server actually sends)."""
    board = Board.new(draw(variants), draw(st.integers(1, 10_000)))
    return player_view(board).as_dict()


@st.composite
def real_summaries(draw: st.DrawFn) -> dict[str, Any]:
    """Draw the summary of a real deal."""
    board = Board.new(draw(variants), draw(st.integers(1, 10_000)))
    return summarize(board, draw(st.integers(0, 3600))).as_dict()


views = real_views() | plain_maps
summaries = real_summaries() | plain_maps
game_moves = st.just(DEAL) | st.builds(
    Move,
    st.integers(0, 51),
    st.integers(0, 9) | st.sampled_from([CELL_BASE, CELL_BASE + 1]),
    st.integers(0, 9),
)
move_maps = game_moves.map(move_json)

options = st.builds(
    Options,
    undo=st.booleans(),
    hints=st.booleans(),
    spectators=st.booleans(),
    reserve_rule=st.sampled_from(["any-time", "when-stuck"]),
    spectator_delay=st.integers(0, 300),
    rated=st.booleans(),
)
racers = st.builds(Racer, player=ids, name=names)
room_players = st.builds(RoomPlayer, player=ids, name=names, ready=st.booleans())
standings = st.builds(
    Standing,
    player=ids,
    name=names,
    score=st.integers(0, 10**6),
    runs=st.integers(0, 8),
    elapsed=counts,
    status=statuses,
    rank=st.integers(1, 8),
)
game_infos = st.builds(
    GameInfo,
    game=ids,
    variant=variants,
    players=st.lists(racers, max_size=8).map(tuple),
    start=epochs,
    spectators=counts,
    room=st.none() | rooms,
    racers=st.lists(st.builds(RacerProgress, player=ids, summary=summaries, status=statuses), max_size=4).map(
        tuple
    ),
)


@st.composite
def player_logs(draw: st.DrawFn) -> PlayerLog:
    """Draw one racer's move log with a time for each move."""
    moves = draw(st.lists(move_maps, max_size=20))
    times = draw(st.lists(st.integers(0, 10**7), min_size=len(moves), max_size=len(moves)))
    return PlayerLog(player=draw(ids), name=draw(names), moves=tuple(moves), times=tuple(times))


def tuples_of(strategy: st.SearchStrategy[Any], max_size: int = 8) -> st.SearchStrategy[tuple[Any, ...]]:
    """Draw tuples of ``strategy``."""
    return st.lists(strategy, max_size=max_size).map(tuple)


FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "ref": refs,
    "game": ids,
    "player": ids,
    "host": ids,
    "v": versions,
    "name": names,
    "token": tokens,
    "client": st.text(max_size=64),
    "protocol": st.integers(1, 1000),
    "now": epochs,
    "start": epochs,
    "ends": epochs,
    "room": rooms,
    "variant": variants,
    "max_players": st.integers(2, 8),
    "options": options,
    "ready": st.booleans(),
    "seconds": st.integers(0, 60),
    "retry_after_ms": st.none() | st.integers(0, 60_000),
    "waiting": counts,
    "waited": counts,
    "count": counts,
    "spectators": counts,
    "commitment": hexes,
    "view": views,
    "summary": summaries,
    "status": statuses,
    "roster": tuples_of(racers),
    "move": game_moves.map(WireMove.of),
    "standings": tuples_of(standings),
    "number": st.integers(1, 10**20 - 1).map(str),
    "salt": salts,
    "subscribe": st.booleans(),
    "date": dates,
    "daily": dates,
    "played": st.booleans(),
    "to": st.sampled_from(sorted(CLIENT_TYPES)),
    "code": st.sampled_from([c.value for c in ErrorCode]),
    "message": st.text(max_size=512),
    "field": st.text(max_size=64),
    "racers": tuples_of(st.builds(RacerProgress, player=ids, summary=summaries, status=statuses)),
    "added": tuples_of(game_infos, 5),
    "removed": tuples_of(ids, 5),
    "logs": tuples_of(player_logs(), 3),
    "radius": st.integers(0, 50),
    "verdict": st.sampled_from(["winnable", "unwinnable", "unknown"]),
    "line": tuples_of(move_maps, 20),
    "slipped": st.none() | counts,
    "won": st.booleans(),
    "offset": counts,
    "limit": st.integers(1, 100),
    "total": counts,
    "me": st.none() | st.integers(1, 2**31 - 1),
    "practice": st.booleans(),
    "finished": st.booleans(),
    "previous": st.none()
    | st.fixed_dictionaries({"date": dates, "number": st.just("123456"), "salt": salts}),
    "mode": st.sampled_from(["race", "solo", "daily", "practice"]),
    "reserve_rule": st.sampled_from(["any-time", "when-stuck"]),
    "save": st.booleans(),
}
leaderboard_entries = st.builds(
    LeaderboardEntry,
    rank=st.integers(1, 10**6),
    player=ids,
    name=names,
    score=st.integers(0, 10**6),
    elapsed=counts,
    finished=epochs,
)
saved_games = st.builds(SavedGame, game=ids, variant=variants, start=epochs, summary=summaries)
variant_stats = st.builds(
    VariantStats,
    variant=variants,
    started=counts,
    won=counts,
    best_score=counts,
    best_time=st.none() | counts,
    average_score=counts,
    streak=counts,
    longest_streak=counts,
    dailies=counts,
)
ratings = st.integers(0, 10_000)
deviations = st.integers(0, 350)
rating_infos = st.builds(
    RatingInfo,
    variant=variants,
    rating=ratings,
    deviation=deviations,
    games=counts,
    provisional=st.booleans(),
    rank=st.none() | st.integers(1, 10**6),
    best=st.none() | ratings,
)
rating_deltas = st.builds(
    RatingDelta,
    player=ids,
    name=names,
    before=ratings,
    after=ratings,
    deviation=deviations,
    provisional=st.booleans(),
)
rating_entries = st.builds(
    RatingEntry,
    rank=st.integers(1, 10**6),
    player=ids,
    name=names,
    rating=ratings,
    deviation=deviations,
    games=counts,
    provisional=st.booleans(),
)
recent_games = st.builds(
    RecentGame,
    game=ids,
    variant=variants,
    mode=st.sampled_from(["race", "solo", "daily", "practice"]),
    start=epochs,
    racers=st.integers(1, 8),
    rank=st.integers(1, 8),
    score=st.integers(0, 10**6),
    status=statuses,
    rated=st.booleans(),
    change=st.none() | st.integers(-10_000, 10_000),
    replayable=st.booleans(),
)
OVERRIDES: dict[tuple[str, str], st.SearchStrategy[Any]] = {
    ("replay_positions_info", "views"): tuples_of(views, 4),
    ("replay_positions_info", "moves"): tuples_of(move_maps, 3),
    ("replay_positions_info", "times"): tuples_of(epochs, 3),
    ("queued", "rated"): st.booleans(),
    ("queued", "rating"): st.none() | ratings,
    ("queue_join", "rated"): st.booleans(),
    ("rating_change", "changes"): tuples_of(rating_deltas),
    ("profile", "player"): st.none() | ids,
    ("profile_info", "ratings"): tuples_of(rating_infos, 4),
    ("profile_info", "stats"): tuples_of(variant_stats, 4),
    ("profile_info", "recent"): tuples_of(recent_games, 5),
    ("profile_info", "me"): st.booleans(),
    ("rating_board", "around_me"): st.booleans(),
    ("rating_page", "entries"): tuples_of(rating_entries, 20),
    ("welcome", "games"): tuples_of(ids, 16),
    ("games", "games"): tuples_of(game_infos, 5),
    ("room", "players"): tuples_of(room_players),
    ("match_found", "players"): tuples_of(racers),
    ("hints", "moves"): tuples_of(move_maps, 64),
    ("leaderboard_page", "entries"): tuples_of(leaderboard_entries, 20),
    ("saved_games_list", "games"): tuples_of(saved_games, 5),
    ("stats_info", "stats"): tuples_of(variant_stats, 4),
    ("forgotten", "removed"): st.fixed_dictionaries({"saved_games": counts, "identity": st.booleans()}),
    ("stats", "variant"): st.none() | variants,
    ("analysis", "moves"): counts,
    ("winnable_info", "move"): st.none() | move_maps,
    ("spectate", "racers"): tuples_of(
        st.builds(RacerBoard, player=ids, name=names, view=views, summary=summaries, status=statuses), 4
    ),
}


def field_strategy(type_name: str, attr: str) -> st.SearchStrategy[Any]:
    """Return the strategy of one field of one message type."""
    if (type_name, attr) in OVERRIDES:
        return OVERRIDES[type_name, attr]
    return FIELDS[attr]


@st.composite
def batches(draw: st.DrawFn) -> Batch:
    """Draw a batch of consecutive events of one game."""
    game = draw(ids)
    first = draw(st.integers(1, 1000))
    size = draw(st.integers(0, 5))
    events: list[Message] = []
    for v in range(first, first + size):
        events.append(
            Progress(game=game, v=v, player=draw(ids), summary=draw(summaries), status=draw(statuses))
        )
    last = first + size - 1 if size else draw(versions)
    return Batch(game=game, v=last, events=tuple(events), ref=draw(refs))


@st.composite
def spectator_batches(draw: st.DrawFn) -> SpectateBatch:
    """Draw a spectator's batch of consecutive events of one game."""
    game = draw(ids)
    first = draw(st.integers(1, 1000))
    size = draw(st.integers(0, 4))
    events = tuple(
        SpectateEvent(
            game=game, v=v, player=draw(ids), view=draw(views), summary=draw(summaries), status=draw(statuses)
        )
        for v in range(first, first + size)
    )
    last = first + size - 1 if size else draw(versions)
    return SpectateBatch(game=game, v=last, spectators=draw(counts), events=events, ref=draw(refs))


@st.composite
def replay_positions(draw: st.DrawFn) -> ReplayPositionsInfo:
    """Draw a racer's positions: one view more than there are moves, and a time per move."""
    moves = draw(st.lists(move_maps, max_size=5))
    return ReplayPositionsInfo(
        game=draw(ids),
        player=draw(ids),
        name=draw(names),
        variant=draw(variants),
        views=tuple(draw(st.lists(views, min_size=len(moves) + 1, max_size=len(moves) + 1))),
        moves=tuple(moves),
        times=tuple(draw(st.lists(epochs, min_size=len(moves), max_size=len(moves)))),
        verdict=draw(st.none() | st.sampled_from(["winnable", "unwinnable", "unknown"])),
        slipped=draw(st.none() | counts),
        ref=draw(refs),
    )


def strategy_for(cls: type[Message]) -> st.SearchStrategy[Message]:
    """Return a strategy drawing every valid shape of message ``cls``."""
    if cls.TYPE == "replay_positions_info":
        return replay_positions()
    if cls.TYPE == "batch":
        return batches()
    if cls.TYPE == "spectate_batch":
        return spectator_batches()
    if cls.TYPE == "watch":
        return (
            st.builds(Watch, game=ids, ref=refs)
            | st.builds(Watch, game=ids, v=versions, ref=refs)
            | st.builds(Watch, room=rooms, ref=refs)
        )
    required: dict[str, st.SearchStrategy[Any]] = {}
    optional: dict[str, st.SearchStrategy[Any]] = {}
    for f in msgspec.structs.fields(cls):
        (required if f.required else optional)[f.name] = field_strategy(cls.TYPE, f.name)
    # An optional field is either absent (its default applies) or holds a value.
    return st.fixed_dictionaries(required, optional=optional).map(lambda kwargs: cls(**kwargs))


messages = st.sampled_from(sorted(MESSAGES)).flatmap(lambda t: strategy_for(MESSAGES[t]))
"""Any valid message of the protocol."""


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


CUSTOM_STRATEGIES = {"batch", "spectate_batch", "watch"}


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


def error_of(data: Any) -> ProtocolError:
    """Return the error decoding ``data`` raises."""
    with pytest.raises(ProtocolError) as info:
        from_dict(data)
    return info.value


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


@pytest.mark.parametrize("name", ["", "   ", "x" * 25, "a\u0000b", "tab\there", "zero\u200bwidth", "a\nb", 7])
def test_bad_display_names_are_refused(name: Any) -> None:
    error = error_of({"type": "hello", "name": name})
    assert (error.code, error.field) == (ErrorCode.BAD_FIELD, "name")


def test_display_names_are_stripped_and_may_use_any_printable_letters() -> None:
    assert Hello(name="  Zoë 🦂  ").name == "Zoë 🦂"
    assert Hello(name="x" * 24).name == "x" * 24


@pytest.mark.parametrize("game", ["", "x" * 33, "a b", "g/1", "é"])
def test_game_ids_are_short_plain_text(game: str) -> None:
    assert error_of({"type": "replay", "game": game}).field == "game"


def test_room_codes_are_read_in_either_case_and_ambiguous_letters_are_refused() -> None:
    assert RoomJoin(room="abcdef").room == "ABCDEF"
    for bad in ["ABCDE", "ABCDEFG", "ABCDE0", "ABCDEO", "ABCDE1", "ABCDEI", "ABCDEL"]:
        assert error_of({"type": "room_join", "room": bad}).field == "room"


def test_room_options_default_to_undo_and_hints_allowed_and_are_checked() -> None:
    created = from_dict({"type": "room_create", "variant": "wasp"})
    assert created == RoomCreate(variant="wasp", max_players=2, options=Options())
    assert Options() == Options(undo=True, hints=True, spectators=True, reserve_rule="any-time")
    for options, name in [
        ({"spectator_delay": 301}, "spectator_delay"),
        ({"reserve_rule": "never"}, "reserve_rule"),
    ]:
        error = error_of({"type": "room_create", "variant": "wasp", "options": options})
        # The error names the field inside the options (docs/protocol.md, section 2).
        assert (error.code, error.field) == (ErrorCode.BAD_FIELD, f"options.{name}")
        assert f"options.{name}" in error.message
    for players in [1, 9]:
        assert (
            error_of({"type": "room_create", "variant": "wasp", "max_players": players}).field
            == "max_players"
        )
    assert error_of({"type": "room_create", "variant": "klondike"}).field == "variant"


def move_request(move: Any) -> dict[str, Any]:
    """Return the wire map of a move request carrying ``move``."""
    return {"type": "move", "game": "g1", "v": 3, "move": move}


def test_a_move_request_carries_an_engine_move() -> None:
    message = from_dict(move_request({"card": "7h", "from": 2, "to": 5}))
    assert isinstance(message, PlayMove)
    assert message.engine_move == Move(32, 1, 4)
    assert message.to_dict()["move"] == {"card": "7H", "from": 2, "to": 5}
    reserve = from_dict(move_request({"card": "KS", "from": "r2", "to": 10}))
    assert isinstance(reserve, PlayMove) and reserve.engine_move == Move(51, CELL_BASE + 1, 9)
    assert reserve.to_dict()["move"] == {"card": "KS", "from": "R2", "to": 10}
    assert (
        isinstance(dealt := from_dict(move_request({"deal": True})), PlayMove) and dealt.engine_move == DEAL
    )
    assert dealt.to_dict()["move"] == {"deal": True}


@given(game_moves)
def test_an_engine_move_survives_the_wire_form(move: Move) -> None:
    assert WireMove.of(move).to_move() == move


@pytest.mark.parametrize(
    "move",
    [
        {"card": "1H", "from": 2, "to": 5},
        {"card": "7H", "from": 0, "to": 5},
        {"card": "7H", "from": 11, "to": 5},
        {"card": "7H", "from": 2, "to": 11},
        {"card": "7H", "from": "R3", "to": 5},
        {"card": "7H", "from": "R", "to": 5},
        {"card": "7H", "from": True, "to": 5},
        {"card": "7H", "from": 2, "to": 5.0},
        {"card": "7H", "from": 2},
        {"card": "7H", "from": 2, "to": 5, "extra": 1},
        {"card": 7, "from": 2, "to": 5},
        {"deal": False},
        {"deal": True, "card": "7H"},
        {"card": "7H", "from": 2, "to": 2**70},
        "7H:2-5",
        [1, 2, 3],
    ],
)
def test_malformed_moves_are_bad_field_errors(move: Any) -> None:
    error = error_of(move_request(move))
    assert error.code == ErrorCode.BAD_FIELD
    assert error.field is not None and error.field.split(".")[0] == "move"


@pytest.mark.parametrize(
    ("move", "field"),
    [
        ({"card": "1H", "from": 2, "to": 5}, "move.card"),
        ({"card": 7, "from": 2, "to": 5}, "move.card"),
        ({"card": "7H", "from": 0, "to": 5}, "move.from"),
        ({"card": "7H", "from": 11, "to": 5}, "move.from"),
        ({"card": "7H", "from": "R3", "to": 5}, "move.from"),
        ({"card": "7H", "from": 2, "to": 11}, "move.to"),
        ({"card": "7H", "from": 2, "to": 5.0}, "move.to"),
        ({"card": "7H", "from": 2}, "move"),
        ("7H:2-5", "move"),
    ],
)
def test_an_error_inside_a_move_names_the_move_field_at_fault(move: Any, field: str) -> None:
    assert error_of(move_request(move)).field == field


def test_watch_names_exactly_one_of_game_and_room() -> None:
    assert Watch(game="g1").game == "g1"
    assert Watch(room="abcdef").room == "ABCDEF"
    assert error_of({"type": "watch"}).code is ErrorCode.BAD_FIELD
    assert error_of({"type": "watch", "game": "g1", "room": "ABCDEF"}).code is ErrorCode.BAD_FIELD


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
