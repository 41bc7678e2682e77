"""The async client library against real server processes."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import pytest

from client.api import JSON
from client.errors import Closed, IllegalLocally, Reconnected, ServerError
from client.identity import TokenStore
from protocol.game import Board, Move, card_text, move_json, player_view
from protocol.wire.message import (
    Accepted,
    Batch,
    Countdown,
    Games,
    Hints,
    Message,
    Ok,
    Options,
    Pong,
    Progress,
    Queued,
    RaceStarted,
    RoomState,
    Snapshot,
    SpectateBatch,
    SpectatorSnapshot,
)

from .conftest import ClientFactory, NodeFactory, racing, start_race

pytestmark = pytest.mark.asyncio

DEAL = 1234567890123


async def test_hello_stores_the_token_and_the_next_session_is_the_same_player(
    start_node: NodeFactory, make_client: ClientFactory, config_dir: Path
) -> None:
    node = start_node()
    first = await make_client(node, "Ann", store=TokenStore())
    assert first.player and first.token
    stored = TokenStore().load(node.url)
    assert stored is not None and stored.token == first.token and stored.player == first.player
    assert (config_dir / "identity.json").stat().st_mode & 0o077 == 0, "the token file is private"
    await first.close()
    again = await make_client(node, "Ann", store=TokenStore())
    assert again.player == first.player
    assert again.token == first.token


async def test_an_unknown_stored_token_is_replaced_by_a_fresh_identity(
    start_node: NodeFactory, make_client: ClientFactory
) -> None:
    node = start_node()
    client = await make_client(node, "Ann", token="x" * 32, store=TokenStore())
    assert client.token != "x" * 32
    stored = TokenStore().load(node.url)
    assert stored is not None and stored.token == client.token


async def test_every_request_method_gets_its_documented_answer(
    start_node: NodeFactory, make_client: ClientFactory
) -> None:
    node = start_node(test_deals=DEAL)
    ann = await make_client(node, "Ann")
    bob = await make_client(node, "Bob", fmt=JSON)
    carl = await make_client(node, "Carl", account=True)
    assert isinstance(await ann.ping(), Pong)
    queued = await carl.queue_join("wasp")
    assert isinstance(queued, Queued) and queued.variant == "wasp"
    assert isinstance(await carl.queue_cancel(), Ok)
    room = await ann.room_create("scorpion", 3, Options(undo=False, hints=False))
    assert isinstance(room, RoomState) and room.host == ann.player
    joined = await carl.room_join(room.room.lower())
    assert len(joined.players) == 2
    assert (await carl.room_leave()).to == "room_leave"
    assert isinstance(await bob.room_join(room.room), RoomState)
    ready = await bob.ready(True)
    assert [p.ready for p in ready.players] == [True, True]
    assert isinstance(await ann.room_start(), Countdown)
    started = await ann.wait_for(RaceStarted, timeout=15)
    await bob.caught_up(1)
    assert ann.race is not None and ann.race.game == started.game
    board = Board.new("scorpion", DEAL)
    move = next(m for m in board.legal_moves() if not m.is_deal)
    accepted = await ann.move(move)
    assert isinstance(accepted, Accepted) and accepted.v == 2 and ann.race.v == 2
    dealt = await ann.deal()
    assert dealt.view["reserve_left"] == 0
    with pytest.raises(ServerError) as refused:
        await ann.undo()
    assert refused.value.code == "undo_forbidden"
    with pytest.raises(ServerError) as no_hints:
        await ann.hint()
    assert no_hints.value.code == "hints_forbidden"
    resumed = await ann.resume(started.game, 1)
    assert isinstance(resumed, Batch) and [e.v for e in resumed.events] == [2, 3]
    games = await carl.games_list()
    assert isinstance(games, Games) and [g.game for g in games.games] == [started.game]
    watched = await carl.watch(room=room.room)
    assert isinstance(watched, SpectatorSnapshot) and carl.race is not None and carl.race.spectating
    assert isinstance(await carl.unwatch(), Ok)
    resigned = await bob.resign()
    assert resigned.status == "resigned"
    assert (await carl.daily_info()).TYPE == "daily"
    with pytest.raises(ServerError) as running:
        await carl.replay(started.game)
    assert running.value.code == "not_allowed"  # a running game is watched, not replayed


async def test_undo_and_hints_work_when_the_race_allows_them(
    start_node: NodeFactory, make_client: ClientFactory
) -> None:
    _, (ann, _), _ = await racing(start_node, make_client, DEAL, "Ann", "Bob", undo=True, hints=True)
    hints = await ann.hint()
    assert isinstance(hints, Hints) and hints.moves
    first = await ann.move(Move(*_move_from(hints.moves[0])))
    undone = await ann.undo()
    assert undone.v == first.v + 1 and undone.summary["moves"] in (0, 2)
    assert ann.race is not None and ann.race.view == undone.view


def _move_from(data: dict[str, object]) -> tuple[int, int, int]:
    from protocol.game import move_from_json

    move = move_from_json(data)
    return move.card, move.source, move.target


async def test_the_event_iterator_yields_what_the_server_pushes_in_order(
    start_node: NodeFactory, make_client: ClientFactory
) -> None:
    _, (ann, bob), game = await racing(start_node, make_client, DEAL, "Ann", "Bob")
    board = Board.new("scorpion", DEAL)
    await ann.move(next(m for m in board.legal_moves() if not m.is_deal))
    await ann.deal()
    await bob.caught_up(3)
    seen: list[str] = []
    versions: list[int] = []

    async def collect() -> None:
        async for event in bob.events():
            if isinstance(event, Closed):
                return
            seen.append(type(event).__name__)
            if isinstance(event, Progress):
                versions.append(event.v)
                if event.v == 3:
                    return

    await asyncio.wait_for(collect(), 10)
    assert "RoomState" in seen and "Countdown" in seen and "RaceStarted" in seen
    assert seen.index("RoomState") < seen.index("RaceStarted") < seen.index("Progress")
    assert versions == [2, 3]
    assert bob.race is not None and bob.race.game == game
    assert (bob.race.racers[ann.player or ""].summary or {})["moves"] == 2


async def test_the_local_legality_check_agrees_with_the_server(
    start_node: NodeFactory, make_client: ClientFactory
) -> None:
    node = start_node(test_deals=DEAL, message_credits=1000)
    ann = await make_client(node, "Ann")
    bob = await make_client(node, "Bob")
    await start_race(ann, bob, reserve_rule="when-stuck")
    race = ann.race
    assert race is not None
    board = Board.new("scorpion", DEAL, "when-stuck")
    candidates: list[Move] = [Move(-1, -1, -1)]
    for source, column in enumerate(board.columns):
        for card in column[-2:] + column[:1]:
            for target in range(len(board.columns)):
                candidates.append(Move(card, source, target))
    candidates = [*candidates[:40], next(m for m in board.legal_moves() if not m.is_deal)]
    verdicts = {"legal": 0, "illegal": 0}
    for move in candidates:
        local = race.explain(move)
        if local is not None:
            with pytest.raises(IllegalLocally):
                await ann.move(move)
        try:
            await ann.move(move, check=False)
        except ServerError as exc:
            assert local is not None, f"server refused {move}: {exc}"
            assert exc.code == "illegal_move"
            verdicts["illegal"] += 1
        else:
            assert local is None, f"server accepted {move} that the model refused: {local}"
            verdicts["legal"] += 1
            break
    assert verdicts["illegal"] >= 5 and verdicts["legal"] == 1


async def test_after_a_node_is_killed_the_client_reconnects_to_another_and_resumes(
    start_node: NodeFactory, make_client: ClientFactory
) -> None:
    first = start_node(test_deals=DEAL)
    second = start_node()
    ann = await make_client([first, second], "Ann", backoff=(0.05, 0.5))
    bob = await make_client(second, "Bob")
    game = await start_race(ann, bob)
    board = Board.new("scorpion", DEAL)
    move = next(m for m in board.legal_moves() if not m.is_deal)
    await ann.move(move)
    board.push(move)
    first.stop(signal.SIGKILL)

    async def reconnection() -> Reconnected:
        async for event in ann.events():
            if isinstance(event, Reconnected):
                return event
        raise AssertionError("the client gave up")

    reconnected = await asyncio.wait_for(reconnection(), 20)
    assert reconnected.url == second.url
    # Meanwhile the rival plays on; ann must see it after resuming.
    await bob.move(Board.new("scorpion", DEAL).legal_moves()[-1], check=False)
    deadline = asyncio.get_running_loop().time() + 20
    while ann.url != second.url or not ann.connected or ann.race is None or ann.race.v < 3:
        assert asyncio.get_running_loop().time() < deadline, (ann.url, ann.connected, ann.race and ann.race.v)
        await asyncio.sleep(0.05)
    assert ann.reconnects == 1 and ann.race.game == game
    assert ann.race.view is not None and ann.race.view["columns"] == [
        [None if i < d else card_text(c) for i, c in enumerate(col)]
        for col, d in zip(board.columns, board.down, strict=True)
    ]
    following = next(m for m in board.legal_moves() if not m.is_deal)
    accepted = await ann.move(following)
    assert accepted.v == 4 and accepted.summary["moves"] == 2
    assert move_json(following)["card"] in str(accepted.view)


async def test_a_node_restart_with_1012_makes_the_client_resume_on_the_same_url_list(
    start_node: NodeFactory, make_client: ClientFactory
) -> None:
    first = start_node(test_deals=DEAL)
    ann = await make_client([first], "Ann", backoff=(0.05, 0.3))
    bob = await make_client(first, "Bob", reconnect=False)
    await start_race(ann, bob)
    first.stop(signal.SIGTERM)
    replacement = start_node()
    ann.urls.append(replacement.url)
    deadline = asyncio.get_running_loop().time() + 20
    while ann.url != replacement.url or not ann.connected:
        assert asyncio.get_running_loop().time() < deadline
        await asyncio.sleep(0.05)
    answer = await ann.resume(ann.race.game if ann.race else "", 0)
    assert isinstance(answer, (Batch, Snapshot))
    assert ann.race is not None and ann.race.v >= 1 and ann.race.playing


async def test_a_spectator_whose_node_dies_catches_up_with_the_events_it_missed(
    start_node: NodeFactory, make_client: ClientFactory
) -> None:
    first = start_node()
    second = start_node(test_deals=DEAL)
    ann = await make_client(second, "Ann")
    bob = await make_client(second, "Bob")
    game = await start_race(ann, bob)
    eve = await make_client([first, second], "Eve", backoff=(0.05, 0.5))
    await eve.watch(game=game)
    board = Board.new("scorpion", DEAL)
    answers: list[Message] = []

    async def play(count: int) -> None:
        for _ in range(count):
            move = next(m for m in board.legal_moves() if not m.is_deal)
            answers.append(await ann.move(move))
            board.push(move)

    batches: list[SpectateBatch] = []

    async def batch() -> None:
        async for event in eve.events():
            if isinstance(event, SpectateBatch):
                batches.append(event)
                return

    watching = asyncio.ensure_future(batch())
    await play(2)
    first.stop(signal.SIGKILL)  # the spectator's node dies; the race goes on elsewhere
    await play(3)
    await asyncio.wait_for(watching, 20)
    deadline = asyncio.get_running_loop().time() + 20
    while eve.race is None or eve.race.v < answers[-1].v:  # type: ignore[attr-defined]
        assert asyncio.get_running_loop().time() < deadline, eve.race and eve.race.v
        await asyncio.sleep(0.05)
    assert eve.reconnects == 1 and eve.url == second.url
    assert batches[0].events, "the spectator came back with an empty batch"
    assert eve.race.racers[ann.player].view == player_view(board).as_dict()
