"""Rated matching: the window that widens with the wait, across two nodes, on a real Redis."""

from __future__ import annotations

import asyncio
import math
from collections.abc import AsyncIterator
from typing import Any

import pytest

from server.config import Config
from server.matchmaking import REQUEUE_MEMORY_MS, Matchmaker, Window, form_groups
from server.runtime.metrics import Metrics
from server.runtime.service import Plumbing
from server.runtime.tasks import Tasks
from server.store import RatingRecord, Store, Waiting
from tests.server.conftest import Client, NodeFactory, accounts_only


@pytest.fixture
def open_client(open_client: Any) -> Any:
    """Every client of this file is an account: ranked play needs one."""
    return accounts_only(open_client)


WINDOW = Window(base=50, widening=25, max_wait=30)


def test_the_window_widens_with_the_wait_and_opens_fully_at_the_maximum_wait():
    assert WINDOW.half_width(0) == 50
    assert WINDOW.half_width(2_000) == 100
    assert WINDOW.half_width(29_999) == pytest.approx(50 + 25 * 29.999)
    assert WINDOW.half_width(30_000) == math.inf
    assert WINDOW.half_width(-5) == 50  # a clock a little behind another node's


def test_two_players_are_matched_once_their_windows_overlap():
    waiting = [Waiting("ann", 1500, 0), Waiting("bob", 1700, 0)]
    # 200 points apart: each window must reach 100, i.e. 2 seconds of waiting for both.
    assert form_groups(waiting, 1_999, 2, WINDOW) == []
    assert form_groups(waiting, 2_000, 2, WINDOW) == [[waiting[0], waiting[1]]]


def test_the_longest_waiting_player_takes_the_nearest_rating_it_accepts():
    ann = Waiting("ann", 1500, 0)
    far = Waiting("far", 1580, 100)
    near = Waiting("near", 1530, 200)
    other = Waiting("other", 1555, 300)
    groups = form_groups([far, near, other, ann], 1_000, 2, WINDOW)
    assert groups == [[ann, near], [far, other]]


def test_after_the_maximum_wait_anyone_waiting_is_accepted():
    old = Waiting("old", 1200, 0)
    new = Waiting("new", 2400, 29_000)
    assert form_groups([old, new], 29_500, 2, WINDOW) == []  # 1,200 apart, windows too small
    assert form_groups([old, new], 30_000, 2, WINDOW) == [[old, new]]


def test_a_group_of_more_than_two_must_overlap_pairwise():
    a, b, c = Waiting("a", 1500, 0), Waiting("b", 1590, 0), Waiting("c", 1410, 0)
    # After 1 s every half-width is 75: a-b and a-c overlap (90 <= 150), b-c do not (180).
    assert form_groups([a, b, c], 1_000, 3, WINDOW) == []
    (group,) = form_groups([a, b, c], 1_600, 3, WINDOW)  # 90 each side: 180 <= 180
    assert group[0] == a and set(group) == {a, b, c}


def test_who_cannot_complete_a_group_waits_and_nobody_is_in_two_groups():
    waiting = [Waiting(f"p{i}", 1500 + 7 * i, i) for i in range(9)]
    groups = form_groups(waiting, 10, 2, WINDOW)
    assert len(groups) == 4
    players = [w.player for g in groups for w in g]
    assert len(players) == len(set(players)) == 8


class Clock:
    """A clock the test moves by hand (milliseconds)."""

    def __init__(self) -> None:
        self.now = 1_000_000

    def __call__(self) -> int:
        return self.now


@pytest.fixture
async def two_nodes(redis_url: str) -> AsyncIterator[tuple[Matchmaker, Matchmaker, Clock, list[Any]]]:
    """Two matchmakers, as two nodes would run them, on one Redis and one injected clock."""
    clock = Clock()
    matches: list[Any] = []
    config = Config(quick_match_size=2, match_window=50, match_widening=25, match_max_wait=30)
    stores = [Store(redis_url, origin=name, instance=name) for name in ("node-a", "node-b")]

    def matchmaker(store: Store) -> Matchmaker:
        plumbing = Plumbing(store.instance, config, store, None, Metrics(), Tasks())  # type: ignore[arg-type]

        async def on_match(variant: str, players: list[str]) -> None:
            matches.append((store.instance, variant, players))

        return Matchmaker(plumbing, clock=clock, on_match=on_match, variants=["scorpion"])

    yield matchmaker(stores[0]), matchmaker(stores[1]), clock, matches
    for store in stores:
        await store.close()


async def rate(store: Store, player: str, rating: float) -> None:
    record = RatingRecord(rating, 80, 0.06, 10, 0, rating)
    assert await store.apply_rating(player, "scorpion", "g-seed-" + player, 0, record, "{}") == "ok"


async def test_one_node_at_a_time_forms_a_variants_matches_and_another_takes_over_when_its_lease_lapses(
    two_nodes: tuple[Matchmaker, Matchmaker, Clock, list[Any]],
) -> None:
    a, b, clock, matches = two_nodes
    await a.store.enqueue_rated("scorpion", "ann", clock(), 1500, REQUEUE_MEMORY_MS)
    await b.store.enqueue_rated("scorpion", "bob", clock(), 1510, REQUEUE_MEMORY_MS)
    assert await b.store.lead_matchmaking("scorpion", 500) == 2  # node b holds the lease
    assert await a.round("scorpion") == 0 and matches == []  # node a does not lead: no round
    assert await b.round("scorpion") == 1
    assert matches == [("node-b", "scorpion", ["ann", "bob"])]
    assert await a.store.rated_waiting("scorpion") == []
    await asyncio.sleep(0.6)  # b's lease (renewed for 2 s by its round) has not lapsed yet...
    assert await a.store.lead_matchmaking("scorpion", 500) == -1
    await asyncio.sleep(1.6)  # ...and now it has: a takes over
    assert await a.store.lead_matchmaking("scorpion", 500) == 0


async def test_the_window_widens_with_the_injected_clock_until_two_far_players_meet_across_nodes(
    two_nodes: tuple[Matchmaker, Matchmaker, Clock, list[Any]],
) -> None:
    a, b, clock, matches = two_nodes
    await a.store.enqueue_rated("scorpion", "ann", clock(), 1500, REQUEUE_MEMORY_MS)  # joins on a
    await b.store.enqueue_rated("scorpion", "bob", clock(), 1800, REQUEUE_MEMORY_MS)  # joins on b
    leader = a if await a.store.lead_matchmaking("scorpion", 2000) >= 0 else b
    for seconds in (0, 1, 2, 3, 4, 5):  # 300 apart: half-widths of 150 are needed (4 s)
        clock.now = 1_000_000 + 1000 * seconds
        started = await leader.round("scorpion")
        assert started == (1 if seconds == 4 else 0), seconds
    assert [players for _, _, players in matches] == [["ann", "bob"]]


async def test_leaving_and_coming_back_resumes_the_wait_instead_of_narrowing_the_window(
    two_nodes: tuple[Matchmaker, Matchmaker, Clock, list[Any]],
) -> None:
    a, b, clock, _ = two_nodes
    store = a.store
    _, first = await store.enqueue_rated("scorpion", "ann", clock(), 1500, REQUEUE_MEMORY_MS)
    assert await store.leave_queues("scorpion", "ann", clock() + 10_000, REQUEUE_MEMORY_MS)
    _, again = await b.store.enqueue_rated("scorpion", "ann", clock() + 20_000, 1500, REQUEUE_MEMORY_MS)
    assert again == first  # back within a minute: the same wait goes on
    assert await store.leave_queues("scorpion", "ann", clock() + 30_000, REQUEUE_MEMORY_MS)
    later = clock() + 30_000 + REQUEUE_MEMORY_MS + 1
    _, fresh = await store.enqueue_rated("scorpion", "ann", later, 1500, REQUEUE_MEMORY_MS)
    assert fresh == later  # away longer than that: a new wait
    assert not await store.leave_queues("scorpion", "nobody", later, REQUEUE_MEMORY_MS)


async def test_a_match_whose_player_left_meanwhile_is_not_taken(
    two_nodes: tuple[Matchmaker, Matchmaker, Clock, list[Any]],
) -> None:
    a, _, clock, _ = two_nodes
    for player in ("ann", "bob", "cid"):
        await a.store.enqueue_rated("scorpion", player, clock(), 1500, REQUEUE_MEMORY_MS)
    await a.store.leave_queues("scorpion", "bob", clock(), REQUEUE_MEMORY_MS)
    assert not await a.store.claim_match("scorpion", ["ann", "bob"])
    assert {w.player for w in await a.store.rated_waiting("scorpion")} == {"ann", "cid"}
    assert await a.store.claim_match("scorpion", ["ann", "cid"])
    assert await a.store.rated_waiting("scorpion") == []


async def test_real_nodes_match_players_of_close_ratings_first_and_anyone_after_the_maximum_wait(
    start_node: NodeFactory, open_client: Any, redis_url: str
) -> None:
    first = start_node(match_max_wait=3)
    second = start_node(match_max_wait=3)
    ann: Client = await open_client(first, "Ann")
    bob: Client = await open_client(second, "Bob")
    cid: Client = await open_client(second, "Cid")
    dan: Client = await open_client(first, "Dan")
    store = Store(redis_url)
    try:
        for client, rating in ((ann, 1500), (bob, 1900), (cid, 1520), (dan, 2600)):
            await rate(store, client.player, rating)
    finally:
        await store.close()
    queued = await ann.request({"type": "queue_join", "variant": "scorpion"})
    assert queued["rated"] is True and queued["rating"] == 1500
    await bob.request({"type": "queue_join", "variant": "scorpion"})
    await asyncio.sleep(0.3)
    await cid.request({"type": "queue_join", "variant": "scorpion"})
    found = await ann.expect("match_found", timeout=5)
    assert {p["player"] for p in found["players"]} == {ann.player, cid.player}  # not Bob, 400 away
    started = await cid.expect("race_started", timeout=5)
    assert started["options"]["rated"] is True
    # Bob, alone, is matched with Dan (700 away) once he has waited 3 seconds.
    await dan.request({"type": "queue_join", "variant": "scorpion"})
    late = await bob.expect("match_found", timeout=8)
    assert {p["player"] for p in late["players"]} == {bob.player, dan.player}


async def test_the_casual_queue_still_pairs_whoever_waits_longest_unrated(
    start_node: NodeFactory, open_client: Any
) -> None:
    node = start_node()
    ann: Client = await open_client(node, "Ann")
    bob: Client = await open_client(node, "Bob")
    queued = await ann.request({"type": "queue_join", "variant": "wasp", "rated": False})
    assert queued["rated"] is False and "rating" not in queued
    await bob.request({"type": "queue_join", "variant": "wasp", "rated": False})
    started = await ann.expect("race_started")
    assert started["options"]["rated"] is False
