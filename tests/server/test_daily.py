"""The daily tournament, leaderboards, statistics and forget-me, through the protocol."""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
import json
from typing import Any

import pytest

from protocol.game import Board, move_json
from protocol.solver import Budget, Verdict, solve_deal
from server.daily import choose_number, leaderboard_key
from server.store import Store

from .conftest import DAILY_SECRET, Client, accounts_only

pytestmark = pytest.mark.asyncio


@pytest.fixture
def open_client(open_client: Any) -> Any:
    """Every client of this file is an account: ranked play needs one."""
    return accounts_only(open_client)


def today(node: Any) -> str:
    return dt.datetime.fromtimestamp(node.clock(), dt.UTC).date().isoformat()


async def play_to_the_end(client: Client, start: dict[str, Any], number: int) -> dict[str, Any]:
    """Play the solver's winning line of the deal (or resign if none is found)."""
    solution = solve_deal(start["variant"], number, budget=Budget(nodes=400_000))
    version = start["v"]
    if solution.verdict is not Verdict.WINNABLE:
        return await client.request({"type": "resign", "game": start["game"], "v": version})
    answer: dict[str, Any] = {}
    for move in solution.moves:
        answer = await client.request(
            {"type": "move", "game": start["game"], "v": version, "move": move_json(move)}
        )
        assert answer["type"] == "accepted", answer
        version = answer["v"]
    return answer


async def eventually(
    client: Client, request: dict[str, Any], ready: Any, timeout: float = 10.0
) -> dict[str, Any]:
    """Repeat a query until its answer satisfies ``ready`` (results are recorded just after
    the end of a game is published)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        answer = await client.request(request)
        if ready(answer) or asyncio.get_running_loop().time() > deadline:
            return answer
        await asyncio.sleep(0.05)


async def test_one_ranked_attempt_a_second_is_refused_then_practice_is_allowed(
    local_node: Any, open_client: Any
) -> None:
    node = await local_node()
    ann: Client = await open_client(node, "Ann")
    early = await ann.request({"type": "daily_start", "practice": True})
    assert early["code"] == "not_allowed"
    start = await ann.request({"type": "daily_start"})
    assert start["type"] == "race_started" and start["mode"] == "daily" and start["daily"] == today(node)
    number = choose_number(DAILY_SECRET, today(node), "scorpion")
    assert hashlib.sha256(f"{number}:".encode()).hexdigest() != start["commitment"]  # salted
    from protocol.game import player_view

    assert start["view"] == player_view(Board.new("scorpion", number)).as_dict()
    while_racing = await ann.request({"type": "daily_start"})
    assert while_racing["code"] == "not_allowed"
    final = await play_to_the_end(ann, start, number)
    assert final["status"] in ("finished", "resigned")
    ended = await ann.expect("race_ended")
    assert "number" not in ended and "salt" not in ended, "a daily deal stays secret until the day is over"
    again = await ann.request({"type": "daily_start"})
    assert again["code"] == "daily_already_played"
    practice = await ann.request({"type": "daily_start", "practice": True})
    assert practice["type"] == "race_started" and practice["mode"] == "practice"
    assert practice["view"] == start["view"] and practice["commitment"] == start["commitment"]
    info = await ann.request({"type": "daily_info"})
    assert info["played"] is True and info["finished"] is True


async def test_the_daily_deal_is_the_same_for_everyone_and_is_revealed_after_the_day(
    local_node: Any, open_client: Any
) -> None:
    node = await local_node()
    ann: Client = await open_client(node, "Ann")
    bob: Client = await open_client(node, "Bob")
    info = await ann.request({"type": "daily_info", "variant": "wasp"})
    a_start = await ann.request({"type": "daily_start", "variant": "wasp"})
    b_start = await bob.request({"type": "daily_start", "variant": "wasp"})
    assert a_start["view"] == b_start["view"] and a_start["game"] != b_start["game"]
    assert a_start["commitment"] == info["commitment"]
    node.clock.now += 86_400
    later = await bob.request({"type": "daily_info", "variant": "wasp"})
    assert later["date"] != info["date"]
    previous = later["previous"]
    assert previous["date"] == info["date"]
    digest = hashlib.sha256(f"{previous['number']}:{previous['salt']}".encode()).hexdigest()
    assert digest == info["commitment"]
    from protocol.game import player_view

    assert player_view(Board.new("wasp", int(previous["number"]))).as_dict() == a_start["view"]


async def test_an_attempt_that_straddles_midnight_belongs_to_the_day_it_started(
    local_node: Any, open_client: Any
) -> None:
    node = await local_node()
    midnight = (int(node.clock.now) // 86_400 + 1) * 86_400
    node.clock.now = midnight - 5
    day = today(node)
    ann: Client = await open_client(node, "Ann")
    start = await ann.request({"type": "daily_start"})
    node.clock.now = midnight + 5
    await ann.request({"type": "resign", "game": start["game"], "v": start["v"]})
    await ann.expect("race_ended")
    old = await eventually(ann, {"type": "leaderboard", "date": day}, lambda a: a["entries"])
    new = await ann.request({"type": "leaderboard"})
    assert [e["player"] for e in old["entries"]] == [ann.player]
    assert new["date"] != day and new["entries"] == []
    fresh = await ann.request({"type": "daily_start"})
    assert fresh["type"] == "race_started" and fresh["daily"] == new["date"]


async def test_leaderboard_ranks_by_score_then_ending_then_time_or_stay_then_earlier_finish(
    local_node: Any, open_client: Any, redis_url: str
) -> None:
    node = await local_node()
    ann: Client = await open_client(node, "Ann")
    day = today(node)
    day_start = int(dt.datetime.fromisoformat(day).replace(tzinfo=dt.UTC).timestamp() * 1000)
    store = Store(redis_url)
    rows = [  # player, score, how it ended, elapsed, finished offset (s)
        ("p3", 1500, "finished", 400, 500),
        ("p1", 1500, "finished", 300, 900),
        ("p2", 1500, "finished", 300, 800),
        ("p6", 300, "resigned", 200, 300),
        ("p4", 300, "stuck", 100, 100),
        (ann.player, 900, "finished", 1400, 1460),
        ("p7", 300, "left", 500, 600),
        ("p8", 300, "playing", 1800, 1900),
    ]
    for pid, points, status, elapsed, offset in rows:
        finished = day_start + offset * 1000
        fields = {"name": pid.upper(), "score": points, "elapsed": elapsed, "finished": finished}
        fields["status"] = status
        key = leaderboard_key(points, status, elapsed, finished, day_start)
        assert await store.submit_score(day, "scorpion", pid, key, json.dumps(fields), 86_400_000)
    # An entry stored before attempts recorded how they ended, on the key of that time.
    old = {"name": "P5", "score": 0, "elapsed": 10, "finished": day_start + 20_000}
    old_key = float(((4 * 100 + 500 + 1200) << 36) + (10 << 18) + 20)
    assert await store.submit_score(day, "scorpion", "p5", old_key, json.dumps(old), 86_400_000)
    assert not await store.submit_score(day, "scorpion", "p1", 0.0, "{}", 86_400_000)
    await store.close()
    top = await ann.request({"type": "leaderboard", "limit": 3})
    assert [e["player"] for e in top["entries"]] == ["p2", "p1", "p3"]
    assert [e["rank"] for e in top["entries"]] == [1, 2, 3]
    assert top["total"] == 9 and top["me"] == 4
    page = await ann.request({"type": "leaderboard", "offset": 3, "limit": 3})
    assert [e["player"] for e in page["entries"]] == [ann.player, "p4", "p8"]
    # At 300 points: stuck and out of time level (the earlier finish first), ahead of those
    # who left or resigned, the longer stay first; then the old entry, without a status.
    rest = await ann.request({"type": "leaderboard", "offset": 6, "limit": 10})
    assert [(e["player"], e.get("status")) for e in page["entries"] + rest["entries"]] == [
        (ann.player, "finished"),
        ("p4", "stuck"),
        ("p8", "playing"),
        ("p7", "left"),
        ("p6", "resigned"),
        ("p5", None),
    ]
    around = await ann.request({"type": "around_me", "radius": 1})
    assert [e["rank"] for e in around["entries"]] == [3, 4, 5]
    assert around["entries"][1]["player"] == ann.player and around["me"] == 4
    bob: Client = await open_client(node, "Bob")
    nowhere = await bob.request({"type": "around_me"})
    assert nowhere["entries"] == [] and "me" not in nowhere


async def test_a_subscribed_client_sees_the_leaderboard_change_live(
    local_node: Any, open_client: Any
) -> None:
    node = await local_node()
    watcher: Client = await open_client(node, "Watcher")
    first = await watcher.request({"type": "leaderboard", "subscribe": True})
    assert first["entries"] == []
    ann: Client = await open_client(node, "Ann")
    start = await ann.request({"type": "daily_start"})
    await ann.request({"type": "resign", "game": start["game"], "v": start["v"]})
    update = await watcher.expect("leaderboard_page", timeout=5)
    assert [e["player"] for e in update["entries"]] == [ann.player]


async def test_a_player_cannot_watch_a_daily_game_before_finishing_their_own_attempt(
    local_node: Any, open_client: Any
) -> None:
    node = await local_node()
    ann: Client = await open_client(node, "Ann")
    bob: Client = await open_client(node, "Bob")
    start = await ann.request({"type": "daily_start"})
    listed = await bob.request({"type": "games_list"})
    assert start["game"] not in [g["game"] for g in listed["games"]]
    refused = await bob.request({"type": "watch", "game": start["game"]})
    assert refused["code"] == "spectating_forbidden" and "daily" in refused["message"]
    own = await bob.request({"type": "daily_start"})
    await bob.request({"type": "resign", "game": own["game"], "v": own["v"]})
    await bob.expect("race_ended")
    watching = await bob.request({"type": "watch", "game": start["game"]})
    assert watching["type"] == "spectate"


async def test_statistics_count_games_wins_scores_and_streaks_per_variant(
    local_node: Any, open_client: Any
) -> None:
    node = await local_node()
    ann: Client = await open_client(node, "Ann")
    start = await ann.request({"type": "daily_start"})
    number = choose_number(DAILY_SECRET, today(node), "scorpion")
    final = await play_to_the_end(ann, start, number)
    await ann.expect("race_ended")
    solo = await ann.request({"type": "solo_new", "variant": "wasp"})
    dealt = await ann.request({"type": "deal", "game": solo["game"], "v": solo["v"]})  # played: a move made
    assert dealt["type"] == "accepted", dealt
    await ann.request({"type": "resign", "game": solo["game"], "v": dealt["v"]})
    await ann.expect("race_ended", game=solo["game"])
    stats = await eventually(
        ann,
        {"type": "stats"},
        lambda a: (
            {r["variant"] for r in a["stats"]} == {"scorpion", "wasp"}
            and all(r["started"] == 1 for r in a["stats"])
            and any(r["dailies"] == 1 for r in a["stats"])
        ),
    )
    by_variant = {row["variant"]: row for row in stats["stats"]}
    scorpion, wasp = by_variant["scorpion"], by_variant["wasp"]
    assert scorpion["started"] == 1 and scorpion["dailies"] == 1
    if final["status"] == "finished":
        assert scorpion["won"] == 1 and scorpion["streak"] == 1 and scorpion["longest_streak"] == 1
        assert scorpion["best_score"] >= 900 and scorpion["best_time"] is not None
    assert wasp["started"] == 1 and wasp["won"] == 0 and wasp["streak"] == 0 and wasp["dailies"] == 0
    only = await ann.request({"type": "stats", "variant": "wasp"})
    assert [row["variant"] for row in only["stats"]] == ["wasp"]


async def test_forget_me_removes_saved_games_statistics_leaderboard_entries_and_identity(
    local_node: Any, open_client: Any, redis_url: str
) -> None:
    node = await local_node()
    ann: Client = await open_client(node, "Ann")
    start = await ann.request({"type": "daily_start"})
    await ann.request({"type": "resign", "game": start["game"], "v": start["v"]})
    await ann.expect("race_ended")
    saved = await ann.request({"type": "solo_new"})
    assert saved["type"] == "race_started"
    await eventually(ann, {"type": "leaderboard"}, lambda a: a["entries"])
    forgotten = await ann.request({"type": "forget_me"})
    assert forgotten["type"] == "forgotten"
    removed = forgotten["removed"]
    assert removed["identity"] is True and removed["saved_games"] == 1
    assert removed["statistics"] >= 1 and removed["leaderboard_entries"] == 1
    closed = await ann.expect("_closed", timeout=5)
    assert closed
    board = await (await open_client(node, "Bob")).request({"type": "leaderboard"})
    assert board["entries"] == []
    from websockets.asyncio.client import connect

    from protocol.wire.codec import MSGPACK, decode_dict, encode
    from protocol.wire.message import Hello

    async with connect(node.url, subprotocols=[MSGPACK]) as ws:  # type: ignore[list-item]
        await ws.send(encode(Hello(name="Ann", token=ann.token), MSGPACK))
        answer = decode_dict(await ws.recv(), MSGPACK)
    assert answer["code"] == "bad_token"
    store = Store(redis_url)
    leftovers = [key async for key in store.redis.scan_iter(f"*{ann.player}*")]
    await store.close()
    assert leftovers == [] or all(key.startswith("{g:") for key in leftovers), leftovers
