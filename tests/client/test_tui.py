"""The full-screen client, driven headless (textual's pilot) against a real server."""

from __future__ import annotations

import asyncio
import gc
import warnings
from typing import Any

import pytest

from client.api import ScorpionClient
from client.tui import ScorpionApp
from protocol.game import Board, card_text, player_view
from protocol.wire.message import RaceStarted

from .conftest import ClientFactory, NodeFactory, racing

pytestmark = pytest.mark.asyncio

DEAL = 1234567890123


SOLO_DEALS = (424242424242, 1234567890123)


async def until(check: object, timeout: float = 10.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not check():  # type: ignore[operator]
        assert asyncio.get_running_loop().time() < deadline, "condition not reached in time"
        await asyncio.sleep(0.05)


async def test_a_racer_picks_a_card_and_a_column_and_the_move_is_accepted_on_screen(
    start_node: NodeFactory, make_client: ClientFactory
) -> None:
    node = start_node(test_deals=DEAL)
    host = await make_client(node, "Host")
    player: ScorpionClient = await make_client(node, "Ann")
    room = await host.room_create("scorpion")
    app = ScorpionApp(player, lambda c: c.room_join(room.room))
    async with app.run_test(size=(80, 24)) as pilot:
        await until(lambda: player.room is not None)
        await pilot.pause(0.1)
        lobby = app.screen_text()
        assert room.room in lobby and "Host" in lobby and "Ann (you)" in lobby
        assert f"share: http://127.0.0.1:{node.port}/?room={room.room}" in lobby, "the room's link to share"
        await pilot.press("r")
        await until(lambda: host.room is not None and all(p.ready for p in host.room.players))
        await host.room_start()
        await host.wait_for(RaceStarted, timeout=10)
        await until(lambda: player.race is not None)
        await pilot.pause(0.1)
        board = Board.new("scorpion", DEAL)
        move = next(m for m in board.legal_moves() if not m.is_deal)
        await pilot.press(str(move.source + 1))
        assert app.cursor[0] == move.source
        while player.race.board().columns[move.source][app.cursor[1]] != move.card:  # type: ignore[union-attr]
            wanted = board.columns[move.source].index(move.card)
            await pilot.press("right" if app.cursor[1] < wanted else "left")
        await pilot.press("enter")
        assert app.picked == (move.source, board.columns[move.source].index(move.card))
        assert move.target in app._targets(app.picked)
        await pilot.pause(0.05)
        picked_screen = app.screen_text()
        assert f"{move.target + 1:>2}→" in picked_screen, "the legal target is highlighted"
        await pilot.press(str(move.target + 1))
        await until(lambda: player.race is not None and player.race.v >= 2)
        await pilot.pause(0.2)
        board.push(move)
        assert player.race.view["columns"][move.target][-1] == card_text(board.columns[move.target][-1])
        screen = app.screen_text()
        lines = screen.splitlines()
        assert len(lines) <= 24 and all(len(line) <= 80 for line in lines)
        assert "moves 1" in screen and "score 0" in screen and "accepted" in screen
        assert "░░" in screen, "face-down cards are drawn as backs"
        assert "reserve 3 cards" in screen
        assert "Host" in screen and "Ann" in screen, "both racers have a progress bar"
        assert "1 mv" in screen
        assert "⏱" in screen and "👁 0" in screen
        hidden = board.columns[0][0]
        assert card_text(hidden)[0] + "♠♥♦♣"["SHDC".index(card_text(hidden)[1])] not in lines[1]


async def test_a_move_typed_in_notation_and_the_deal_key_are_played(
    start_node: NodeFactory, make_client: ClientFactory
) -> None:
    _, (_, player), _ = await racing(start_node, make_client, DEAL, "Host", "Ann")
    board = Board.new("scorpion", DEAL)
    move = next(m for m in board.legal_moves() if not m.is_deal)
    app = ScorpionApp(player)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("colon")
        assert app.focused is not None and app.focused.id == "command"
        await pilot.press(*[{":": "colon", "-": "minus"}.get(ch, ch) for ch in str(move)])
        await pilot.press("enter")
        await until(lambda: player.race is not None and player.race.v >= 2)
        await pilot.press("d")
        await until(lambda: player.race is not None and player.race.v >= 3)
        await pilot.pause(0.2)
        assert player.race.view["reserve_left"] == 0
        assert "reserve dealt" in app.screen_text()
        await pilot.press("1", "enter")  # the face-down area: nothing to pick there is refused kindly
        await pilot.pause(0.05)


async def test_a_spectator_sees_every_racer_with_live_bars(
    start_node: NodeFactory, make_client: ClientFactory
) -> None:
    _, (ann, _, watcher), game = await racing(start_node, make_client, DEAL, "Ann", "Bob", "Watcher")
    await watcher.watch(game=game)
    app = ScorpionApp(watcher)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause(0.1)
        before = app.screen_text()
        assert "watching Ann" in before or "watching Bob" in before
        assert "👁 1" in before, "the spectator count is on the status line"
        # The key bar offers a spectator what a spectator can do, and no moves to type.
        keys = before.splitlines()[-1]
        assert "next racer" in keys and "quit" in keys, keys
        for player_key in ("pick", "undo", "hint", "deal", "resign", "type move"):
            assert player_key not in keys, f"{player_key!r} is offered to a spectator: {keys}"
        assert "type a move" not in before, "the move prompt is shown to a spectator"
        await pilot.press("R", "d", "colon")  # a player's keys do nothing for a spectator
        await pilot.pause(0.1)
        assert app.focused is None
        board = Board.new("scorpion", DEAL)
        await ann.move(next(m for m in board.legal_moves() if not m.is_deal))
        await until(lambda: watcher.race is not None and watcher.race.v >= 2)
        await pilot.pause(0.1)
        screen = app.screen_text()
        assert " 1 mv" in screen and "Ann" in screen and "Bob" in screen
        await pilot.press("tab")
        assert app.screen_text() != screen


async def test_a_solo_game_hint_keyboard_move_undo_new_game_and_replay(
    local_node: Any, make_client: ClientFactory
) -> None:
    node = await local_node(test_deals=",".join(map(str, SOLO_DEALS)))
    ann: ScorpionClient = await make_client(node, "Ann", auto_resume=False)
    app = ScorpionApp(ann, lambda c: c.solo_new())
    async with app.run_test(size=(80, 24)) as pilot:
        await until(lambda: ann.race is not None)
        await pilot.pause(0.1)
        race = ann.race
        assert race is not None and race.mode == "solo"
        first = race.game
        board = Board.new("scorpion", SOLO_DEALS[0])
        assert race.view == player_view(board).as_dict()
        screen = app.screen_text()
        assert "solo" in screen.splitlines()[0] and "👁" not in screen, "solo games are not watched"
        assert "n new" in screen and "p replay" in screen, "the solo keys are in the key bar"
        assert "next racer" not in screen, "a player has no racer to switch to"
        await pilot.press("h")
        await until(lambda: app.hinted is not None)
        await pilot.pause(0.1)
        _, _, best = app.hinted  # type: ignore[misc]
        assert best in board.legal_moves() and not best.is_deal
        row = board.columns[best.source].index(best.card)
        assert app.cursor == (best.source, row), "the hint puts the cursor on the card to move"
        hinted_screen = app.screen_text()
        assert f"{best.target + 1:>2}→" in hinted_screen, "the hinted target column is highlighted"
        assert "hint: " in hinted_screen
        await pilot.press("enter")
        assert app.picked == (best.source, row)
        await pilot.press(str(best.target + 1))
        await until(lambda: ann.race is not None and ann.race.v == 2)
        assert ann.race.summary["moves"] == 1
        board.push(best)
        assert ann.race.view == player_view(board).as_dict()
        await pilot.press("u")
        await until(lambda: ann.race is not None and ann.race.v == 3)
        assert ann.race.summary["moves"] == 0
        assert ann.race.view == player_view(Board.new("scorpion", SOLO_DEALS[0])).as_dict()
        await pilot.press("n")
        await until(lambda: ann.race is not None and ann.race.game != first)
        second = ann.race.game
        fresh = player_view(Board.new("scorpion", SOLO_DEALS[1])).as_dict()
        assert ann.race.view == fresh and ann.race.v == 1
        await pilot.pause(0.1)
        assert "new game" in app.note
        await pilot.press("p")
        await until(lambda: ann.race is not None and ann.race.game not in (first, second))
        assert ann.race.view == fresh and ann.race.mode == "solo"
        # Resigning cannot be undone: one R only asks, and the question lapses.
        app.resign_window = 0.3
        await pilot.press("R")
        await pilot.pause(0.1)
        assert "press R again to resign" in app.note and ann.race.playing
        await pilot.pause(0.4)
        await pilot.press("R")
        await pilot.pause(0.1)
        assert ann.race.playing, "an R long after the first asks again"
        await pilot.press("R")
        await until(lambda: ann.race is not None and ann.race.ended is not None)
        await pilot.pause(0.1)
        over = app.screen_text()
        assert "Game over" in over and f"deal {SOLO_DEALS[1]}" in over
        keys = over.splitlines()[-1]
        for gone in ("pick", "undo", "hint", "deal", "resign"):
            assert gone not in keys, f"{gone!r} is offered after the game is over: {keys}"
        assert "n new" in keys and "quit" in keys


async def test_a_quick_match_nobody_joins_says_so_and_offers_no_game_keys(
    local_node: Any, make_client: ClientFactory
) -> None:
    node = await local_node(queue_timeout=0.5)
    ann: ScorpionClient = await make_client(node, "Ann", auto_resume=False, account=True)
    await ann.queue_join("wasp")
    app = ScorpionApp(ann)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause(0.1)
        keys = app.screen_text().splitlines()[-1]
        for absent in ("pick", "undo", "hint", "deal", "resign"):
            assert absent not in keys, f"{absent!r} is offered with no game: {keys}"
        await until(lambda: app.queue_waited is not None)
        await pilot.pause(0.1)
        screen = app.screen_text()
        assert "No quick match: nobody else came within" in screen
        assert "waiting for the server" not in screen


async def test_three_blind_mice_shows_its_cells_and_offers_no_reserve_to_deal(
    local_node: Any, make_client: ClientFactory
) -> None:
    node = await local_node(test_deals=str(SOLO_DEALS[0]))
    ann: ScorpionClient = await make_client(node, "Ann", auto_resume=False)
    app = ScorpionApp(ann, lambda c: c.solo_new("three-blind-mice"))
    async with app.run_test(size=(80, 24)) as pilot:
        await until(lambda: ann.race is not None)
        await pilot.pause(0.1)
        screen = app.screen_text()
        board = Board.new("three-blind-mice", SOLO_DEALS[0])
        assert ann.race is not None and ann.race.view == player_view(board).as_dict()
        assert " R1 " in screen and " R2 " in screen, "the two reserve cells are drawn"
        assert "reserve" not in screen, "a variant without a reserve stock shows none"
        keys = screen.splitlines()[-1]
        assert "hint" in keys and "deal" not in keys, keys
        await pilot.press("d")  # nothing to deal: no request, no refusal
        await pilot.pause(0.2)
        assert ann.race.v == 1 and app.note == ""
        # A Scorpion game after it: the reserve and its key are back.
        await ann.solo_new("scorpion")
        await until(lambda: ann.race is not None and ann.race.variant == "scorpion")

        def redrawn() -> bool:  # the board and the key bar, redrawn (later on a loaded machine)
            screen = app.screen_text()
            return "reserve 3 cards" in screen and "d deal" in screen.splitlines()[-1]

        await until(redrawn)


async def test_keys_pressed_while_quitting_start_nothing_and_leave_no_coroutine_unawaited(
    local_node: Any, make_client: ClientFactory
) -> None:
    node = await local_node(test_deals=str(SOLO_DEALS[0]))
    ann: ScorpionClient = await make_client(node, "Ann", auto_resume=False)
    app = ScorpionApp(ann, lambda c: c.solo_new())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        async with app.run_test(size=(80, 24)) as pilot:
            await until(lambda: ann.race is not None)
            await pilot.pause(0.1)
            v = ann.race.v  # type: ignore[union-attr]
            # The keys typed just after q arrive before the app has closed (a terminal
            # delivers them in one read): each asks for a request while it shuts down.
            await app.action_quit()  # asks whether to leave the game: q again leaves
            await app.action_quit()
            app.action_undo()
            app.action_resign()
            app.action_hint()
        del app, pilot
        gc.collect()
    unawaited = [str(w.message) for w in caught if "never awaited" in str(w.message)]
    assert unawaited == [], unawaited
    await asyncio.sleep(0.3)
    race = ann.race
    assert race is not None and race.v == v and race.ended is None, "nothing typed after q reached the server"


async def test_racer_lines_fit_a_narrow_terminal_and_follow_its_resizes(
    start_node: NodeFactory, make_client: ClientFactory
) -> None:
    long_name = "Annabelle Longname-Racer"  # the longest name the protocol takes
    _, (_, bob), _ = await racing(start_node, make_client, DEAL, long_name, "Bob")
    app = ScorpionApp(bob)

    def racer_lines(screen: str) -> list[str]:
        return [line for line in screen.splitlines() if "Annabel" in line or "Bob" in line]

    async with app.run_test(size=(56, 24)) as pilot:
        await until(lambda: bob.race is not None and len(bob.race.racers) == 2)
        await pilot.pause(0.2)
        for width in (56, 44, 80, 64):
            await pilot.resize_terminal(width, 24)
            await pilot.pause(0.2)
            screen = app.screen_text()
            assert all(len(line.rstrip()) <= width for line in screen.splitlines()), screen
            lines = racer_lines(screen)
            assert len(lines) == 2, f"at {width} columns a racer's line wraps:\n{screen}"
            for line in lines:
                assert "playing" in line and "0 mv" in line.replace("0mv", "0 mv"), line
            bar = max(line.count("░") for line in lines)
            assert bar >= (20 if width >= 80 else 4), f"the bar is {bar} cells at {width} columns"
            status = screen.splitlines()[0]
            assert "playing" in status and "0/4" in status, f"the status line is cut at {width}: {status}"
        # The board follows the resize too: a wider terminal draws it whole again.
        assert "reserve 3 cards" in app.screen_text()


async def test_after_a_race_a_racer_takes_up_a_rematch_with_one_key(
    start_node: NodeFactory, make_client: ClientFactory
) -> None:
    node, (ann, bob), game = await racing(start_node, make_client, DEAL, "Ann", "Bob")
    app = ScorpionApp(bob)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(lambda: bob.race is not None and bob.race.game == game)
        await pilot.pause(0.1)
        assert "race again" not in app.screen_text(), "no rematch while the race is on"
        await ann.resign()
        await bob.resign()
        await until(lambda: bob.race is not None and bob.race.ended is not None)
        await pilot.pause(0.2)
        screen = app.screen_text()
        assert "a: race again" in screen and "race again" in screen.splitlines()[-1], screen
        room = await ann.rematch(game)
        await until(lambda: "Ann wants a rematch: press a to race again" in app.screen_text())
        assert bob.rematch_offers[game].room == room.room and bob.rematch_offers[game].name == "Ann"
        await pilot.press("a")
        await until(lambda: bob.room is not None and bob.room.room == room.room)
        await pilot.pause(0.2)
        lobby = app.screen_text()
        assert room.room in lobby and "Ann" in lobby and "Bob (you)" in lobby, lobby
        assert f"share: http://127.0.0.1:{node.port}/?room={room.room}" in lobby, "the new room's own link"
        assert "race again" not in lobby.splitlines()[-1]
        await pilot.press("r")
        await until(lambda: ann.room is not None and all(p.ready for p in ann.room.players))
        await ann.room_start()
        await until(lambda: bob.race is not None and bob.race.game != game and bob.race.ended is None)
        await pilot.pause(0.2)
        assert "reserve 3 cards" in app.screen_text() and "Race over" not in app.screen_text()


async def test_the_mouse_picks_a_card_and_drops_it_on_a_column_and_a_double_click_moves_it(
    start_node: NodeFactory, make_client: ClientFactory
) -> None:
    _, (_, ann), _ = await racing(start_node, make_client, DEAL, "Host", "Ann")
    board = Board.new("scorpion", DEAL)
    moves = [m for m in board.legal_moves() if not m.is_deal]
    move = moves[0]
    row = board.columns[move.source].index(move.card)

    def at(column: int, card: int | None) -> tuple[int, int]:
        """Return where a card (or, for None, a column's number) is drawn in the board widget."""
        return (1 + (4 + 3 * card if card is not None else 1), column)  # the widget's padding is 1

    app = ScorpionApp(ann)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(lambda: ann.race is not None and ann.race.view is not None)
        await pilot.pause(0.1)
        await pilot.click("#board", offset=at(0, 0))
        await pilot.pause(0.05)
        assert app.picked is None and "face down" in app.note, app.note
        await pilot.click("#board", offset=at(move.source, row))
        await pilot.pause(0.05)
        assert app.picked == (move.source, row), app.note
        assert f"{move.target + 1:>2}→" in app.screen_text(), "the legal target is highlighted"
        await pilot.click("#board", offset=at(move.source, row))  # the same card again: put down
        await pilot.pause(0.6)  # (past the double-click window)
        assert app.picked is None
        await pilot.click("#board", offset=at(move.source, row))
        await pilot.pause(0.6)
        await pilot.click("#board", offset=at(move.target, None))  # the column's number
        await until(lambda: ann.race is not None and ann.race.v >= 2)
        board.push(move)
        assert ann.race.view == player_view(board).as_dict()
        # A double click moves a card that fits in one place only.
        others = [m for m in board.legal_moves() if not m.is_deal]
        single = next(m for m in others if sum(1 for o in others if o.card == m.card) == 1)
        spot = at(single.source, board.columns[single.source].index(single.card))
        await pilot.double_click("#board", offset=spot)
        await until(lambda: ann.race is not None and ann.race.v >= 3)
        board.push(single)
        assert ann.race.view == player_view(board).as_dict()


async def test_a_spectator_is_told_when_the_racers_race_again_and_watches_with_one_key(
    start_node: NodeFactory, make_client: ClientFactory
) -> None:
    _, (ann, bob, watcher), game = await racing(start_node, make_client, DEAL, "Ann", "Bob", "Watcher")
    await watcher.watch(game=game)
    app = ScorpionApp(watcher)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause(0.1)
        assert "watch the rematch" not in app.screen_text()
        await ann.resign()
        await bob.resign()
        await until(lambda: watcher.race is not None and watcher.race.ended is not None)
        await ann.rematch(game)
        await bob.rematch(game)
        await bob.ready(True)
        await ann.room_start()
        await until(lambda: "Ann and Bob are racing again: press m to watch" in app.screen_text())
        await until(lambda: "watch the rematch" in app.screen_text().splitlines()[-1])  # in the key bar
        again = next(g for g in watcher.games.values() if g.rematch_of == game)
        await pilot.press("m")
        await until(lambda: watcher.race is not None and watcher.race.game == again.game)
        await pilot.pause(0.2)
        screen = app.screen_text()
        assert "watching" in screen.splitlines()[0] and "Race over" not in screen
        assert "watch the rematch" not in screen.splitlines()[-1]
