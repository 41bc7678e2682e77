"""The solver's help through the client: post-game analysis, "still winnable?", the CLI and the TUI."""

from __future__ import annotations

from typing import Any

import pytest

from client.api import ScorpionClient
from client.commands.analyze import format_analysis
from client.errors import ServerError
from client.identity import TokenStore
from client.tui import ScorpionApp
from protocol.game import Board, move_from_json, move_from_text
from protocol.solver import Budget, Verdict, solve, solve_deal
from protocol.wire.message import Analysis

from .conftest import ClientFactory, start_race
from .test_cli import run_cli
from .test_tui import until

pytestmark = pytest.mark.asyncio

WINNABLE = 1_000_000_000_007
"""A deal the solver proves winnable at once (a 52-move line in a few dozen nodes)."""
LOSING = ("TD:4-7", "6C:5-4", "KD:2-5")
"""Moves of WINNABLE after which it can no longer be won: the third one loses it."""
UNWINNABLE = 1234567890123


async def test_the_test_deals_are_what_the_tests_say() -> None:
    assert solve_deal("scorpion", WINNABLE, budget=Budget(nodes=50_000)).verdict is Verdict.WINNABLE
    assert solve_deal("scorpion", UNWINNABLE, budget=Budget(nodes=50_000)).verdict is Verdict.UNWINNABLE
    board = Board.new("scorpion", WINNABLE)
    verdicts = []
    for text in LOSING:
        board.push(move_from_text(text))
        verdicts.append(solve(board, Budget(nodes=50_000)).verdict)
    assert verdicts == [Verdict.WINNABLE, Verdict.WINNABLE, Verdict.UNWINNABLE]


async def lose_a_winnable_game(client: ScorpionClient) -> str:
    """Start a solo game on WINNABLE, take one move back, lose the win with LOSING, resign."""
    started = await client.solo_new()
    await client.move("6S:3-2")
    await client.undo()
    for text in LOSING:
        await client.move(text)
    await client.resign()
    await ended(client, started.game)
    return started.game


async def ended(client: ScorpionClient, game: str) -> None:
    def over() -> bool:
        race = client.race
        return race is not None and race.game == game and race.ended is not None

    await until(over)


async def test_the_analysis_of_a_lost_winnable_game_is_pushed_kept_and_names_the_slipped_move(
    local_node: Any, make_client: ClientFactory
) -> None:
    node = await local_node(test_deals=str(WINNABLE))
    ann: ScorpionClient = await make_client(node, "Ann", auto_resume=False)
    started = await ann.solo_new()
    with pytest.raises(ServerError) as running:
        await ann.analyze()
    assert running.value.code == "not_allowed"
    await ann.resign()
    game = await lose_a_winnable_game(ann)
    assert game != started.game
    analysis = await ann.analysis(timeout=60)
    assert isinstance(analysis, Analysis) and analysis.game == game and analysis.player == ann.player
    assert analysis.verdict == "winnable" and not analysis.won
    assert analysis.moves == len(LOSING) and analysis.slipped == len(LOSING) - 1
    board = Board.new("scorpion", WINNABLE)
    board.replay(move_from_json(m) for m in analysis.line)
    assert board.is_won(), "the line wins the deal from its opening"
    assert ann.race is not None and ann.race.analysis == analysis, "the race keeps the analysis"
    assert ann.analyses[game] == analysis
    assert await ann.slipped_move(analysis) == move_from_text(LOSING[-1]), "undos are taken back"
    again = await ann.analyze(game)
    assert again.line == analysis.line and again.slipped == analysis.slipped and again.ref is not None


async def test_an_unwinnable_deal_has_no_line_and_nothing_slipped(
    local_node: Any, make_client: ClientFactory
) -> None:
    node = await local_node(test_deals=str(UNWINNABLE))
    ann: ScorpionClient = await make_client(node, "Ann", auto_resume=False)
    await ann.solo_new()
    await ann.deal()
    await ann.resign()
    analysis = await ann.analysis(timeout=60)
    assert analysis.verdict == "unwinnable" and analysis.line == () and analysis.slipped is None
    assert analysis.moves == 1 and await ann.slipped_move(analysis) is None
    assert format_analysis(analysis).splitlines()[:3] == [
        f"game {analysis.game}",
        "Deal winnable: no",
        "1 move of yours analysed",
    ]


async def test_still_winnable_in_solo_games_only(local_node: Any, make_client: ClientFactory) -> None:
    node = await local_node(test_deals=str(WINNABLE))
    ann: ScorpionClient = await make_client(node, "Ann", auto_resume=False)
    await ann.solo_new()
    info = await ann.winnable()
    assert info.verdict == "winnable" and info.move is not None
    assert ann.race is not None and ann.race.winnable == info
    board = Board.new("scorpion", WINNABLE)
    assert move_from_json(info.move) in board.legal_moves()
    for text in LOSING:
        await ann.move(text)
    assert ann.race.winnable is None, "the answer is about a board that changed"
    lost = await ann.winnable()
    assert lost.verdict == "unwinnable" and lost.move is None
    await ann.resign()
    await ended(ann, ann.race.game)
    # Neither races nor the daily deal get the solver's help while they run.
    bob: ScorpionClient = await make_client(node, "Bob", auto_resume=False)
    await start_race(ann, bob)
    with pytest.raises(ServerError) as refused:
        await ann.winnable()
    assert refused.value.code == "not_allowed"
    carl: ScorpionClient = await make_client(node, "Carl", auto_resume=False, account=True)
    daily = await carl.daily_start()
    with pytest.raises(ServerError) as daily_refused:
        await carl.winnable()
    assert daily_refused.value.code == "not_allowed"
    await carl.resign()
    await ended(carl, daily.game)
    with pytest.raises(ServerError) as hidden:
        await carl.analyze(daily.game)
    assert hidden.value.code == "not_allowed", "a daily game's analysis waits for the day's end"


async def test_the_cli_prints_the_verdict_the_slipped_move_and_the_winning_line(
    local_node: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    node = await local_node(test_deals=str(WINNABLE))
    ann = ScorpionClient(node.url, "Ann", store=TokenStore(), auto_resume=False)
    await ann.connect()
    try:
        game = await lose_a_winnable_game(ann)
        analysis = await ann.analysis(game, timeout=60)
    finally:
        await ann.close()
    code, out, err = await run_cli(capsys, "analyze", game, "--server", node.url)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[:4] == [
        f"game {game}",
        "Deal winnable: yes",
        "Your win slipped away at move 3: KD:2-5",
        "3 moves of yours analysed",
    ]
    assert lines[5] == f"a winning line from the opening ({len(analysis.line)} moves):"
    first = move_from_json(analysis.line[0])
    assert lines[6].startswith(f"  1. {first}") and f"{len(analysis.line):>3}. " in lines[-1]
    code, out, err = await run_cli(capsys, "analyze", "G7K2M9QX", "--server", node.url)
    assert code == 1 and "no_such_game" in err


async def test_the_tui_shows_still_winnable_with_the_move_highlighted_then_the_analysis(
    local_node: Any, make_client: ClientFactory
) -> None:
    node = await local_node(test_deals=str(WINNABLE))
    ann: ScorpionClient = await make_client(node, "Ann", auto_resume=False)
    app = ScorpionApp(ann, lambda c: c.solo_new())
    async with app.run_test(size=(80, 24)) as pilot:
        await until(lambda: ann.race is not None)
        await pilot.pause(0.1)
        assert "w win?" in app.screen_text(), "the key is in the key bar of a solo game"
        await pilot.press("w")
        await until(lambda: app.hinted is not None, timeout=30)
        await pilot.pause(0.1)
        _, _, move = app.hinted  # type: ignore[misc]
        board = Board.new("scorpion", WINNABLE)
        assert move in board.legal_moves()
        screen = app.screen_text()
        assert "still winnable: yes" in screen
        if not move.is_deal:
            assert f"{move.target + 1:>2}→" in screen, "the winning move's target is highlighted"
            assert app.cursor == (move.source, board.columns[move.source].index(move.card))
        for text in LOSING:
            await ann.move(text)
        await pilot.press("R", "R")  # resigning asks for a second R
        await until(lambda: ann.race is not None and ann.race.analysis is not None, timeout=60)
        await until(lambda: "(card K♦, KD:2-5)" in app.board_text().plain)
        await pilot.pause(0.1)
        screen = app.screen_text()
        assert "Game over" in screen
        assert "Deal winnable: yes; your win slipped away at move 3 (card K♦, KD:2-5)" in screen
        assert "w win?" not in screen, "the key is gone once the game is over"


async def test_the_tui_says_no_for_an_unwinnable_deal_once_the_analysis_comes(
    local_node: Any, make_client: ClientFactory
) -> None:
    node = await local_node(test_deals=str(UNWINNABLE))
    ann: ScorpionClient = await make_client(node, "Ann", auto_resume=False)
    app = ScorpionApp(ann, lambda c: c.solo_new())
    async with app.run_test(size=(80, 24)) as pilot:
        await until(lambda: ann.race is not None)
        assert "analysing" not in app.board_text().plain
        await pilot.press("R", "R")  # resigning asks for a second R
        await until(lambda: ann.race is not None and ann.race.ended is not None)
        await pilot.pause(0.05)
        if ann.race.analysis is None:
            assert "analysing the deal…" in app.board_text().plain
        await until(lambda: ann.race is not None and ann.race.analysis is not None, timeout=60)
        await pilot.pause(0.1)
        assert "Deal winnable: no" in app.screen_text()


async def test_a_won_game_is_told_won_with_nothing_slipped(
    local_node: Any, make_client: ClientFactory
) -> None:
    node = await local_node(test_deals=str(WINNABLE))
    ann: ScorpionClient = await make_client(node, "Ann", auto_resume=False)
    started = await ann.solo_new()
    for move in solve_deal("scorpion", WINNABLE, budget=Budget(nodes=50_000)).moves:
        await ann.move(move)
    await ended(ann, started.game)
    analysis = await ann.analysis(timeout=60)
    assert analysis.won and analysis.verdict == "winnable" and analysis.slipped is None
    assert format_analysis(analysis).splitlines()[2] == "You won"
