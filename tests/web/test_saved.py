"""Leaving a solo game saved, resuming it from the lobby, deleting it, and a new game left
before its first move counting as no game played (issue 50, browser point 5)."""

from __future__ import annotations

from playwright.sync_api import expect

from protocol.game import Board, card_text

from ..server.conftest import NodeFactory
from .conftest import PageFactory
from .test_race import DEAL, TOP_STRIP, base_url, card_move


def test_a_solo_game_is_left_saved_resumed_and_deleted_and_an_unplayed_one_is_not_counted(
    start_node: NodeFactory, open_page: PageFactory
) -> None:
    node = start_node(test_deals=str(DEAL))
    page = open_page(base_url(node), "Sol")
    # New game, then New game again at once: the first is never played
    page.click("#btn-solo")
    expect(page.locator("#screen-game")).to_be_visible()
    first = page.evaluate("window.scorpion.state.game.id")
    page.click("#btn-new")
    page.wait_for_function(
        "(first) => window.scorpion.state.game && window.scorpion.state.game.id !== first", arg=first
    )
    # one move on the new game, then leave it saved
    move = card_move(Board.new("scorpion", DEAL))
    page.click(f"#board .card[data-card='{card_text(move.card)}']", position=TOP_STRIP)
    page.locator(f"#board .column[data-col='{move.target + 1}']").click(position={"x": 5, "y": 5})
    expect(page.locator("#moves")).to_have_text("1")
    played = page.evaluate("window.scorpion.state.game.id")
    page.click("#btn-leave-saved")
    expect(page.locator("#screen-lobby")).to_be_visible()
    expect(page.locator(".notice, #notice").first).to_contain_text("Game saved")
    saved = page.locator(f"#saved li[data-game='{played}']")
    expect(saved).to_contain_text("1 move")
    expect(page.locator(f"#saved li[data-game='{first}']")).to_have_count(1)  # never played, still saved
    # Played: only the game with a move (the other was left at its start)
    expect(page.locator("#stats tr[data-variant='scorpion'] td").nth(1)).to_have_text("1")
    # Continue: the same game, its move kept
    saved.get_by_role("button", name="Continue").click()
    expect(page.locator("#screen-game")).to_be_visible()
    expect(page.locator("#moves")).to_have_text("1")
    page.click("#btn-leave-saved")
    expect(page.locator("#screen-lobby")).to_be_visible()
    # Delete asks once more, on the button
    delete = page.locator(f"#saved li[data-game='{first}']").get_by_role("button", name="Delete")
    delete.click()
    expect(delete).to_have_text("Delete it?")
    delete.click()
    expect(page.locator(f"#saved li[data-game='{first}']")).to_have_count(0)
    expect(page.locator(f"#saved li[data-game='{played}']")).to_have_count(1)
    expect(page.locator("#stats tr[data-variant='scorpion'] td").nth(1)).to_have_text("1")
