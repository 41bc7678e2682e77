"""Solo play, the daily tournament, leaderboards, statistics, replays and forget-me through the library."""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
from collections.abc import Callable
from typing import Any

import pytest

from client.errors import ServerError
from client.identity import TokenStore
from protocol.game import Board, move_from_json, move_json, player_view
from protocol.wire.message import (
    Forgotten,
    GamesUpdate,
    LeaderboardPage,
    RaceStarted,
    Snapshot,
    Spectators,
)

from .conftest import ClientFactory, NodeFactory, start_race

pytestmark = pytest.mark.asyncio

DEAL = 424242424242


async def until(check: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not check():
        assert asyncio.get_running_loop().time() < deadline, "condition not reached in time"
        await asyncio.sleep(0.02)


def today(node: Any) -> str:
    return dt.datetime.fromtimestamp(node.clock(), dt.UTC).date().isoformat()


async def test_a_solo_game_hints_moves_undoes_and_replays_the_same_deal(
    local_node: Any, make_client: ClientFactory
) -> None:
    node = await local_node(test_deals=str(DEAL))
    ann = await make_client(node, "Ann")
    started = await ann.solo_new("scorpion")
    board = Board.new("scorpion", DEAL)
    assert isinstance(started, RaceStarted) and started.mode == "solo" and started.daily is None
    assert started.view == player_view(board).as_dict()
    assert started.options.undo and started.options.hints and not started.options.spectators
    race = ann.race
    assert race is not None and race.game == started.game and race.mode == "solo" and race.solo
    assert [r.player for r in race.racers.values()] == [ann.player]
    hints = await ann.hint()
    assert hints.v == 1 and hints.moves
    best = move_from_json(hints.moves[0])
    assert race.explain(best) is None
    moved = await ann.move(best)
    assert moved.v == 2 and moved.summary["moves"] == 1 and race.v == 2
    undone = await ann.undo()
    assert undone.v == 3 and undone.view == started.view and undone.summary["moves"] == 0
    assert race.view == started.view
    replay = await ann.solo_replay()
    assert replay.mode == "solo" and replay.game != started.game and replay.view == started.view
    assert ann.race is not None and ann.race.game == replay.game and ann.race.v == 1
    fresh = await ann.solo_new("wasp", "when-stuck", save=False)
    assert fresh.variant == "wasp" and fresh.options.reserve_rule == "when-stuck"
    assert ann.race.game == fresh.game and ann.race.rule == "when-stuck"
    resigned = await ann.resign()
    assert resigned.status == "resigned"
    ended = await ann.race_ended(fresh.game, timeout=10)
    assert ended.number is not None and ended.salt is not None, "a solo deal is revealed at once"
    assert ann.race.revealed
    digest = hashlib.sha256(f"{ended.number}:{ended.salt}".encode()).hexdigest()
    assert digest == fresh.commitment


async def test_a_saved_solo_game_is_listed_and_resumed_from_another_device(
    local_node: Any, make_client: ClientFactory
) -> None:
    node = await local_node(test_deals=str(DEAL))
    phone = await make_client(node, "Ann")
    started = await phone.solo_new()
    board = Board.new("scorpion", DEAL)
    move = next(m for m in board.legal_moves() if not m.is_deal)
    await phone.move(move)
    board.push(move)
    await phone.close()
    laptop = await make_client(node, "Ann", token=phone.token, auto_resume=False)
    assert laptop.player == phone.player and laptop.race is None
    saved = await laptop.saved_games()
    assert [(g.game, g.variant, g.start, g.summary["moves"]) for g in saved.games] == [
        (started.game, "scorpion", started.start, 1)
    ]
    snapshot = await laptop.solo_resume(started.game)
    assert isinstance(snapshot, Snapshot) and snapshot.mode == "solo" and snapshot.v == 2
    assert snapshot.view == player_view(board).as_dict()
    race = laptop.race
    assert race is not None and race.mode == "solo" and race.v == 2 and race.playing
    follow = next(m for m in board.legal_moves() if not m.is_deal)
    assert (await laptop.move(follow)).v == 3
    stranger = await make_client(node, "Eve")
    with pytest.raises(ServerError) as refused:
        await stranger.solo_resume(started.game)
    assert refused.value.code == "not_your_game"
    assert (await stranger.saved_games()).games == ()


async def test_the_daily_attempt_practice_reveal_leaderboards_and_statistics(
    local_node: Any, make_client: ClientFactory
) -> None:
    node = await local_node()
    day = today(node)
    ann = await make_client(node, "Ann", account=True)
    bob = await make_client(node, "Bob", account=True)
    info = await ann.daily_info()
    assert (info.date, info.variant, info.played, info.finished) == (day, "scorpion", False, False)
    assert info.previous is None and len(info.commitment) == 64
    with pytest.raises(ServerError) as early:
        await ann.daily_start(practice=True)
    assert early.value.code == "not_allowed"
    watcher = await make_client(node, "Watcher")
    first = await watcher.leaderboard(subscribe=True)
    assert (first.date, first.total, first.entries, first.me) == (day, 0, (), None)
    started = await ann.daily_start()
    assert started.mode == "daily" and started.daily == day and started.commitment == info.commitment
    assert not started.options.undo and not started.options.hints  # the ranked attempt has neither
    race = ann.race
    assert race is not None and (race.mode, race.daily) == ("daily", day)
    with pytest.raises(ServerError) as no_hints:
        await ann.hint()
    assert no_hints.value.code == "hints_forbidden"
    await ann.resign()
    ended = await ann.race_ended(started.game, timeout=10)
    assert ended.number is None and ended.salt is None, "the deal stays secret until the day is over"
    assert race.ended is ended and not race.revealed
    assert [(s.player, s.status, s.rank) for s in ended.standings] == [(ann.player, "resigned", 1)]
    pushed = await watcher.wait_for(LeaderboardPage, timeout=5, ref=None)
    assert [e.player for e in pushed.entries] == [ann.player] and watcher.leaderboard_page is pushed
    with pytest.raises(ServerError) as again:
        await ann.daily_start()
    assert again.value.code == "daily_already_played"
    practice = await ann.daily_start(practice=True)
    assert practice.mode == "practice" and practice.view == started.view and practice.daily == day
    assert ann.race is not None and ann.race.mode == "practice"
    later = await ann.daily_info()
    assert later.played and later.finished
    board = await bob.leaderboard()
    assert (board.variant, board.date, board.offset, board.total, board.me) == ("scorpion", day, 0, 1, None)
    entry = board.entries[0]
    assert (entry.rank, entry.player, entry.name, entry.score) == (1, ann.player, "Ann", 0)
    assert entry.finished >= started.start
    mine = await ann.around_me(radius=0)
    assert mine.me == 1 and [e.player for e in mine.entries] == [ann.player]
    nowhere = await bob.around_me()
    assert nowhere.entries == () and nowhere.me is None
    assert (await bob.leaderboard("wasp")).entries == ()
    stats = await ann.stats()
    assert [
        (s.variant, s.started, s.won, s.best_score, s.best_time, s.average_score, s.streak, s.dailies)
        for s in stats.stats
    ] == [("scorpion", 1, 0, 0, None, 0, 0, 1)]
    assert (await ann.stats("wasp")).stats == ()
    node.clock.now += 86_400
    tomorrow = await bob.daily_info()
    assert tomorrow.date != day and tomorrow.previous is not None
    previous = tomorrow.previous
    assert previous["date"] == day and previous["commitment"] == info.commitment
    digest = hashlib.sha256(f"{previous['number']}:{previous['salt']}".encode()).hexdigest()
    assert digest == info.commitment
    assert player_view(Board.new("scorpion", int(previous["number"]))).as_dict() == started.view
    yesterday = await bob.leaderboard(date=day)
    assert [e.player for e in yesterday.entries] == [ann.player]


async def test_forget_me_returns_what_was_removed_and_the_session_ends(
    local_node: Any, make_client: ClientFactory
) -> None:
    node = await local_node()
    ann = await make_client(node, "Ann", store=TokenStore(), account=True)
    started = await ann.daily_start()
    await ann.resign()
    await ann.race_ended(started.game, timeout=10)
    await ann.solo_new()
    await asyncio.sleep(0.1)
    old_token, old_player = ann.token, ann.player
    forgotten = await ann.forget_me()
    assert isinstance(forgotten, Forgotten)
    assert forgotten.removed == {
        "identity": True,
        "saved_games": 1,
        "statistics": 1,
        "leaderboard_entries": 1,
        "names_in_finished_games": 1,
        "sessions": 1,
        "ratings": 0,
        "daily_attempts": 1,
    }
    assert TokenStore().load(node.url) is None and ann.token is None
    await until(lambda: ann.closed is not None)
    assert ann.closed is not None and ann.closed.code == 1000
    again = await make_client(node, "Ann", token=old_token)
    assert again.player != old_player, "the old token no longer works: a fresh identity"
    assert (await again.leaderboard()).entries == ()


async def test_replay_lists_the_moves_of_a_finished_game(local_node: Any, make_client: ClientFactory) -> None:
    node = await local_node(test_deals=str(DEAL))
    ann = await make_client(node, "Ann")
    started = await ann.solo_new()
    board = Board.new("scorpion", DEAL)
    move = next(m for m in board.legal_moves() if not m.is_deal)
    await ann.move(move)
    await ann.undo()
    await ann.deal()
    await ann.resign()
    ended = await ann.race_ended(started.game, timeout=10)
    log = await ann.replay(started.game)
    assert (log.game, log.variant, log.number, log.salt) == (started.game, "scorpion", str(DEAL), ended.salt)
    assert len(log.logs) == 1 and log.logs[0].player == ann.player
    assert list(log.logs[0].moves) == [move_json(move), {"undo": True}, {"deal": True}]
    assert len(log.logs[0].times) == 3 and list(log.logs[0].times) == sorted(log.logs[0].times)
    assert [(s.player, s.status) for s in log.standings] == [(ann.player, "resigned")]


async def test_a_subscribed_games_list_and_spectator_counts_follow_the_server(
    start_node: NodeFactory, make_client: ClientFactory
) -> None:
    node = start_node()
    lobby = await make_client(node, "Lobby")
    games = await lobby.games_list(subscribe=True)
    assert games.games == () and lobby.games == {}
    ann = await make_client(node, "Ann")
    bob = await make_client(node, "Bob")
    game = await start_race(ann, bob)
    await until(lambda: game in lobby.games)
    updates = [e for e in lobby._events if isinstance(e, GamesUpdate)]
    assert [[g.game for g in u.added] for u in updates] == [[game]] and list(lobby.games) == [game]
    watcher = await make_client(node, "Watcher")
    await watcher.watch(game=game)
    # The count comes at the server's next tick, which may come before the watch's answer
    # does: read it from what Ann has received rather than waiting for the next one.
    await until(lambda: any(isinstance(e, Spectators) and e.game == game for e in ann._events))
    count = next(e for e in reversed(ann._events) if isinstance(e, Spectators) and e.game == game)
    assert count.count == 1 and ann.race is not None and ann.race.spectators == 1
    assert watcher.race is not None and watcher.race.spectating
    await ann.resign()
    await bob.resign()
    await until(lambda: game not in lobby.games)
    assert lobby.games == {}
