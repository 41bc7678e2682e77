"""Hypothesis strategies drawing every valid message of the wire contract, and the error
decoding a map raises: shared by the message tests and the codec tests.
"""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
import regex
from hypothesis import strategies as st

from protocol.game import Board, player_view, summarize
from protocol.game.move import CELL_BASE, DEAL, Move, move_json
from protocol.game.variant import VARIANTS
from protocol.wire.error import ErrorCode, ProtocolError
from protocol.wire.message import (
    CLIENT_TYPES,
    MAX_BAN_REASON,
    MAX_VERSION,
    MESSAGES,
    RACER_STATUSES,
    ROOM_ALPHABET,
    Batch,
    ChallengeBoardInfo,
    ChallengeEntry,
    GameInfo,
    Ghost,
    LeaderboardEntry,
    Message,
    Options,
    PlayerLog,
    Progress,
    Racer,
    RacerBoard,
    RacerProgress,
    RatingDelta,
    RatingEntry,
    RatingInfo,
    RecentGame,
    ReplayPositionsInfo,
    RoomPlayer,
    SavedGame,
    SessionEntry,
    SessionRevoke,
    SpectateBatch,
    SpectateEvent,
    Standing,
    VariantStats,
    Watch,
    WireMove,
    from_dict,
)

# ---------------------------------------------------------------- strategies

ids = st.text(alphabet="abcdefghijkmnopqrstuvwxyzABCXYZ0123456789-_", min_size=1, max_size=32)
tokens = st.text(alphabet="abcdefXYZ0123456789-_", min_size=16, max_size=128)
_ignorable = regex.compile(r"\p{Default_Ignorable_Code_Point}")
visible = st.characters(categories=["L", "M", "N", "P", "S"]).filter(lambda c: not _ignorable.match(c))
letters = st.characters(categories=["L", "N"]).filter(lambda c: not _ignorable.match(c))
names = st.builds(
    lambda first, rest: (first + rest).strip(), letters, st.text(alphabet=visible | st.just(" "), max_size=23)
)
"""Names as the contract takes them: a letter or digit first, nothing that shows as nothing."""
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
    "deal": st.none() | st.sampled_from(["winnable", "unwinnable", "unknown"]),
    "winnable": st.booleans(),
    "line": tuples_of(move_maps, 20),
    "slipped": st.none() | counts,
    "banned": st.none() | st.text(max_size=MAX_BAN_REASON),
    "won": st.booleans(),
    "offset": counts,
    "limit": st.integers(1, 100),
    "total": counts,
    "me": st.none() | st.integers(1, 2**31 - 1),
    "practice": st.booleans(),
    "finished": st.booleans(),
    "previous": st.none()
    | st.fixed_dictionaries({"date": dates, "number": st.just("123456"), "salt": salts}),
    "mode": st.sampled_from(["race", "solo", "daily", "practice", "challenge"]),
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
ghosts = st.builds(
    Ghost,
    player=ids,
    name=names,
    score=st.integers(0, 10**6),
    elapsed=counts,
    status=statuses,
    moves=counts,
)
challenge_entries = st.builds(
    ChallengeEntry,
    rank=st.integers(1, 10**6),
    player=ids,
    name=names,
    score=st.integers(0, 10**6),
    elapsed=counts,
    status=statuses,
    place=st.integers(1, 9),
    game=ids,
    finished=epochs,
)
ghost_lists = st.lists(ghosts, min_size=1, max_size=8).map(tuple)
challenge_boards = st.builds(
    ChallengeBoardInfo,
    code=rooms,
    variant=variants,
    owner=ids,
    ghosts=ghost_lists,
    entries=tuples_of(challenge_entries, 5),
    expires=epochs,
)
usernames = st.text(alphabet="abcdefghijkmnopqrstuvwxyz0123456789_.-", min_size=1, max_size=32)
passwords = st.text(min_size=8, max_size=256)
devices = st.text(max_size=64)
purposes = st.sampled_from(["register", "login"])
credentials = st.text(min_size=2, max_size=300)
session_entries = st.builds(
    SessionEntry, session=ids, device=devices, created=epochs, seen=epochs, current=st.booleans()
)

OVERRIDES: dict[tuple[str, str], st.SearchStrategy[Any]] = {
    ("register", "username"): usernames,
    ("register", "password"): passwords,
    ("login", "username"): usernames,
    ("login", "password"): passwords,
    ("login", "device"): st.none() | devices,
    ("password_change", "password"): passwords,
    ("password_change", "new_password"): passwords,
    ("welcome", "username"): st.none() | usernames,
    ("welcome", "session"): st.none() | ids,
    ("session", "username"): usernames,
    ("session", "session"): ids,
    ("sessions_list", "sessions"): tuples_of(session_entries, 4),
    ("passkey_options", "purpose"): purposes,
    ("passkey_options", "username"): st.none() | usernames,
    ("passkey_challenge", "purpose"): purposes,
    ("passkey_challenge", "options"): credentials,
    ("passkey_challenge", "timeout_ms"): st.integers(0, 600_000),
    ("passkey_register", "credential"): credentials,
    ("passkey_login", "credential"): credentials,
    ("passkey_login", "device"): st.none() | devices,
    ("challenge_new", "undo"): st.booleans(),
    ("challenge_new", "hints"): st.booleans(),
    ("challenge_take", "code"): rooms,
    ("challenge_board", "code"): rooms,
    ("challenge", "code"): rooms,
    ("challenge", "owner"): ids,
    ("challenge", "ghosts"): ghost_lists,
    ("challenge", "expires"): epochs,
    ("challenge_board_info", "code"): rooms,
    ("challenge_board_info", "owner"): ids,
    ("challenge_board_info", "ghosts"): ghost_lists,
    ("challenge_board_info", "entries"): tuples_of(challenge_entries, 5),
    ("challenge_board_info", "expires"): epochs,
    ("challenge_list_info", "challenges"): tuples_of(challenge_boards, 3),
    ("challenge_taken", "code"): rooms,
    ("challenge_taken", "entry"): challenge_entries,
    ("daily_ghost", "player"): st.none() | ids,
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
    ("finish_info", "moves"): counts,
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
    if cls.TYPE == "session_revoke":
        return st.builds(SessionRevoke, session=ids, ref=refs) | st.builds(
            SessionRevoke, all=st.just(True), ref=refs
        )
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


# ---------------------------------------------------------------- decoding failures


def error_of(data: Any) -> ProtocolError:
    """Return the error decoding ``data`` raises."""
    with pytest.raises(ProtocolError) as info:
        from_dict(data)
    return info.value
