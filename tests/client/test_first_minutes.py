"""A new player's first minutes in the terminal: leaving a game, refusals in words, game ids,
silent keys, the countdown and live progress (issue 50, terminal client)."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest

from client.api import ScorpionClient
from client.commands.support.session import server_error_text
from client.errors import ServerError
from client.tui import ScorpionApp
from client.tui.render import move_words
from protocol.game import Board, card_text
from protocol.wire.message import Options

from .conftest import ClientFactory, NodeFactory, racing

pytestmark = pytest.mark.asyncio

DEAL = 1234567890123
SIZES = [(80, 24), (120, 40)]


async def until(check: Any, timeout: float = 10.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not check():
        assert asyncio.get_running_loop().time() < deadline, "condition not reached in time"
        await asyncio.sleep(0.05)


@pytest.mark.parametrize("size", SIZES)
async def test_q_asks_first_and_offers_to_leave_a_solo_game_saved_or_to_resign(
    local_node: Any, make_client: ClientFactory, size: tuple[int, int]
) -> None:
    node = await local_node(test_deals=str(DEAL))
    ann: ScorpionClient = await make_client(node, "Ann", auto_resume=False)
    app = ScorpionApp(ann, lambda c: c.solo_new())
    async with app.run_test(size=size) as pilot:
        await until(lambda: ann.race is not None)
        game = ann.race.game  # type: ignore[union-attr]
        await pilot.press("q")
        await pilot.pause(0.1)
        assert not app.quitting, "one q leaves nothing: it asks"
        message = app.screen_text()
        assert f"leave game {game}? q: leave it saved · R: resign · Esc: stay" in message, message
        await pilot.press("escape")
        await pilot.pause(0.05)
        assert not app.quitting and app.note == ""
        await pilot.press("q", "h")  # another message replaces the question: q asks again
        await until(lambda: app.note.startswith("hint: "))
        assert not app.quit_asked
        await pilot.press("q", "R")
        await until(lambda: app.quitting)
        assert ann.race is not None and ann.race.ended is not None, "R after q resigned the game"
    bob: ScorpionClient = await make_client(node, "Bob", auto_resume=False)
    app = ScorpionApp(bob, lambda c: c.solo_new())
    async with app.run_test(size=size) as pilot:
        await until(lambda: bob.race is not None)
        await pilot.press("q")
        await pilot.pause(0.05)
        await pilot.press("q")
        await until(lambda: app.quitting)
        saved = await bob.saved_games()
        assert [g.game for g in saved.games] == [bob.race.game], "q twice leaves the solo game saved"  # type: ignore[union-attr]


async def test_a_race_left_with_q_says_it_goes_on_and_a_refusal_names_it_in_words(
    start_node: NodeFactory, make_client: ClientFactory
) -> None:
    _, (_, bob), game = await racing(start_node, make_client, DEAL, "Ann", "Bob")
    app = ScorpionApp(bob)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(lambda: bob.race is not None)
        await pilot.press("q")
        await pilot.pause(0.1)
        assert f"leave game {game}? q: leave (it goes on) · R: resign · Esc: stay" in app.screen_text()
        await pilot.press("q")
        await until(lambda: app.quitting)
    with pytest.raises(ServerError) as refused:
        await bob.room_create("scorpion", 2, Options())
    assert f"(game {game})" in refused.value.message, "the server names the game in the way"
    words = server_error_text(refused.value, bob.race.mode if bob.race else None)
    assert words.startswith(f"you cannot open a room now: you are still a racer in game {game}"), words
    assert "resign it" in words and "allowed:" not in words and "room_create" not in words


async def test_a_saved_solo_game_in_the_way_says_how_to_resume_it(
    local_node: Any, make_client: ClientFactory
) -> None:
    node = await local_node(test_deals=str(DEAL))
    ann: ScorpionClient = await make_client(node, "Ann", auto_resume=False)
    started = await ann.solo_new()
    with pytest.raises(ServerError) as refused:
        await ann.queue_join("scorpion")
    words = server_error_text(refused.value, "solo")
    assert words == (
        f"you cannot join a quick match now: your solo game {started.game} is still open (it is saved): "
        f"resume it with `scorpion play --resume {started.game}`, then finish it or resign it (R twice)"
    ), words
    host: ScorpionClient = await make_client(node, "Host")
    room = await host.room_create("scorpion", 2, Options())
    with pytest.raises(ServerError) as in_room:
        await host.solo_new()
    assert in_room.value.in_the_way() == (
        f"you cannot start a solo game now: you are in room {room.room}: "
        "leave it first (q in the full-screen client)"
    )


@pytest.mark.parametrize("size", SIZES)
async def test_the_game_id_is_on_screen_and_the_end_says_how_to_replay_or_analyse_it(
    local_node: Any, make_client: ClientFactory, size: tuple[int, int]
) -> None:
    node = await local_node(test_deals=str(DEAL))
    ann: ScorpionClient = await make_client(node, "Ann", auto_resume=False)
    app = ScorpionApp(ann, lambda c: c.solo_new())
    async with app.run_test(size=size) as pilot:
        await until(lambda: ann.race is not None)
        await pilot.pause(0.1)
        game = ann.race.game  # type: ignore[union-attr]
        assert game in app.screen_text().splitlines()[0], "the game id is on the status line"
        await ann.resign()
        await until(lambda: ann.race is not None and ann.race.ended is not None)
        await pilot.pause(0.2)
        over = app.screen_text()
        assert f"game {game}: scorpion replay {game} · scorpion analyze {game}" in over, over
    assert app.farewell_text() == (
        f"game {game} is over: `scorpion replay {game}` steps through it, "
        f"`scorpion analyze {game}` shows the solver's winning line"
    )


async def test_the_terminal_is_told_the_ended_games_ids_once_the_app_closed(
    local_node: Any, make_client: ClientFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    node = await local_node(test_deals=str(DEAL))
    ann: ScorpionClient = await make_client(node, "Ann", auto_resume=False)
    app = ScorpionApp(ann, lambda c: c.solo_new())
    running = asyncio.create_task(app.run_async(headless=True, size=(80, 24)))
    await until(lambda: ann.race is not None)
    await ann.resign()
    await until(lambda: bool(app.finished))
    app.exit(0)
    await running
    game = ann.race.game  # type: ignore[union-attr]
    assert f"game {game} is over: `scorpion replay {game}` steps through it" in capsys.readouterr().out


@pytest.mark.parametrize("size", SIZES)
async def test_the_key_bar_keeps_quit_and_type_move_and_a_resize_leaves_no_stray_characters(
    local_node: Any, make_client: ClientFactory, size: tuple[int, int]
) -> None:
    node = await local_node(test_deals=str(DEAL))
    ann: ScorpionClient = await make_client(node, "Ann", auto_resume=False)
    app = ScorpionApp(ann, lambda c: c.solo_new())
    async with app.run_test(size=size) as pilot:
        await until(lambda: ann.race is not None)
        await pilot.pause(0.2)
        keys = app.screen_text().splitlines()[-1]
        assert keys.startswith("q quit : type move "), keys
        assert keys.rstrip().endswith("R resign n new p replay w win?"), "the whole bar fits"
        await pilot.resize_terminal(120, 40)
        await pilot.pause(0.2)
        await pilot.resize_terminal(*size)
        await pilot.pause(0.3)
        lines = app.screen_text().splitlines()
        assert len(lines) == size[1] and all(len(line.rstrip()) <= size[0] for line in lines)
        board = [line for line in lines[1:-4] if line.strip()]
        assert all(line.lstrip()[:2].strip().isdigit() or "reserve" in line for line in board[:8]), lines


@pytest.mark.parametrize("size", SIZES)
async def test_undo_and_hint_keys_say_why_they_are_off_and_a_move_typed_while_disconnected_is_refused(
    start_node: NodeFactory, make_client: ClientFactory, size: tuple[int, int]
) -> None:
    node, (_, ann), _ = await racing(start_node, make_client, DEAL, "Host", "Ann", undo=False, hints=False)
    app = ScorpionApp(ann)
    async with app.run_test(size=size) as pilot:
        await until(lambda: ann.race is not None and ann.race.view is not None)
        await pilot.pause(0.1)
        await pilot.press("u")
        await pilot.pause(0.05)
        assert "undo is off in this race: its room was opened without them" in app.screen_text()
        await pilot.press("h")
        await pilot.pause(0.05)
        assert "hints are off in this race" in app.note
        await pilot.press("colon", *"undo", "enter")
        await pilot.pause(0.05)
        assert app.note.startswith("undo is off in this race")
        board = Board.new("scorpion", DEAL)
        move = next(m for m in board.legal_moves() if not m.is_deal)
        node.stop()
        await until(lambda: not ann.connected)
        await pilot.press("colon", *[{":": "colon", "-": "minus"}.get(ch, ch) for ch in str(move)], "enter")
        await pilot.pause(0.2)
        words = move_words(move)
        assert app.note == f"not connected: {words} was not sent; play it again once reconnected", app.note
        assert ann.race is not None and ann.race.v == 1, "nothing was queued to be played later"


async def test_messages_name_cards_as_the_board_draws_them(
    local_node: Any, make_client: ClientFactory
) -> None:
    node = await local_node(test_deals=str(DEAL))
    ann: ScorpionClient = await make_client(node, "Ann", auto_resume=False)
    app = ScorpionApp(ann, lambda c: c.solo_new())
    async with app.run_test(size=(80, 24)) as pilot:
        await until(lambda: ann.race is not None)
        board = Board.new("scorpion", DEAL)
        move = next(m for m in board.legal_moves() if not m.is_deal)
        await pilot.press("colon", *[{":": "colon", "-": "minus"}.get(ch, ch) for ch in str(move)], "enter")
        await until(lambda: "accepted" in app.note)
        assert app.note == f"{move_words(move)} accepted", "no internal version in the message"
        assert "(v" not in app.note and card_text(move.card) not in app.note
        await pilot.press("colon", *[{":": "colon", "-": "minus"}.get(ch, ch) for ch in "KC:5-2"], "enter")
        await pilot.pause(0.1)
        assert "illegal:" in app.note and re.search(r"\b[2-9TJQKA][SHDC]\b", app.note) is None, app.note


@pytest.mark.parametrize("size", SIZES)
async def test_the_countdown_shows_after_the_host_starts_and_a_rivals_bar_moves_with_each_move(
    local_node: Any, make_client: ClientFactory, size: tuple[int, int]
) -> None:
    node = await local_node(test_deals=str(DEAL), countdown_seconds=2.0)
    host: ScorpionClient = await make_client(node, "Host")
    ann: ScorpionClient = await make_client(node, "Ann")
    room = await host.room_create("scorpion", 2, Options())
    app = ScorpionApp(ann, lambda c: c.room_join(room.room))
    async with app.run_test(size=size) as pilot:
        await until(lambda: ann.room is not None)
        await pilot.press("r")
        await until(lambda: host.room is not None and all(p.ready for p in host.room.players))
        await host.room_start()
        await until(lambda: "The race starts in" in app.screen_text())
        screen = app.screen_text()
        assert re.search(r"The race starts in [12]…", screen), screen
        assert "the race starts in" in screen.splitlines()[0], "the status line counts down too"
        await until(lambda: ann.race is not None and ann.race.view is not None)
        await pilot.pause(0.4)
        assert "starts in" not in app.screen_text()
        board = Board.new("scorpion", DEAL)
        quiet = next(
            m
            for m in board.legal_moves()
            if not m.is_deal and board.copy().face_down_left == _after(board, m).face_down_left
        )

        def host_line() -> str:
            return next(line for line in app.screen_text().splitlines() if "Host" in line and "mv" in line)

        before = host_line()
        await host.move(quiet)
        await until(lambda: "1 mv" in host_line() or "1mv" in host_line())
        after = host_line()
        bar = lambda line: line.split("Host")[1].split()[0]  # noqa: E731
        assert bar(after) != bar(before), f"the bar did not move: {before!r} → {after!r}"


def _after(board: Board, move: Any) -> Board:
    moved = board.copy()
    moved.push(move)
    return moved
