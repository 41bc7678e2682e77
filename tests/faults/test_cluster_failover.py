"""A real Redis Cluster (3 primaries, 3 replicas) under live races on two nodes: the primary
that owns the race's slot is killed and its replica takes over, or the slot is migrated to
another primary while the racers move. Nothing acknowledged may be lost, nothing doubled.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from redis.crc import key_slot

from server.store import Store
from server.store.cluster import open_cluster
from tests.server.conftest import NodeFactory
from tests.valkey_cluster import ValkeyCluster

from .conftest import RECOVERIES, Racer, health
from .test_redis_outages import RETRYABLE, check_the_log, four_racers, winnable_deal

pytestmark = pytest.mark.asyncio


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[ValkeyCluster]:
    """A cluster of this test's own (it is about to be broken), failing over within ~2 s."""
    own = ValkeyCluster(tmp_path / "cluster", primaries=3, replicas_per_primary=1, node_timeout_ms=1000)
    own.start()
    try:
        yield own
    finally:
        own.stop()


async def race_on(
    start_node: NodeFactory, open_client: Any, url: str, **settings: Any
) -> tuple[list[Any], list[Racer], list[asyncio.Task[None]], dict[str, Any]]:
    number, line = winnable_deal()
    nodes, clients, start = await four_racers(
        lambda **kw: start_node(**{**kw, **settings}), open_client, url, number
    )
    racers = [Racer(client, start["game"], start["v"], line) for client in clients]
    playing = [asyncio.create_task(r.play(pause=0.03)) for r in racers]
    await asyncio.sleep(1.0)
    assert not any(t.done() for t in playing), "the race ended before the fault"
    return nodes, racers, playing, start


async def test_the_primary_of_a_races_slot_killed_mid_race_fails_over_and_loses_no_acknowledged_move(
    start_node: NodeFactory, open_client: Any, cluster: ValkeyCluster
) -> None:
    # Every move waits for one replica: what a racer was told is made is on the replica
    # that takes over. (Without --redis-wait-replicas, the moves acknowledged in the last
    # moment before the kill, those not yet copied to the replica, could be lost.)
    nodes, racers, playing, start = await race_on(start_node, open_client, cluster.url, redis_wait_replicas=1)
    slot = key_slot(("{g:" + start["game"] + "}:meta").encode())
    primary = cluster.primary_of(slot)
    cluster.kill(primary[1])
    killed = time.monotonic()
    new_primary, took = cluster.wait_for_failover(primary[1], slot, timeout=30)
    assert new_primary != primary[1]
    # The promoted replica has no replica of its own until the killed node comes back (as
    # its replica): meanwhile no action can be confirmed, and each is answered
    # outcome_unknown. A supervisor restarts the node, as here.
    await asyncio.to_thread(cluster.restart, primary[1])
    await asyncio.wait_for(asyncio.gather(*playing), 120)
    served = max(r.first_accepted_after(killed + took) for r in racers) - killed
    RECOVERIES.append(("cluster primary SIGKILL: replica promoted after", took))
    RECOVERIES.append(("cluster primary SIGKILL: every racer served, after the kill", served))

    await check_the_log(cluster.url, start["game"], racers)
    for racer in racers:
        assert racer.codes() <= RETRYABLE, racer.codes()
    assert any(r.refused or "outcome_unknown" in r.codes() for r in racers), "no racer met the failover"
    assert all(health(node) == 200 for node in nodes)


async def test_a_live_games_slot_migrated_to_another_primary_loses_and_doubles_no_move(
    start_node: NodeFactory, open_client: Any, cluster: ValkeyCluster
) -> None:
    nodes, racers, playing, start = await race_on(start_node, open_client, cluster.url)
    slot = key_slot(("{g:" + start["game"] + "}:meta").encode())
    source = cluster.primary_of(slot)
    target = next(port for port in cluster.current_primaries() if port != source[1])
    batches = []

    def moved(keys: list[str]) -> None:
        batches.append(len(keys))
        time.sleep(0.5)  # the keys are on the target, the slot not yet: racers are sent there by ASK

    await asyncio.to_thread(cluster.migrate_slot, slot, target, moved)
    assert cluster.primary_of(slot)[1] == target
    assert batches, "the slot held none of the game's keys"
    await asyncio.wait_for(asyncio.gather(*playing), 120)
    await check_the_log(cluster.url, start["game"], racers)
    for racer in racers:
        assert racer.codes() <= RETRYABLE, racer.codes()
    # The race's events came over the slot's new shard too: everyone heard the end.
    assert all(health(node) == 200 for node in nodes)


async def test_without_a_replica_to_confirm_it_a_move_is_not_acknowledged_as_made(
    start_node: NodeFactory, open_client: Any, cluster: ValkeyCluster
) -> None:
    # The replica of the race's primary is gone: WAIT never hears from it, so the move is
    # answered outcome_unknown, and a resume shows that it was made on the primary.
    from tests.server.test_race import friend_race

    url = cluster.url
    ann, _bob, start, _ = await friend_race(
        lambda **kw: start_node(**{**kw, "redis_url": url, "redis_wait_replicas": 1}), open_client, nodes=2
    )
    slot = key_slot(("{g:" + start["game"] + "}:meta").encode())
    primary = cluster.primary_of(slot)
    cluster.kill(cluster.replica_of(primary[1]))
    await asyncio.sleep(0.2)
    deal = {"type": "move", "game": start["game"], "v": start["v"], "move": {"deal": True}}
    answer = await ann.request(deal)
    assert answer["type"] == "error" and answer["code"] == "outcome_unknown", answer
    resumed = await ann.request({"type": "resume", "game": start["game"], "v": start["v"]})
    assert resumed["type"] == "batch" and [e["type"] for e in resumed["events"]] == ["accepted"], resumed


async def test_scripts_are_loaded_again_on_a_primary_that_lost_them(cluster: ValkeyCluster) -> None:
    # As on a replica just promoted: SCRIPT FLUSH on every primary, then a racer's action.
    store = Store(cluster.url, origin="n1")
    client = open_cluster(cluster.url, 2.0)
    try:

        async def act() -> str:
            outcome = await store.act(
                "G1", "P1", seen_version=0, based_on=0, op="push", move="deal",
                event="{}", summary="{}", status="playing",
            )  # fmt: skip
            return outcome.result

        assert await act() == "over"  # no such game: the script's own answer
        await client.execute_command("SCRIPT FLUSH", target_nodes=client.PRIMARIES)
        assert await act() == "over"  # NOSCRIPT, then run by its source, which loads it again
        owner = client.get_node_from_key("{g:G1}:meta")
        assert await client.execute_command("SCRIPT EXISTS", store_script_sha(), target_nodes=owner) == [True]
    finally:
        await client.aclose()
        await store.close()


def store_script_sha() -> str:
    import hashlib

    from server.store import scripts

    return hashlib.sha1(scripts.ACT.encode()).hexdigest()
