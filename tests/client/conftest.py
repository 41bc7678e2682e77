"""Fixtures of the client tests: real server nodes (from the server tests) and helpers."""

from __future__ import annotations

import functools
import secrets
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from client.api import ScorpionClient
from tests.server.conftest import (  # noqa: F401
    DAILY_SECRET,
    PASSWORD,
    Node,
    NodeFactory,
    local_node,
    open_client,
    start_node,
)

ClientFactory = Callable[..., Any]


@pytest.fixture(autouse=True)
def config_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Keep every stored identity of a test in its own directory."""
    directory = tmp_path / "config"
    monkeypatch.setenv("SCORPION_CONFIG_DIR", str(directory))
    yield directory


@pytest.fixture
async def make_client() -> AsyncIterator[ClientFactory]:
    """Connect library clients to nodes; all are closed at the end of the test.

    Clients store no token unless given ``store=TokenStore()`` (several players of one test
    would otherwise share the identity stored for the server).
    """
    clients: list[ScorpionClient] = []

    async def make(
        nodes: Node | list[Node],
        name: str = "Tester",
        *,
        connect: bool = True,
        account: bool = False,
        **options: Any,
    ) -> ScorpionClient:
        """Return a client (connected unless ``connect`` is false; with ``account``, its guest
        registers at once, as ranked play needs)."""
        urls = [n.url for n in nodes] if isinstance(nodes, list) else nodes.url
        client = ScorpionClient(urls, name, **options)
        clients.append(client)
        if connect:
            await client.connect()
            if account:
                await client.register("u" + secrets.token_hex(6), PASSWORD)
        return client

    yield make
    for client in clients:
        await client.close()


def accounts_only(make_client: ClientFactory) -> ClientFactory:
    """Return ``make_client`` making accounts: what a test file about ranked play overrides
    its ``make_client`` fixture with."""
    return functools.partial(make_client, account=True)  # type: ignore[return-value]


async def start_race(
    host: ScorpionClient, guest: ScorpionClient, *, variant: str = "scorpion", **options: Any
) -> str:
    """Open a room on ``host``, let ``guest`` join and say ready, start it; return the game id."""
    from protocol.wire.message import Options, RaceStarted

    room = await host.room_create(variant, 2, Options(**options))
    await guest.room_join(room.room)
    await guest.ready(True)
    await host.room_start()
    started = await host.wait_for(RaceStarted, timeout=15)
    if guest.race is None or guest.race.game != started.game:
        await guest.wait_for(RaceStarted, timeout=15, game=started.game)
    return started.game


async def racing(
    nodes: NodeFactory, clients: ClientFactory, deal: int, *names: str, **options: Any
) -> tuple[Node, list[ScorpionClient], str]:
    """Start a node on ``deal`` (``nodes`` is ``start_node``), connect a client per name
    (``clients`` is ``make_client``), and race the first two.

    Return the node, the clients (in the order of ``names``; any after the first two are
    free to watch) and the race's game id.
    """
    node = nodes(test_deals=deal)
    players = [await clients(node, name) for name in names]
    game = await start_race(players[0], players[1], **options)
    return node, players, game
