"""Standings that reward playing on (decision 12), through real nodes: rated races and the
daily board, where stopping first no longer ranks first."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from server.daily import leaderboard_key

from .conftest import Client, NodeFactory, accounts_only, start_race
from .test_daily import eventually


@pytest.fixture
def open_client(open_client: Any) -> Any:
    """Every client of this file is an account: ranked play needs one."""
    return accounts_only(open_client)


async def rated_pair(start_node: NodeFactory, open_client: Any, limit: float) -> tuple[Client, Client]:
    first, second = start_node(race_time_limit=limit), start_node(race_time_limit=limit)
    return await open_client(first, "Ann"), await open_client(second, "Bob")


def changes_of(message: dict[str, Any]) -> dict[str, tuple[int, int, int]]:
    return {c["player"]: (c["before"], c["after"], c["deviation"]) for c in message["changes"]}


async def test_a_racer_who_plays_on_at_zero_points_beats_the_one_who_resigned_first(
    start_node: NodeFactory, open_client: Any
) -> None:
    ann, bob = await rated_pair(start_node, open_client, limit=3)
    _room, _ann_start, bob_start = await start_race(ann, bob, {"rated": True})
    resigned = await bob.request({"type": "resign", "game": bob_start["game"], "v": bob_start["v"]})
    assert resigned["type"] == "accepted"
    # Ann makes no move: the time limit ends the race with her still playing.
    ended = await ann.expect("race_ended", timeout=10)
    assert [(r["player"], r["rank"], r["status"], r["score"]) for r in ended["standings"]] == [
        (ann.player, 1, "playing", 0),
        (bob.player, 2, "resigned", 0),
    ]
    assert ended["standings"][0]["elapsed"] == 3
    change = await ann.expect("rating_change", game=ended["game"], timeout=10)
    # One win and one loss between newcomers (1500, deviation 350): ±162.
    assert changes_of(change) == {ann.player: (1500, 1662, 290), bob.player: (1500, 1338, 290)}


async def test_two_racers_who_resign_at_zero_points_draw_and_the_one_who_stayed_longer_ranks_first(
    start_node: NodeFactory, open_client: Any
) -> None:
    ann, bob = await rated_pair(start_node, open_client, limit=10)
    _room, ann_start, bob_start = await start_race(ann, bob, {"rated": True})
    first = await bob.request({"type": "resign", "game": bob_start["game"], "v": bob_start["v"]})
    assert first["type"] == "accepted"
    await asyncio.sleep(1.2)  # Ann stays a second longer on the game's clock
    second = await ann.request({"type": "resign", "game": ann_start["game"], "v": ann_start["v"]})
    assert second["type"] == "accepted"
    ended = await ann.expect("race_ended", timeout=10)
    rows = ended["standings"]
    assert [(r["player"], r["rank"], r["status"], r["score"]) for r in rows] == [
        (ann.player, 1, "resigned", 0),
        (bob.player, 2, "resigned", 0),
    ]
    assert rows[0]["elapsed"] > rows[1]["elapsed"]
    # The same score and the same kind of ending: a draw, so neither rating moves (it used
    # to be +162 for whoever resigned first, -162 for the other); both grow surer.
    change = await ann.expect("rating_change", game=ended["game"], timeout=10)
    assert changes_of(change) == {ann.player: (1500, 1500, 290), bob.player: (1500, 1500, 290)}
    for client, rank in ((ann, 1), (bob, 2)):
        profile = await eventually(client, {"type": "profile"}, lambda a: a["recent"])
        (game,) = profile["recent"]
        assert (game["rank"], game["status"], game["change"]) == (rank, "resigned", 0)


async def test_the_daily_board_puts_playing_on_first_then_the_longer_stay_and_says_how_each_ended(
    local_node: Any, open_client: Any
) -> None:
    node = await local_node(race_time_limit=2.5)
    ann: Client = await open_client(node, "Ann")
    bob: Client = await open_client(node, "Bob")
    cat: Client = await open_client(node, "Cat")
    starts = {c.player: await c.request({"type": "daily_start"}) for c in (bob, ann, cat)}
    assert all(s["type"] == "race_started" and s["mode"] == "daily" for s in starts.values())
    bob_start = starts[bob.player]
    await bob.request({"type": "resign", "game": bob_start["game"], "v": bob_start["v"]})
    await asyncio.sleep(1.2)
    ann_start = starts[ann.player]
    await ann.request({"type": "resign", "game": ann_start["game"], "v": ann_start["v"]})
    # Cat plays on (no move to make here) until the time limit ends her attempt.
    await cat.expect("race_ended", timeout=10)
    board = await eventually(cat, {"type": "leaderboard"}, lambda a: a["total"] == 3)
    entries = board["entries"]
    assert [(e["player"], e["rank"], e["status"], e["score"]) for e in entries] == [
        (cat.player, 1, "playing", 0),
        (ann.player, 2, "resigned", 0),
        (bob.player, 3, "resigned", 0),
    ]
    assert entries[0]["elapsed"] == 2 and entries[1]["elapsed"] > entries[2]["elapsed"]


def test_the_leaderboard_key_stays_exact_in_a_float_at_its_extremes() -> None:
    day_start = 1_780_000_000_000
    late = day_start + 200_000_000  # past the 17 bits of seconds kept: counted as their end
    worst = leaderboard_key(0, "left", 0, late, day_start)
    assert worst == ((4 * 100 + 500 + 1200) << 36) + (2 << 34) + ((1 << 34) - 1) < 1 << 48
    best = leaderboard_key(2100, "finished", 0, day_start, day_start)
    assert best == 0.0
    # A day's order, whatever the clock: each key below the next.
    keys = [
        leaderboard_key(2040, "finished", 60, day_start + 900_000, day_start),
        leaderboard_key(200, "stuck", 50, day_start + 50_000, day_start),
        leaderboard_key(200, "playing", 1800, day_start + 1_800_000, day_start),
        leaderboard_key(200, "resigned", 1799, day_start + 1_799_000, day_start),
        leaderboard_key(200, "left", 60, day_start + 60_000, day_start),
        leaderboard_key(100, "finished", 2000, day_start + 2_000_000, day_start),
    ]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)
