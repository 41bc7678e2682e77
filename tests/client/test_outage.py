"""The library through a storage outage: busy refusals sent again, actions of unknown outcome settled.

Against a real server with a Redis of the test's own, stopped (or paused with SIGSTOP) and
brought back. The paths a real server reaches only by chance (an ``outcome_unknown`` whose
action was applied, or was not) are played by a scripted websocket peer.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from websockets.asyncio.server import ServerConnection, serve

from client.api import ScorpionClient
from client.errors import Busy, Event, Recovered, ServerError
from client.tui import ScorpionApp
from client.tui.screen import BUSY_NOTE
from protocol.game import Board, Status, player_view, summary_data
from protocol.wire.codec import MAX_SERVER_FRAME, MSGPACK, decode, encode
from protocol.wire.message import (
    Accepted,
    Batch,
    Error,
    Message,
    Options,
    Racer,
    RaceStarted,
    SavedGamesList,
    Welcome,
)
from tests.conftest import RedisServer

from .conftest import ClientFactory

DEAL = 1234567890123
GAME = "G7K2M9QX"


# ---------------------------------------------------------------- small pieces


def test_a_busy_refusal_carries_its_delay_into_the_server_error() -> None:
    busy = ServerError.of(
        Error(code="unavailable", message="storage is unavailable; retry", retry_after_ms=250)
    )
    assert busy.retryable and busy.retry_after_ms == 250
    assert not busy.unavailable, "the request is offered: the storage is out of reach for a moment"
    reserved = ServerError.of(Error(code="unavailable", message="reserved for a later version"))
    assert not reserved.retryable and reserved.retry_after_ms is None and reserved.unavailable
    unknown = ServerError.of(Error(code="outcome_unknown", message="not confirmed", retry_after_ms=500))
    assert unknown.retryable and unknown.code == "outcome_unknown"
    illegal = ServerError.of(Error(code="illegal_move", message="7H cannot go on 9C", field="move"))
    assert not illegal.retryable and illegal.field == "move"


# ---------------------------------------------------------------- a scripted peer

Script = dict[str, list[list[Message]]]
"""A request type, and the answers to its successive sendings (the last one repeats): each
answer is the messages sent back, the first carrying the request's ``ref``."""


class Peer:
    """A websocket peer that answers each request type from a script, and keeps what it got."""

    def __init__(self, script: Script) -> None:
        self.script = {kind: list(answers) for kind, answers in script.items()}
        self.got: list[Message] = []
        self.port = 0

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/"

    def sent(self, kind: str) -> list[Message]:
        return [m for m in self.got if kind == m.TYPE]

    async def handle(self, ws: ServerConnection) -> None:
        with contextlib.suppress(Exception):
            async for frame in ws:
                request = decode(frame, MSGPACK)
                self.got.append(request)
                answers = self.script.get(request.TYPE) or [[]]
                reply = answers.pop(0) if len(answers) > 1 else answers[0]
                for index, message in enumerate(reply):
                    await ws.send(encode(message.answering(request.ref) if index == 0 else message))


@pytest.fixture
async def peer() -> AsyncIterator[Callable[[Script], Any]]:
    """Start scripted peers on free loopback ports; all are closed at the end of the test."""
    servers: list[Any] = []

    async def start(script: Script) -> Peer:
        found = Peer(script)
        server = await serve(found.handle, "127.0.0.1", 0, subprotocols=[MSGPACK], max_size=MAX_SERVER_FRAME)  # type: ignore[list-item]
        servers.append(server)
        found.port = server.sockets[0].getsockname()[1]
        return found

    yield start
    for server in servers:
        server.close()
        await server.wait_closed()


def opening() -> tuple[Board, Script]:
    """Return the deal's board and the peer's script for the start: welcome, then a solo game."""
    board = Board.new("scorpion", DEAL)
    welcome = Welcome(player="p1", token="t" * 20, name="Ann", now=int(time.time() * 1000), games=())
    started = RaceStarted(
        game=GAME,
        v=1,
        variant="scorpion",
        options=Options(),
        start=int(time.time() * 1000),
        commitment="0" * 64,
        view=player_view(board).as_dict(),
        roster=(Racer(player="p1", name="Ann"),),
        mode="solo",
    )
    return board, {"hello": [[welcome]], "solo_new": [[started]]}


def accepted_after(board: Board, v: int) -> Accepted:
    """Return the ``accepted`` of the board's first card move, at version ``v``."""
    board.push(next(m for m in board.legal_moves() if not m.is_deal))
    summary = summary_data(board, 0, Status.IN_PLAY)
    return Accepted(game=GAME, v=v, view=player_view(board).as_dict(), summary=summary)


def unknown(after_ms: int = 50) -> Error:
    return Error(code="outcome_unknown", message="the commit was not confirmed", retry_after_ms=after_ms)


def recorder(client: ScorpionClient) -> tuple[list[Event], asyncio.Task[None]]:
    """Keep every event of ``client`` in a list, from a task of their own."""
    seen: list[Event] = []

    async def pump() -> None:
        async for event in client.events():
            seen.append(event)

    return seen, asyncio.ensure_future(pump())


async def started_client(peer: Peer, make_client: ClientFactory, **options: Any) -> ScorpionClient:
    """Connect a client to the peer and start the solo game of its script."""
    client: ScorpionClient = await make_client(peer, "Ann", reconnect=False, **options)
    await client.solo_new()
    assert client.race is not None and client.race.playing
    return client


async def test_an_action_of_unknown_outcome_that_was_applied_is_not_sent_again(
    peer: Any, make_client: ClientFactory
) -> None:
    board, start = opening()
    first = next(m for m in board.legal_moves() if not m.is_deal)
    accepted = accepted_after(board, 2)
    script = {
        **start,
        "move": [[unknown()]],
        "resume": [[Batch(game=GAME, v=2, events=(accepted,))]],
    }
    server = await peer(script)
    client = await started_client(server, make_client)
    seen, pump = recorder(client)
    answer = await client.move(first)
    assert answer.v == 2 and answer.view == accepted.view, "the batch's own accepted is the answer"
    assert len(server.sent("move")) == 1, "an applied action is never sent twice"
    assert [(m.game, m.v) for m in server.sent("resume")] == [(GAME, 1)], "resumed from the action's version"
    assert client.race is not None and client.race.v == 2 and client.race.view == accepted.view
    assert client.race.summary == accepted.summary
    await asyncio.sleep(0.05)
    pump.cancel()
    assert Busy(50, "move") in seen and Recovered("move") in seen
    assert seen.index(Busy(50, "move")) < seen.index(Recovered("move"))


async def test_an_action_of_unknown_outcome_that_was_not_applied_goes_again_at_the_same_version(
    peer: Any, make_client: ClientFactory
) -> None:
    board, start = opening()
    first = next(m for m in board.legal_moves() if not m.is_deal)
    accepted = accepted_after(board, 2)
    script = {
        **start,
        "move": [[unknown()], [accepted]],
        "resume": [[Batch(game=GAME, v=1, events=())]],
    }
    server = await peer(script)
    client = await started_client(server, make_client)
    answer = await client.move(first)
    assert answer.v == 2
    moves = server.sent("move")
    assert [m.v for m in moves] == [1, 1], "sent again at the same version: the server cannot apply it twice"  # type: ignore[attr-defined]
    assert moves[0].engine_move == moves[1].engine_move == first  # type: ignore[attr-defined]
    assert client.race is not None and client.race.v == 2 and client.race.view == accepted.view


async def test_a_stale_version_to_the_second_sending_means_the_first_was_applied(
    peer: Any, make_client: ClientFactory
) -> None:
    board, start = opening()
    first = next(m for m in board.legal_moves() if not m.is_deal)
    accepted = accepted_after(board, 2)
    stale = Error(code="stale_version", message="your board changed after v 1", field="v")
    script = {
        **start,
        "move": [[unknown()], [stale]],
        # The first resume comes before the slow commit shows; the second sees it.
        "resume": [[Batch(game=GAME, v=1, events=())], [Batch(game=GAME, v=2, events=(accepted,))]],
    }
    server = await peer(script)
    client = await started_client(server, make_client)
    answer = await client.move(first)
    assert answer.v == 2 and answer.view == accepted.view
    assert len(server.sent("move")) == 2 and len(server.sent("resume")) == 2
    assert client.race is not None and client.race.v == 2


async def test_an_outcome_that_stays_unknown_past_busy_retry_for_is_raised(
    peer: Any, make_client: ClientFactory
) -> None:
    board, start = opening()
    first = next(m for m in board.legal_moves() if not m.is_deal)
    script = {**start, "move": [[unknown(100)]], "resume": [[Batch(game=GAME, v=1, events=())]]}
    server = await peer(script)
    client = await started_client(server, make_client, busy_retry_for=0.6)
    started = time.monotonic()
    with pytest.raises(ServerError) as refused:
        await client.move(first)
    assert refused.value.code == "outcome_unknown" and refused.value.retryable
    assert time.monotonic() - started < 1.5
    assert 2 <= len(server.sent("move")) <= 6, "sent again only while the bound allowed"
    assert client.race is not None and client.race.v == 1, "nothing was applied"


async def test_a_refusal_that_is_not_busy_is_raised_at_once(peer: Any, make_client: ClientFactory) -> None:
    board, start = opening()
    first = next(m for m in board.legal_moves() if not m.is_deal)
    refusal = Error(code="unavailable", message="the server is shutting down")
    server = await peer({**start, "move": [[refusal]]})
    client = await started_client(server, make_client)
    with pytest.raises(ServerError) as refused:
        await client.move(first)
    assert refused.value.code == "unavailable" and not refused.value.retryable
    assert len(server.sent("move")) == 1 and not server.sent("resume")


# ---------------------------------------------------------------- a real server, a real outage


async def until_busy(seen: list[Event], request: str, timeout: float = 20.0) -> Busy:
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        found = next((e for e in seen if isinstance(e, Busy) and e.request == request), None)
        if found is not None:
            return found
        assert asyncio.get_running_loop().time() < deadline, f"no Busy for {request!r} within {timeout} s"
        await asyncio.sleep(0.02)


async def test_a_request_made_while_redis_is_stopped_is_sent_again_and_served_once_it_is_back(
    local_node: Any, make_client: ClientFactory, own_redis: RedisServer
) -> None:
    node = await local_node(redis_url=own_redis.url, test_deals=str(DEAL))
    client: ScorpionClient = await make_client(node, "Ann")
    seen, pump = recorder(client)
    own_redis.stop()
    saved = asyncio.ensure_future(client.saved_games())
    busy = await until_busy(seen, "saved_games")
    assert 0 < busy.retry_after_ms <= 60_000
    assert not saved.done(), "still being sent again while Redis is down"
    own_redis.start()
    assert isinstance(await asyncio.wait_for(saved, 30), SavedGamesList)
    started = await client.solo_new()  # the storage serves writes again too
    assert started.v == 1
    await asyncio.sleep(0.05)
    pump.cancel()
    assert Recovered("saved_games") in seen
    assert seen.index(busy) < seen.index(Recovered("saved_games"))


async def test_a_request_the_server_stays_busy_for_is_raised_after_busy_retry_for(
    local_node: Any, make_client: ClientFactory, own_redis: RedisServer
) -> None:
    node = await local_node(redis_url=own_redis.url)
    client: ScorpionClient = await make_client(node, "Ann", busy_retry_for=5.0)
    seen, pump = recorder(client)
    own_redis.stop()
    started = time.monotonic()
    with pytest.raises(ServerError) as refused:
        await client.stats()
    waited = time.monotonic() - started
    pump.cancel()
    assert refused.value.code == "unavailable" and refused.value.retryable
    busy = [e for e in seen if isinstance(e, Busy)]
    assert busy, "it was sent again before the client gave up"
    assert busy[0].retry_after_ms / 1000 <= waited < 5.0 + 5.0, "bounded by busy_retry_for"
    assert not any(isinstance(e, Recovered) for e in seen)


async def test_a_move_whose_commit_redis_did_not_confirm_is_settled_and_applied_once(
    local_node: Any, make_client: ClientFactory, own_redis: RedisServer
) -> None:
    node = await local_node(redis_url=own_redis.url, test_deals=str(DEAL))
    client: ScorpionClient = await make_client(node, "Ann")
    await client.solo_new()
    board = Board.new("scorpion", DEAL)
    first = next(m for m in board.legal_moves() if not m.is_deal)
    await client.move(first)  # the node now holds the board: the next move goes straight to its commit
    board.push(first)
    second = next(m for m in board.legal_moves() if not m.is_deal)
    seen, pump = recorder(client)
    assert own_redis.process is not None
    own_redis.process.send_signal(signal.SIGSTOP)  # the commit reaches Redis, its answer waits
    try:
        played = asyncio.ensure_future(client.move(second))
        await until_busy(seen, "move")
    finally:
        own_redis.process.send_signal(signal.SIGCONT)
    answer = await asyncio.wait_for(played, 60)
    pump.cancel()
    codes = [e.code for e in seen if isinstance(e, Error)]
    assert "outcome_unknown" in codes, f"the node could not confirm the commit: {codes}"
    assert any(isinstance(e, Batch) for e in seen), "the client resumed to see whether it was applied"
    assert answer.v == 3 and answer.summary["moves"] == 2
    board.push(second)
    race = client.race
    assert race is not None and race.v == 3 and race.view == answer.view == player_view(board).as_dict()
    following = next(m for m in race.legal_moves() if not m.is_deal)
    assert (await client.move(following)).v == 4, "the next move goes on from the one applied"
    history = await client.resume(race.game, 0)
    assert isinstance(history, Batch)
    mine = [(e.v, e.summary["moves"]) for e in history.events if isinstance(e, Accepted)]
    assert mine == [(2, 1), (3, 2), (4, 3)], "the move was applied exactly once"


async def test_the_terminal_says_the_server_is_busy_until_it_serves_again(
    local_node: Any, make_client: ClientFactory, own_redis: RedisServer
) -> None:
    node = await local_node(redis_url=own_redis.url, test_deals=str(DEAL))
    client: ScorpionClient = await make_client(node, "Ann")
    own_redis.stop()
    app = ScorpionApp(client, lambda c: c.solo_new())
    async with app.run_test(size=(80, 24)) as pilot:
        deadline = asyncio.get_running_loop().time() + 20
        while BUSY_NOTE not in app.screen_text():
            assert asyncio.get_running_loop().time() < deadline, "the busy notice did not show"
            await pilot.pause(0.05)
        assert client.race is None
        own_redis.start()
        deadline = asyncio.get_running_loop().time() + 30
        while client.race is None or BUSY_NOTE in app.note:
            assert asyncio.get_running_loop().time() < deadline, (
                "the game did not start, or the notice stayed"
            )
            await pilot.pause(0.05)
        await pilot.pause(0.2)
        screen = app.screen_text()
        assert BUSY_NOTE not in screen and "solo" in screen
