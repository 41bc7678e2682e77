"""A new player's first visit: what the page says and how it stays put (issue 50, browser)."""

from __future__ import annotations

import re
from pathlib import Path

from playwright.sync_api import Page, expect

from protocol.game import Board, Move, card_text, player_view
from protocol.solver import solve_deal

from ..server.conftest import NodeFactory
from .conftest import PHONE, PageFactory
from .test_race import TOP_STRIP, WINNABLE, base_url, card_move

LAPTOP = {"width": 1366, "height": 800}
FINISH_DEAL = 56  # every card is known 9 moves before the end of the solver's line


def play_one_move(page: Page, deal: int, variant: str = "scorpion") -> None:
    """Play the deal's first legal card move by two clicks."""
    move = card_move(Board.new(variant, deal))
    page.click(f"#board .card[data-card='{card_text(move.card)}']", position=TOP_STRIP)
    page.locator(f"#board .column[data-col='{move.target + 1}']").click(position={"x": 5, "y": 5})
    expect(page.locator("#moves")).to_have_text("1")


def click_move(page: Page, move: Move) -> None:
    """Play ``move`` by two clicks (its column may be hinted as well as a target)."""
    page.click(f"#board .card[data-card='{card_text(move.card)}']", position=TOP_STRIP)
    destination = page.locator(f"#board .column[data-col='{move.target + 1}']")
    expect(destination).to_have_class(re.compile(r"\btarget\b"))
    destination.click(position={"x": 5, "y": 5})


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
            play_one_move(page, WINNABLE, variant)  # a game counts as played from its first move
            resign(page)
            page.click("#btn-result-close")
        expect(page.locator("#stats tr[data-variant='three-blind-mice']")).to_be_visible()
        clipped = page.eval_on_selector("#stats", "box => box.scrollWidth - box.clientWidth")
        assert clipped <= 0, f"{name}: the stats table is {clipped} px wider than its box"


WATCH_SHIFTS = """() => {
  window.__shifts = [];
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) window.__shifts.push({
      at: e.startTime, value: e.value,
      moved: (e.sources || []).map((s) => s.node ? (s.node.id || s.node.className || s.node.nodeName) : '?'),
    });
  }).observe({ type: 'layout-shift', buffered: true });
  return performance.now();
}"""

SCROLLS = "() => document.documentElement.scrollHeight - window.innerHeight"


def longest_column(board: Board) -> int:
    return max(len(col) for col in player_view(board).as_dict()["columns"])  # type: ignore[arg-type]


def play_winning_line(page: Page) -> int:
    """Play the winning line of WINNABLE by clicks, with the solver's and the page's messages
    on the way; the page never scrolls. Returns the longest column met."""
    line = solve_deal("scorpion", WINNABLE).moves
    assert len(line) == 52
    board = Board.new("scorpion", WINNABLE)
    longest = 0
    for index, move in enumerate(line):
        if move.is_deal:
            page.click("#btn-deal")
        else:
            click_move(page, move)
        board.push(move)
        expect(page.locator("#moves")).to_have_text(str(index + 1))
        longest = max(longest, longest_column(board))
        assert page.evaluate(SCROLLS) <= 0, f"the page scrolls after move {index + 1}"
        if index == 2:  # the solver's answer, in its own line
            page.click("#btn-winnable")
            expect(page.locator("#winnable-verdict")).to_contain_text("Still winnable: yes", timeout=30_000)
        elif index == 4:  # a hint, in a notice over the page
            page.click("#btn-hint")
            expect(page.locator("#notice-text")).to_contain_text("Hint: ")
        elif index == 6:  # the resign question, over the page too
            page.click("#btn-resign")
            expect(page.locator("#confirm-resign")).to_be_visible()
            page.click("#btn-resign-no")
    return longest


def test_a_whole_game_moves_nothing_and_fits_the_window(
    start_node: NodeFactory, open_page: PageFactory
) -> None:
    node = start_node(test_deals=WINNABLE)
    for name, viewport in (("Lena", LAPTOP), ("Pia", PHONE)):
        page = open_page(base_url(node), name, viewport=viewport)
        page.click("#btn-solo")
        expect(page.locator("#screen-game")).to_be_visible()
        opening = player_view(Board.new("scorpion", WINNABLE)).as_dict()["columns"]
        face_up = sum(card is not None for col in opening for card in col)  # type: ignore[attr-defined]
        expect(page.locator("#board .card.up")).to_have_count(face_up)
        page.wait_for_timeout(300)
        start = page.evaluate(WATCH_SHIFTS)
        longest = play_winning_line(page)
        assert longest >= 13, longest
        expect(page.locator("#result")).to_be_visible()
        shifts = [s for s in page.evaluate("window.__shifts") if s["at"] > start]
        assert sum(s["value"] for s in shifts) == 0, f"{name}: the page moved under the player: {shifts}"
        page.click("#btn-result-close")


def test_how_to_play_from_the_lobby_and_the_table_and_a_first_game_guide(
    start_node: NodeFactory, open_page: PageFactory, artifacts: Path
) -> None:
    node = start_node(test_deals=WINNABLE)
    page = open_page(base_url(node), "Nova", viewport=PHONE)
    howto = page.locator("#howto")
    expect(howto).to_be_hidden()
    page.click("#btn-howto")
    expect(howto).to_be_visible()
    rules = ("Scorpion II", "Wasp", "Three Blind Mice", "deal only when stuck", "R1 and R2", "only a King")
    for words in rules:
        expect(howto).to_contain_text(words, ignore_case=True)
    expect(howto).to_contain_text("1,200 less a point a second")
    # The examples are drawn with the game's own cards: the 7♠ move, before and after.
    expect(howto.locator("[data-example='move-before'] .card[data-card='7S']")).to_be_visible()
    expect(howto.locator("[data-example='move-after'] .column[data-col='1'] .card.up")).to_have_count(3)
    expect(howto.locator("[data-example='layout-three-blind-mice'] .column")).to_have_count(10)
    expect(howto.locator("[data-example='layout-scorpion-ii'] .card.down")).to_have_count(9)
    page.screenshot(path=str(artifacts / "howto-phone.png"))
    howto.locator("[data-example='layout-scorpion']").scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "howto-phone-layouts.png"))
    page.keyboard.press("Escape")
    expect(howto).to_be_hidden()

    # A first game shows the guide; its button opens the rules; "Got it" is remembered.
    page.click("#btn-solo")
    expect(page.locator("#screen-game")).to_be_visible()
    expect(page.locator("#guide")).to_contain_text("First game of Scorpion?")
    page.screenshot(path=str(artifacts / "guide-phone.png"))
    page.click("#btn-guide-rules")
    expect(howto).to_be_visible()
    page.click("#btn-howto-close")
    expect(howto).to_be_hidden()
    page.click("#btn-howto")  # from the top bar, during the game
    expect(howto).to_be_visible()
    page.keyboard.press("d")  # the game's keys sleep while the rules are open
    page.keyboard.press("Escape")
    expect(page.locator("#reserve-left")).to_have_text("3")
    page.click("#btn-guide-close")
    expect(page.locator("#guide")).to_be_hidden()
    page.reload()
    expect(page.locator("#screen-game")).to_be_visible()
    expect(page.locator("#board .card").first).to_be_visible()
    expect(page.locator("#guide")).to_be_hidden()


def test_finish_plays_the_rest_once_every_card_is_known(
    start_node: NodeFactory, open_page: PageFactory
) -> None:
    node = start_node(test_deals=FINISH_DEAL)
    page = open_page(base_url(node), "Fin")
    page.click("#btn-solo")
    expect(page.locator("#screen-game")).to_be_visible()
    expect(page.locator("#btn-finish")).to_be_disabled()  # cards face down, the reserve undealt
    expect(page.locator(".keys")).to_contain_text("F finishes", use_inner_text=True)
    line = solve_deal("scorpion", FINISH_DEAL).moves
    board = Board.new("scorpion", FINISH_DEAL)
    played = 0
    while board.face_down_left or board.stock:
        move = line[played]
        if move.is_deal:
            page.click("#btn-deal")
        else:
            click_move(page, move)
        board.push(move)
        played += 1
        expect(page.locator("#moves")).to_have_text(str(played))
    expect(page.locator("#btn-finish")).to_be_enabled()
    page.keyboard.press("f")
    expect(page.locator("#result")).to_be_visible(timeout=30_000)
    expect(page.locator("#moves")).to_have_text(str(len(line)))
    expect(page.locator("#runs")).to_have_text("4/4")
    expect(page.locator("#standings")).to_contain_text("finished")
