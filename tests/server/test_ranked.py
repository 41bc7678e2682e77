"""Rated races between real server nodes: rating changes, profiles, rating boards, forget-me."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from protocol.wire.codec import JSON
from tests.server.conftest import Client, NodeFactory, accounts_only
from tests.server.test_race import play_line, winnable_deal


@pytest.fixture
def open_client(open_client: Any) -> Any:
    """Every client of this file is an account: ranked play needs one."""
    return accounts_only(open_client)


async def rated_race(
    start_node: NodeFactory, open_client: Any, *, rated: bool = True, **settings: Any
) -> tuple[Client, Client, dict[str, Any]]:
    """Race Ann (first node) against Bob (second node) in a room; Ann wins, Bob resigns."""
    number, line = winnable_deal()
    first = start_node(test_deals=number, **settings)
    second = start_node(**settings)
    ann: Client = await open_client(first, "Ann")
    bob: Client = await open_client(second, "Bob", fmt=JSON)
    room = await ann.request(
        {"type": "room_create", "variant": "scorpion", "options": {"undo": True, "rated": rated}}
    )
    await bob.request({"type": "room_join", "room": room["room"]})
    await bob.request({"type": "ready", "ready": True})
    await ann.send({"type": "room_start"})
    start = await ann.expect("race_started")
    assert start["options"]["rated"] is rated
    bob_start = await bob.expect("race_started")
    resigned = await bob.request({"type": "resign", "game": bob_start["game"], "v": bob_start["v"]})
    assert resigned["type"] == "accepted"
    await play_line(ann, start["game"], resigned["v"], line)
    ended = await ann.expect("race_ended")
    return ann, bob, ended


async def test_a_rated_race_moves_the_winner_up_and_the_one_who_resigned_down_and_tells_both(
    start_node: NodeFactory, open_client: Any
) -> None:
    ann, bob, ended = await rated_race(start_node, open_client)
    assert [row["player"] for row in ended["standings"]] == [ann.player, bob.player]
    for client in (ann, bob):
        change = await client.expect("rating_change", game=ended["game"])
        by_player = {c["player"]: c for c in change["changes"]}
        assert by_player[ann.player]["before"] == 1500 < by_player[ann.player]["after"]
        assert by_player[bob.player]["before"] == 1500 > by_player[bob.player]["after"]
        assert all(c["provisional"] and c["deviation"] < 350 for c in change["changes"])
    # Glicko-2 from 1500/350/0.06 after one win: 1662 (and 1338 after one loss).
    assert by_player[ann.player]["after"] == 1662 and by_player[bob.player]["after"] == 1338


async def test_a_profile_shows_ratings_statistics_and_the_rated_game_with_its_change(
    start_node: NodeFactory, open_client: Any
) -> None:
    ann, bob, ended = await rated_race(start_node, open_client)
    await ann.expect("rating_change", game=ended["game"])
    own = await ann.request({"type": "profile"})
    assert own["type"] == "profile_info" and own["me"] is True and own["name"] == "Ann"
    (rating,) = own["ratings"]
    assert rating["variant"] == "scorpion" and rating["rating"] == 1662 and rating["games"] == 1
    assert rating["provisional"] is True and rating["rank"] == 1
    (stats,) = own["stats"]
    assert stats["won"] == 1
    (game,) = own["recent"]
    assert game["game"] == ended["game"] and game["rated"] is True and game["change"] == 162
    assert game["rank"] == 1 and game["racers"] == 2 and game["replayable"] is True
    seen_by_bob = await bob.request({"type": "profile", "player": ann.player})
    assert seen_by_bob["me"] is False and seen_by_bob["ratings"] == own["ratings"]
    bobs = await bob.request({"type": "profile"})
    assert bobs["recent"][0]["change"] == -162 and bobs["recent"][0]["status"] == "resigned"
    unknown = await bob.request({"type": "profile", "player": "p0000000000000000"})
    assert unknown["type"] == "error" and unknown["code"] == "no_such_player"


async def test_the_rating_board_ranks_by_rating_with_pages_and_around_me(
    start_node: NodeFactory, open_client: Any
) -> None:
    ann, bob, ended = await rated_race(start_node, open_client)
    await bob.expect("rating_change", game=ended["game"])
    page = await bob.request({"type": "rating_board", "variant": "scorpion"})
    assert page["total"] == 2 and page["me"] == 2
    assert [(e["rank"], e["player"], e["rating"]) for e in page["entries"]] == [
        (1, ann.player, 1662),
        (2, bob.player, 1338),
    ]
    assert all(e["provisional"] and e["games"] == 1 for e in page["entries"])
    second = await bob.request({"type": "rating_board", "variant": "scorpion", "offset": 1, "limit": 1})
    assert [e["player"] for e in second["entries"]] == [bob.player] and second["offset"] == 1
    around = await bob.request({"type": "rating_board", "variant": "scorpion", "around_me": True, "limit": 3})
    assert around["me"] == 2 and {e["player"] for e in around["entries"]} == {ann.player, bob.player}
    other = await bob.request({"type": "rating_board", "variant": "wasp", "around_me": True})
    assert other["entries"] == [] and other.get("me") is None and other["total"] == 0


async def test_a_race_without_the_rated_option_changes_no_rating(
    start_node: NodeFactory, open_client: Any
) -> None:
    ann, _bob, _ended = await rated_race(start_node, open_client, rated=False)
    profile = await ann.request({"type": "profile"})
    for _ in range(50):  # the finished game is recorded a moment after its end
        if profile["recent"]:
            break
        await asyncio.sleep(0.05)
        profile = await ann.request({"type": "profile"})
    assert profile["ratings"] == [] and profile["recent"][0]["rated"] is False
    assert "change" not in profile["recent"][0]
    with pytest.raises(AssertionError):
        await ann.seen("rating_change", timeout=1)


async def test_past_the_days_limit_two_players_races_leave_their_ratings_as_they_were(
    start_node: NodeFactory, open_client: Any
) -> None:
    ann, bob, ended = await rated_race(start_node, open_client, rated_pair_limit=1)
    first = await ann.expect("rating_change", game=ended["game"])
    after_first = {c["player"]: c["after"] for c in first["changes"]}
    # The same two play again the same day: over the limit of one, the race is not rated.
    room = await ann.request({"type": "room_create", "variant": "scorpion", "options": {"rated": True}})
    await bob.request({"type": "room_join", "room": room["room"]})
    await bob.request({"type": "ready", "ready": True})
    await ann.send({"type": "room_start"})
    again = await ann.expect("race_started", timeout=15)
    await bob.expect("race_started", game=again["game"])
    for client in (bob, ann):
        answer = await client.request({"type": "resign", "game": again["game"], "v": again["v"]})
        assert answer["type"] == "accepted"
    second = await ann.expect("rating_change", game=again["game"])
    assert {c["player"]: (c["before"], c["after"]) for c in second["changes"]} == {
        p: (a, a) for p, a in after_first.items()
    }
    profile = await ann.request({"type": "profile"})
    assert profile["ratings"][0]["games"] == 1


async def test_forget_me_removes_ratings_and_the_profile(start_node: NodeFactory, open_client: Any) -> None:
    ann, bob, ended = await rated_race(start_node, open_client)
    await bob.expect("rating_change", game=ended["game"])
    forgotten = await ann.request({"type": "forget_me"})
    assert forgotten["type"] == "forgotten" and forgotten["removed"]["ratings"] == 1
    page = await bob.request({"type": "rating_board", "variant": "scorpion"})
    assert [e["player"] for e in page["entries"]] == [bob.player] and page["total"] == 1
    gone = await bob.request({"type": "profile", "player": ann.player})
    assert gone["type"] == "error" and gone["code"] == "no_such_player"
    bobs = await bob.request({"type": "profile"})
    assert bobs["ratings"][0]["rating"] == 1338  # Bob's own rating stays


async def test_an_eight_racer_rated_race_rates_everyone_against_the_seven_others(
    start_node: NodeFactory, open_client: Any
) -> None:
    from protocol.rating import Placing, Rating, rate_race

    first, second = start_node(race_time_limit=5), start_node(race_time_limit=5)
    racers: list[Client] = [await open_client(first if i % 2 == 0 else second, f"R{i}") for i in range(8)]
    host = racers[0]
    room = await host.request(
        {"type": "room_create", "variant": "scorpion", "max_players": 8, "options": {"rated": True}}
    )
    for racer in racers[1:]:
        assert (await racer.request({"type": "room_join", "room": room["room"]}))["type"] == "room"
        await racer.request({"type": "ready", "ready": True})
    await host.send({"type": "room_start"})
    starts = [await racer.expect("race_started", timeout=15) for racer in racers]
    # Four give up at once, four play on to the time limit, all without a point: those
    # who played on beat those who gave up, and each four draw among themselves.
    quitters, stayers = racers[:4], racers[4:]
    for racer, start in zip(quitters, starts, strict=False):
        answer = await racer.request({"type": "resign", "game": start["game"], "v": start["v"]})
        assert answer["type"] == "accepted", answer
    ended = await host.expect("race_ended", timeout=15)
    standings = ended["standings"]
    assert len(standings) == 8
    assert {row["player"] for row in standings[:4]} == {racer.player for racer in stayers}
    assert [(row["rank"], row["status"], row["score"]) for row in standings[:4]] == [(1, "playing", 0)] * 4
    assert all(row["rank"] >= 5 and row["status"] == "resigned" for row in standings[4:])
    placings = [Placing(row["player"], row["rank"], row["status"], row["score"]) for row in standings]
    expected = rate_race({p.player: Rating() for p in placings}, placings)
    for racer in racers:
        change = await racer.expect("rating_change", game=ended["game"], timeout=15)
        got = {c["player"]: c["after"] for c in change["changes"]}
        assert got == {pid: round(r.rating) for pid, r in expected.items()}
    # Four wins and three draws from 1500: 1726; four losses and three draws: 1274.
    assert {got[racer.player] for racer in stayers} == {1726}
    assert {got[racer.player] for racer in quitters} == {1274}
