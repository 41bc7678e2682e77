"""Small things a new player meets in the terminal: the colour of diamonds, a deal the
server's solver left undecided, the clock through a storage outage (issue 50, point 8)."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import msgspec
import pytest
from rich.style import Style

from client.api import ScorpionClient
from client.tui import ScorpionApp
from client.tui.render import BACK_STYLE, SUIT_STYLE, render_board
from client.tui.screen import BUSY_NOTE
from protocol.game import Board, player_view
from tests.conftest import RedisServer

from .conftest import ClientFactory
from .test_analysis import UNWINNABLE
from .test_tui import until


def rgb(style: str) -> tuple[int, int, int]:
    color = Style.parse(style).color
    assert color is not None
    triplet = color.get_truecolor()
    return triplet.red, triplet.green, triplet.blue


def test_diamonds_are_blue_and_unlike_face_down_cards() -> None:
    red, green, blue = rgb(SUIT_STYLE["D"])
    assert blue >= 200 and red <= 60 and blue - green >= 100, (red, green, blue)
    back = rgb(BACK_STYLE)
    assert max(back) - min(back) <= 16, "face-down cards are grey, a colour no suit has"
    board = render_board(player_view(Board.new("scorpion", UNWINNABLE)).as_dict())
    diamond = next(span for span in board.spans if "♦" in board.plain[span.start : span.end])
    down = next(span for span in board.spans if board.plain[span.start : span.end] == "░░")
    assert Style.parse(str(diamond.style)).color != Style.parse(str(down.style)).color


@pytest.mark.asyncio
async def test_a_deal_the_servers_solver_left_unknown_is_decided_here(
    local_node: Any, make_client: ClientFactory
) -> None:
    node = await local_node(test_deals=str(UNWINNABLE))
    ann: ScorpionClient = await make_client(node, "Ann", auto_resume=False)
    # (The game is over and analysed before the app starts: the server's solver processes
    # are then started outside the headless terminal, which their spawning does not survive.)
    await ann.solo_new()
    await ann.resign()
    analysis = await ann.analysis(timeout=60)
    assert analysis.verdict == "unwinnable"
    app = ScorpionApp(ann)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause(0.1)
        assert "Deal winnable: no" in app.screen_text()
        # As the server says when its budget ran out before the search ended.
        unknown = msgspec.structs.replace(analysis, verdict="unknown", line=())
        ann.race.analysis = unknown  # type: ignore[union-attr]
        app._on_analysis(unknown)
        await until(lambda: app.decided.get(analysis.game) is not None, timeout=30)
        await pilot.pause(0.1)
        screen = app.screen_text()
        assert "Deal winnable: no (solved here)" in screen, screen


@pytest.mark.asyncio
async def test_the_clock_shown_stops_while_the_storage_is_out_of_reach(
    local_node: Any, make_client: ClientFactory, own_redis: RedisServer
) -> None:
    node = await local_node(redis_url=own_redis.url, test_deals=str(UNWINNABLE))
    ann: ScorpionClient = await make_client(node, "Ann", auto_resume=False)
    app = ScorpionApp(ann, lambda c: c.solo_new())

    def clock() -> str:
        found = re.search(r"⏱ (\d\d:\d\d)", app.screen_text().splitlines()[0])
        assert found is not None
        return found[1]

    async with app.run_test(size=(80, 24)) as pilot:
        await until(lambda: ann.race is not None)
        await pilot.pause(0.3)
        own_redis.stop()
        app.action_deal()  # a request that meets the outage: the client learns of it
        await until(lambda: BUSY_NOTE in app.note, timeout=20)
        stopped = clock()
        await asyncio.sleep(2.5)
        assert clock() == stopped, "the clock ran on while the storage was out of reach"
        own_redis.start()
        await until(lambda: BUSY_NOTE not in app.note, timeout=30)
        await pilot.pause(0.6)
        minutes, seconds = map(int, clock().split(":"))
        stood, _ = divmod(app.clock_paused.get(ann.race.game, 0), 1000)  # type: ignore[union-attr]
        assert stood >= 2, "the outage is left out of the clock once it runs again"
        assert minutes * 60 + seconds <= int(stopped[-2:]) + 3
