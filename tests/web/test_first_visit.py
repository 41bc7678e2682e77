"""A new player's first visit: what the page says and how it stays put (issue 50, browser)."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from protocol.game import Board, card_text

from ..server.conftest import NodeFactory
from .conftest import PHONE, PageFactory
from .test_race import TOP_STRIP, WINNABLE, base_url, card_move

LAPTOP = {"width": 1366, "height": 800}


def play_one_move(page: Page, deal: int) -> None:
    """Play the deal's first legal card move by two clicks."""
    move = card_move(Board.new("scorpion", deal))
    page.click(f"#board .card[data-card='{card_text(move.card)}']", position=TOP_STRIP)
    page.locator(f"#board .column[data-col='{move.target + 1}']").click(position={"x": 5, "y": 5})
    expect(page.locator("#moves")).to_have_text("1")


def resign(page: Page) -> None:
    page.click("#btn-resign")
    page.click("#btn-resign-yes")
    expect(page.locator("#result")).to_be_visible()


def test_the_server_says_which_address_to_open_in_a_browser(start_node: NodeFactory) -> None:
    node = start_node()
    assert node.process.stdout is not None
    line = node.process.stdout.readline()
    assert f"open http://127.0.0.1:{node.port}/ to play in a browser" in line, line


def test_the_lobby_stats_fit_their_box_on_a_laptop_and_a_phone(
    start_node: NodeFactory, open_page: PageFactory
) -> None:
    node = start_node(test_deals=WINNABLE)
    for name, viewport in (("Lena", LAPTOP), ("Pia", PHONE)):
        page = open_page(base_url(node), name, viewport=viewport)
        for variant in ("three-blind-mice", "scorpion"):
            page.select_option("#variant", variant)
            page.click("#btn-solo")
            expect(page.locator("#screen-game")).to_be_visible()
            if variant == "scorpion":
                play_one_move(page, WINNABLE)
            resign(page)
            page.click("#btn-result-close")
        expect(page.locator("#stats tr[data-variant='three-blind-mice']")).to_be_visible()
        clipped = page.eval_on_selector("#stats", "box => box.scrollWidth - box.clientWidth")
        assert clipped <= 0, f"{name}: the stats table is {clipped} px wider than its box"
