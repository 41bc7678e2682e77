"""No ghost rooms: a player gone past the grace period leaves every room they host or sit
in, whichever connection entered it (issue "Accounts, sessions and abuse limits")."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from .conftest import Client

pytestmark = pytest.mark.asyncio

GRACE = 1.0


async def test_rooms_of_two_closed_connections_close_after_the_grace_period(
    local_node: Any, open_client: Any
) -> None:
    node = await local_node(grace_period=GRACE)
    first: Client = await open_client(node, "Ann")
    second: Client = await open_client(node, "Ann", token=first.token)
    rooms = [
        (await c.request({"type": "room_create", "variant": "scorpion"}))["room"] for c in (first, second)
    ]
    await first.close()
    await second.close()
    await asyncio.sleep(GRACE + 1.0)
    bob: Client = await open_client(node, "Bob")
    for code in rooms:
        answer = await bob.request_unchecked({"type": "room_join", "room": code})
        assert answer["type"] == "error" and answer["code"] == "no_such_room", answer


async def test_a_member_gone_past_the_grace_period_leaves_the_room(local_node: Any, open_client: Any) -> None:
    node = await local_node(grace_period=GRACE)
    ann: Client = await open_client(node, "Ann")
    bob: Client = await open_client(node, "Bob")
    room = await ann.request({"type": "room_create", "variant": "scorpion"})
    await bob.request({"type": "room_join", "room": room["room"]})
    await bob.close()
    state = await ann.seen(
        "room", timeout=GRACE + 5, players=[{"player": ann.player, "name": "Ann", "ready": True}]
    )
    assert state["host"] == ann.player


async def test_a_host_back_within_the_grace_period_keeps_their_room(
    local_node: Any, open_client: Any
) -> None:
    node = await local_node(grace_period=GRACE)
    ann: Client = await open_client(node, "Ann")
    room = await ann.request({"type": "room_create", "variant": "scorpion"})
    await ann.close()
    back: Client = await open_client(node, "Ann", token=ann.token)
    await asyncio.sleep(GRACE + 1.0)
    again = await back.request({"type": "room_join", "room": room["room"]})
    assert again["type"] == "room" and again["host"] == ann.player
    bob: Client = await open_client(node, "Bob")
    joined = await bob.request({"type": "room_join", "room": room["room"]})
    assert joined["type"] == "room" and joined["host"] == ann.player


async def test_the_rooms_of_a_dead_node_s_players_close_after_the_grace_period(
    start_node: Any, open_client: Any
) -> None:
    import signal

    settings = {"node_heartbeat": 0.2, "node_timeout": 1.0, "grace_period": GRACE}
    first = start_node(**settings)
    second = start_node(**settings)
    ann: Client = await open_client(first, "Ann")  # hosts a room on the node that dies
    dan: Client = await open_client(first, "Dan")  # sits in a room hosted on the other node
    carl: Client = await open_client(second, "Carl")
    hosted = (await ann.request({"type": "room_create", "variant": "scorpion"}))["room"]
    other = (await carl.request({"type": "room_create", "variant": "scorpion"}))["room"]
    assert (await dan.request({"type": "room_join", "room": other}))["type"] == "room"
    await asyncio.sleep(0.5)  # both nodes have heartbeats in Redis
    first.stop(signal.SIGKILL)  # its connections are never closed: the node just dies
    state = await carl.seen(
        "room", timeout=15, players=[{"player": carl.player, "name": "Carl", "ready": True}]
    )
    assert state["host"] == carl.player
    bob: Client = await open_client(second, "Bob")
    deadline = asyncio.get_running_loop().time() + 10
    while (answer := await bob.request({"type": "watch", "room": hosted}))["code"] == "not_started":
        assert asyncio.get_running_loop().time() < deadline, "the dead node's host kept their room"
        await asyncio.sleep(0.1)  # watching tells an open room from a closed one without joining it
    assert answer["code"] == "no_such_room", answer


async def test_the_members_of_every_room_are_found_on_a_cluster_too(cluster_server: Any) -> None:
    from server.store import Store

    cluster_server.flush()
    store = Store(cluster_server.url.replace("redis://", "redis+cluster://").removesuffix("/0"))
    try:
        rooms = [
            await store.create_room(f"host{n}", {"variant": "scorpion", "max_players": 8}, 60_000)
            for n in range(5)
        ]
        await store.join_room(rooms[0], "guest", 60_000)
        assert await store.room_members_everywhere() == {"guest", *(f"host{n}" for n in range(5))}
    finally:
        await store.close()
