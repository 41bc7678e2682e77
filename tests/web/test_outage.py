"""End-to-end: the page through a storage outage of a real server (its Redis stopped or paused)."""

from __future__ import annotations

import signal
from pathlib import Path

from playwright.sync_api import Page, expect

from protocol.game import Board
from tests.conftest import RedisServer

from ..server.conftest import NodeFactory
from .conftest import PageFactory
from .test_race import DEAL, base_url, card_move, click_move, engine_exposed, exposed_cards

BUSY = "Server busy, retrying"

RECORD_FRAMES = """() => {
  const link = window.scorpion.link;
  window.__sent = [];
  window.__got = [];
  const send = link.send.bind(link);
  link.send = (message) => { window.__sent.push(message.type); return send(message); };
  const onMessage = link.handlers.onMessage;
  link.handlers.onMessage = (msg) => {
    window.__got.push(msg.type === "error" ? `error:${msg.code}` : msg.type);
    onMessage(msg);
  };
}"""
"""Keep the types of the requests the page sends and of the messages it gets, from now on."""


def frames(page: Page) -> tuple[list[str], list[str]]:
    return page.evaluate("window.__sent"), page.evaluate("window.__got")


def test_a_solo_game_asked_for_while_redis_is_stopped_starts_once_it_is_back(
    start_node: NodeFactory, open_page: PageFactory, own_redis: RedisServer
) -> None:
    node = start_node(redis_url=own_redis.url, test_deals=DEAL)
    page = open_page(base_url(node), "Ann")
    page.evaluate(RECORD_FRAMES)
    own_redis.stop()
    page.click("#btn-solo")
    notice = page.locator("#notice")
    expect(notice).to_be_visible()
    expect(notice).to_contain_text(BUSY)
    page.wait_for_timeout(1500)
    expect(notice).to_contain_text(BUSY)  # still trying, and saying so
    expect(page.locator("#screen-lobby")).to_be_visible()
    sent, got = frames(page)
    assert sent.count("solo_new") >= 2, f"the same request went again by itself: {sent}"
    assert "error:unavailable" in got
    own_redis.start()
    expect(page.locator("#screen-game")).to_be_visible(timeout=20_000)  # no click needed
    expect(page.locator("#game-status")).to_contain_text("solo")
    expect(notice).to_be_hidden()
    assert exposed_cards(page, "#board") == engine_exposed(Board.new("scorpion", DEAL))


def test_a_move_whose_commit_is_not_confirmed_is_settled_by_resuming_the_game(
    start_node: NodeFactory, open_page: PageFactory, own_redis: RedisServer, artifacts: Path
) -> None:
    node = start_node(redis_url=own_redis.url, test_deals=DEAL)
    page = open_page(base_url(node), "Ann")
    page.click("#btn-solo")
    expect(page.locator("#screen-game")).to_be_visible()
    board = Board.new("scorpion", DEAL)
    move = card_move(board)
    click_move(page, move)  # the node now holds the board: the next move goes straight to its commit
    board.push(move)
    expect(page.locator("#moves")).to_have_text("1")
    page.evaluate(RECORD_FRAMES)
    move = card_move(board)
    notice = page.locator("#notice")
    assert own_redis.process is not None
    own_redis.process.send_signal(signal.SIGSTOP)  # the commit reaches Redis, its answer waits
    try:
        click_move(page, move)
        expect(notice).to_contain_text(BUSY)
        page.screenshot(path=str(artifacts / "server-busy-desktop.png"))
    finally:
        own_redis.process.send_signal(signal.SIGCONT)
    board.push(move)
    expect(page.locator("#moves")).to_have_text("2")
    expect(notice).to_be_hidden()
    assert exposed_cards(page, "#board") == engine_exposed(board)
    sent, got = frames(page)
    assert "error:outcome_unknown" in got, got
    # One move, then resume (sent again while the node still finds its storage busy) until
    # the batch shows the move applied: the move itself is never sent blindly again.
    assert sent[0] == "move" and set(sent[1:]) == {"resume"}, (sent, got)
    assert got[-1] == "batch", got
    # The game goes on from the move applied.
    move = card_move(board)
    click_move(page, move)
    board.push(move)
    expect(page.locator("#moves")).to_have_text("3")
    assert exposed_cards(page, "#board") == engine_exposed(board)
