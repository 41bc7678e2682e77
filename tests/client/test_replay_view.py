"""``scorpion replay`` steps through a game in a full-screen view; ``scorpion deal`` prints the layout."""

from __future__ import annotations

from typing import Any

import pytest

from client.api import ScorpionClient
from client.cli import main
from client.tui.replay import ReplayApp
from protocol.game import Board, move_from_text, player_view

from .conftest import ClientFactory
from .test_analysis import LOSING, WINNABLE, lose_a_winnable_game

SIZES = [(80, 24), (120, 40)]


@pytest.mark.asyncio
@pytest.mark.parametrize("size", SIZES)
async def test_the_replay_view_steps_through_the_positions_and_marks_where_the_win_slipped(
    local_node: Any, make_client: ClientFactory, size: tuple[int, int]
) -> None:
    node = await local_node(test_deals=str(WINNABLE))
    ann: ScorpionClient = await make_client(node, "Ann", auto_resume=False)
    game = await lose_a_winnable_game(ann)
    await ann.analysis(timeout=60)
    log = await ann.replay(game)
    shown = await ann.replay_positions(game, ann.player)  # type: ignore[arg-type]
    assert shown.slipped is not None
    app = ReplayApp(log, shown, lambda player: ann.replay_positions(game, player))
    async with app.run_test(size=size) as pilot:
        await pilot.pause(0.1)
        first = app.board_text().plain
        assert "the deal" in first and f"replay {game}" in app.status_text().plain
        assert app.board_text().plain.startswith(" 1  ░░"), "face-down cards are backs, as in a game"
        board = Board.new("scorpion", WINNABLE)
        # The moves: 6S:3-2, undo, then LOSING; the last of them lets the win slip away.
        await pilot.press("right")
        board.push(move_from_text("6S:3-2"))
        assert app.step == 1 and "move 1: 6♠ 6S:3-2" in app.board_text().plain
        await pilot.press("right")
        board.pop()
        assert "move 2: undo" in app.board_text().plain
        for text in LOSING:
            await pilot.press("right")
            board.push(move_from_text(text))
        assert app.step == len(LOSING) + 2 == shown.slipped + 1
        assert shown.views[app.step] == player_view(board).as_dict()
        await pilot.pause(0.1)
        assert "with this move the win slipped away" in app.message_text()
        assert "✗" in app.board_text().plain and "the win slipped away at move 5" in app.board_text().plain
        await pilot.press("right")  # the last position: no further
        assert app.step == len(shown.moves)
        await pilot.press("home")
        assert app.step == 0
        await pilot.press("left")
        assert app.step == 0
        screen = app.screen_text()
        lines = screen.splitlines()
        assert len(lines) == size[1] and "the deal" in screen, screen
        assert "back" in lines[-1] and "forward" in lines[-1] and "quit" in lines[-1], lines[-1]


def test_deal_prints_the_layout_and_the_notation_only_when_asked(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["deal", "--number", "42"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("scorpion deal 42: 7 columns")
    assert lines[1] == " 1  [5♠] [T♠] [5♥]   9♣   K♥   7♦   3♥"
    assert lines[-1] == "reserve (dealt one to each of the first columns): 8♣ A♥ Q♣"
    assert main(["deal", "--number", "42", "--notation"]) == 0
    assert capsys.readouterr().out.startswith("scorpion any-time 5sts5h9CKH7D3H/")
