"""Fair play on real nodes and a real Redis: a racer who follows the solver goes to review,
an honest bot does not; a daily attempt replaying another account's earlier game of the
day goes to review, one played independently does not; scorpion-admin lists the review
queue, bans (ranked play refused, rating and daily boards re-ranked, an opponent
refunded), unbans, and logs who, when, why."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import math
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from client.bot import choose_move
from client.model import position_key
from protocol.fairplay import PLAYER_THRESHOLD
from protocol.game import Board, Move, hint_scores, move_json
from protocol.solver import Budget, solve
from server.daily import choose_number
from server.store import Store

from .conftest import DAILY_SECRET, Client, NodeFactory, accounts_only

ROOT = Path(__file__).resolve().parents[2]
DEAL = 17437166598339580354
"""Winnable: the solver wins it in 51 moves; the hint bot loses it."""


@pytest.fixture
def open_client(open_client: Any) -> Any:
    """Every client of this file is an account: ranked play needs one."""
    return accounts_only(open_client)


def solver_line() -> list[Move]:
    return solve(Board.new("scorpion", DEAL), Budget(nodes=200_000)).moves


def bot_line() -> list[Move]:
    board, seen, idle, line = Board.new("scorpion", DEAL), set(), 0, []
    while len(line) < 200 and not board.is_won():
        seen.add(position_key(board))
        move = choose_move(board, seen, idle)
        if move is None:
            break
        idle = 0 if dict(hint_scores(board)).get(move, 0) > 0 else idle + 1
        board.push(move)
        line.append(move)
    return line


def weak_line(number: int, slip: float, seed: int) -> tuple[list[Move], int]:
    """A weaker player's game of a deal: the hint bot's, with another useful move on a share
    ``slip`` of moves; return it and how often it left the hint's first choice."""
    board, seen, idle, line, left = Board.new("scorpion", number), set(), 0, [], 0
    rng = random.Random(seed)
    while len(line) < 200 and not board.is_won():
        seen.add(position_key(board))
        move = choose_move(board, seen, idle)
        if move is None:
            break
        ranked = hint_scores(board)
        others = [m for m, value in ranked if value >= 0 and not m.is_deal and m != move]
        if others and rng.random() < slip:
            move = rng.choice(others)
        left += move != ranked[0][0]
        idle = 0 if dict(ranked).get(move, 0) > 0 else idle + 1
        board.push(move)
        line.append(move)
    return line, left


async def ranked_daily(client: Client, line: list[Move], seed: int) -> str:
    """Play ``line`` as the client's ranked attempt of today's deal, then resign; return the game."""
    start = await client.request({"type": "daily_start"})
    assert start["type"] == "race_started" and start["mode"] == "daily", start
    v = await play(client, start["game"], start["v"], line, seed)
    resigned = await client.request({"type": "resign", "game": start["game"], "v": v})
    assert resigned["type"] == "accepted" or resigned["code"] == "game_over", resigned  # or stuck
    await client.expect("race_ended", game=start["game"], timeout=20)
    return str(start["game"])


async def play(client: Client, game: str, v: int, line: list[Move], seed: int) -> int:
    """Play ``line`` with irregular, person-like pauses between moves; return the version."""
    rng = random.Random(seed)
    for move in line:
        await asyncio.sleep(0.02 * math.exp(rng.gauss(0, 1)))
        answer = await client.request({"type": "move", "game": game, "v": v, "move": move_json(move)})
        assert answer["type"] == "accepted", answer
        v = answer["v"]
    return v


def admin(redis_url: str, *args: str) -> Any:
    """Run scorpion-admin as a subprocess with --json; return what it printed."""
    command = [sys.executable, "-m", "server.admin", "--redis-url", redis_url, *args, "--json"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


async def until(check: Any, timeout: float = 30.0) -> Any:
    for _ in range(int(timeout / 0.1)):
        if found := await check():
            return found
        await asyncio.sleep(0.1)
    raise AssertionError("not in time")


async def test_a_solver_follower_is_reviewed_banned_refunded_against_and_unbanned(
    start_node: NodeFactory, open_client: Any, redis_url: str
) -> None:
    node = start_node(test_deals=DEAL)
    ann: Client = await open_client(node, "Ann")
    bob: Client = await open_client(node, "Bob")
    # A ranked daily attempt each, resigned at once: both on today's board.
    for client in (bob, ann):
        first = await client.request({"type": "daily_start"})
        await client.request({"type": "resign", "game": first["game"], "v": first["v"]})
        await client.expect("race_ended", game=first["game"])
    # A rated quick match: Ann follows the solver's line and wins, Bob plays the hint bot's.
    for client in (ann, bob):
        assert (await client.request({"type": "queue_join", "variant": "scorpion"}))["rated"] is True
    start = await ann.expect("race_started")
    await bob.expect("race_started", game=start["game"])
    game = start["game"]
    _, bob_v = await asyncio.gather(
        play(ann, game, start["v"], solver_line(), 1), play(bob, game, start["v"], bot_line(), 2)
    )
    resigned = await bob.request({"type": "resign", "game": game, "v": bob_v})
    assert resigned["type"] == "accepted" or resigned["code"] == "game_over", resigned  # or stuck
    ended = await ann.expect("race_ended", game=game, timeout=20)
    assert ended["standings"][0]["player"] == ann.player
    await bob.expect("rating_change", game=game)

    store = Store(redis_url)
    try:

        async def analysed(player: str) -> list[dict[str, Any]] | None:
            games = await store.fairplay_games(player)
            return games if len(games) == 2 else None

        ann_games = await until(lambda: analysed(ann.player))
        bob_games = await until(lambda: analysed(bob.player))
        ranked = {g["mode"] for g in ann_games}
        assert len(ann_games) == 2 and ranked == {"race", "daily"}
        race = next(g for g in ann_games if g["mode"] == "race")
        assert (
            race["score"] >= PLAYER_THRESHOLD and race["solver"]["hits"] == race["solver"]["positions"] >= 5
        )
        assert race["timing"]["score"] == 0.0  # person-like pauses: the moves alone gave her away
        bob_race = next(g for g in bob_games if g["mode"] == "race")
        assert bob_race["score"] < 0
        assert [p for p, _ in await store.review_queue()] == [ann.player]

        # scorpion-admin fairplay: the queue with its evidence per game.
        review = admin(redis_url, "fairplay")["review"]
        assert [entry["player"] for entry in review] == [ann.player]
        assert {g["game"] for g in review[0]["games"]} >= {game}
        assert review[0]["score"] >= PLAYER_THRESHOLD
        dismissed = admin(redis_url, "dismiss", bob.player, "--reason", "not listed", "--by", "mod")
        assert dismissed["was_listed"] is False
        assert [entry["player"] for entry in admin(redis_url, "fairplay")["review"]] == [ann.player]

        bob_before = (await store.ratings([bob.player], "scorpion"))[bob.player]
        assert bob_before is not None
        assert await store.rating_rank("scorpion", ann.player) == 0
        board = next(iter(await store.redis.smembers(f"boards:{ann.player}")))
        assert await store.redis.zscore(board, ann.player) is not None

        # Ban: off the boards (Bob moves up), Bob refunded what he lost to Ann.
        done = admin(redis_url, "ban", ann.player, "--reason", "followed a solver", "--by", "mod")
        assert done["rating_boards"] == ["scorpion"] and done["daily_boards"] == [board]
        (refund,) = done["refunds"]
        assert refund["player"] == bob.player and refund["game"] == game and refund["points"] > 0
        bob_after = (await store.ratings([bob.player], "scorpion"))[bob.player]
        assert bob_after is not None
        assert abs(bob_after.rating - (bob_before.rating + refund["points"])) < 1e-6
        assert await store.rating_rank("scorpion", ann.player) is None
        assert await store.rating_rank("scorpion", bob.player) == 0
        assert await store.redis.zscore(board, ann.player) is None
        assert await store.redis.zrange(board, 0, -1) == [bob.player]
        assert await store.review_queue() == []
        again = admin(redis_url, "ban", ann.player, "--reason", "again", "--by", "mod")
        assert again["already"] and again["refunds"] == []  # refunds are given once

        # Ann sees it: ranked requests refused with the reason, and in her next welcome.
        for request in (
            {"type": "queue_join", "variant": "scorpion"},
            {"type": "daily_start"},
            {"type": "room_create", "variant": "scorpion", "options": {"rated": True}},
        ):
            answer = await ann.request(request)
            assert answer["type"] == "error" and answer["code"] == "banned", answer
            assert "followed a solver" in answer["message"]
        rated_room = await bob.request(
            {"type": "room_create", "variant": "scorpion", "options": {"rated": True}}
        )
        joined = await ann.request({"type": "room_join", "room": rated_room["room"]})
        assert joined["type"] == "error" and joined["code"] == "banned", joined
        await bob.request({"type": "room_leave"})
        friends = await bob.request({"type": "room_create", "variant": "scorpion"})
        assert (await ann.request({"type": "room_join", "room": friends["room"]}))["type"] == "room"
        await ann.request({"type": "room_leave"})
        await bob.request({"type": "room_leave"})
        casual = await ann.request({"type": "queue_join", "variant": "scorpion", "rated": False})
        assert casual["type"] == "queued"
        await ann.request({"type": "queue_cancel"})
        again_ann: Client = await open_client(node, "Ann", token=ann.token)
        assert again_ann.welcome["banned"] == "followed a solver"
        assert "banned" not in bob.welcome

        # Unban: ranked play again (the boards and refunds stay as they are).
        lifted = admin(redis_url, "unban", ann.player, "--reason", "appeal granted", "--by", "lead")
        assert lifted["was_banned"] is True
        queued = await ann.request({"type": "queue_join", "variant": "scorpion"})
        assert queued["type"] == "queued" and queued["rated"] is True
        assert await store.rating_rank("scorpion", ann.player) is None

        log = admin(redis_url, "log")["log"]
        assert [(e["action"], e["by"], e["reason"]) for e in log] == [
            ("unban", "lead", "appeal granted"),
            ("ban", "mod", "again"),
            ("ban", "mod", "followed a solver"),
            ("dismiss", "mod", "not listed"),
        ]
        assert [e["player"] for e in log] == [ann.player] * 3 + [bob.player]
        assert all(e["at"] > 0 for e in log)
    finally:
        await store.close()


async def test_a_daily_attempt_replaying_another_accounts_earlier_game_goes_to_review(
    start_node: NodeFactory, open_client: Any, redis_url: str
) -> None:
    node = start_node(daily_secret=DAILY_SECRET)
    number = choose_number(DAILY_SECRET, dt.datetime.now(dt.UTC).date().isoformat(), "scorpion")
    # Bob's game of the day (Ann's second account, or a friend's): one that leaves the hint's
    # choice a few times. Carol plays the deal on her own; Ann replays Bob's line.
    lines = [weak_line(number, 0.4, seed) for seed in range(40)]
    scouted = max(lines, key=lambda found: found[1])[0]
    own = next(line for line, left in lines if left >= 3 and line[:5] != scouted[:5])
    bob: Client = await open_client(node, "Bob")
    carol: Client = await open_client(node, "Carol")
    ann: Client = await open_client(node, "Ann")
    store = Store(redis_url)
    try:

        async def analysed(player: str) -> dict[str, Any] | None:
            games = await store.fairplay_games(player)
            return games[0] if games else None

        bob_game = await ranked_daily(bob, scouted, 1)
        await until(lambda: analysed(bob.player))
        carol_game = await ranked_daily(carol, own, 2)
        carol_entry = await until(lambda: analysed(carol.player))
        assert carol_entry["game"] == carol_game and carol_entry["prior"]["games"] == 1
        assert (
            carol_entry["prior"]["score"] < PLAYER_THRESHOLD / 2 and carol_entry["score"] < PLAYER_THRESHOLD
        )
        ann_game = await ranked_daily(ann, scouted, 3)
        ann_entry = await until(lambda: analysed(ann.player))
        assert ann_entry["game"] == ann_game and ann_entry["mode"] == "daily"
        prior = ann_entry["prior"]
        assert prior["games"] == 2 and prior["hits"] == prior["positions"] >= 3
        assert ann_entry["timing"]["score"] == 0.0  # person-like pauses: the line alone tells
        assert ann_entry["score"] >= PLAYER_THRESHOLD
        assert (prior["player"], prior["game"]) == (bob.player, bob_game)  # for the operator
        assert [p for p, _ in await store.review_queue()] == [ann.player]
        command = [sys.executable, "-m", "server.admin", "--redis-url", redis_url, "fairplay"]
        shown = subprocess.run(command, capture_output=True, text=True, timeout=60, cwd=ROOT)
        assert f"player {bob.player}'s earlier game {bob_game}" in shown.stdout, shown
    finally:
        await store.close()


def test_scorpion_admin_reads_the_embedded_store_of_a_data_directory_or_says_it_has_none(
    tmp_path: Path,
) -> None:
    command = [sys.executable, "-m", "server.admin", "--data-dir", str(tmp_path), "log"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 1 and "no running store" in done.stderr
    bad = subprocess.run(
        [sys.executable, "-m", "server.admin", "ban", "p1", "--reason", ""],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert bad.returncode == 2 and "reason" in bad.stderr
