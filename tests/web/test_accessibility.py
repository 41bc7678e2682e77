"""Accessibility (issue 50, browser point 9): axe-core finds no serious or critical
violation on the lobby, the rules, the table, the spectator view and the result; the
cards have names a screen reader says; the focus is visible.

axe-core comes from its npm package (tests/web/axe/package.json, installed by
scripts/check, or by the ``axe_script`` fixture where it is missing).
"""

from __future__ import annotations

import re
from functools import partial
from typing import Any

from playwright.sync_api import Page, Route, expect

from protocol.game import Board, card_text, player_view

from ..server.conftest import NodeFactory
from .conftest import PHONE, PageFactory
from .test_first_visit import play_one_move
from .test_race import WINNABLE, base_url, card_move, start_friend_race

SERIOUS = ("serious", "critical")
AXE_URL = "/__tests__/axe.min.js"


def serve_file(path: str, route: Route) -> None:
    route.fulfill(path=path, content_type="text/javascript")


def violations(page: Page, axe_script: str, where: str) -> list[str]:
    """Run axe-core on the page as it is; return its serious and critical findings, told."""
    if not page.evaluate("typeof window.axe === 'object'"):
        # The page's content security policy allows scripts from its own origin only (no
        # inline script, which add_script_tag(path=...) would add): the package's file is
        # served at an address of the page's own, and the policy stays as it is.
        page.route(f"**{AXE_URL}", partial(serve_file, axe_script))
        page.add_script_tag(url=AXE_URL)
    found: list[dict[str, Any]] = page.evaluate(
        "async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
    )
    return [
        f"{where}: {v['id']} ({v['impact']}): {v['help']} at "
        + "; ".join(" ".join(n["target"]) for n in v["nodes"][:4])
        for v in found
        if v["impact"] in SERIOUS
    ]


def test_axe_finds_nothing_serious_on_the_lobby_rules_table_and_result(
    start_node: NodeFactory, open_page: PageFactory, axe_script: str
) -> None:
    node = start_node(test_deals=WINNABLE)
    problems: list[str] = []
    for name, viewport in (("Lena", None), ("Pia", PHONE)):
        page = open_page(base_url(node), name, viewport=viewport)
        problems += violations(page, axe_script, f"{name}: lobby")
        # The rules open from the keyboard, take the focus, and give it back when closed.
        page.locator("#btn-howto").focus()
        page.keyboard.press("Enter")
        expect(page.locator("#howto")).to_be_visible()
        expect(page.locator("#howto")).to_have_accessible_name("How to play")
        assert page.evaluate("document.activeElement.closest('#howto') !== null")
        problems += violations(page, axe_script, f"{name}: how to play")
        page.keyboard.press("Escape")
        expect(page.locator("#howto")).to_be_hidden()
        expect(page.locator("#btn-howto")).to_be_focused()
        page.click("#btn-solo")
        expect(page.locator("#screen-game")).to_be_visible()
        play_one_move(page, WINNABLE)
        page.locator("#board .card.up").last.click()  # a card picked, its targets lit
        problems += violations(page, axe_script, f"{name}: solo game")
        page.keyboard.press("Escape")
        page.click("#btn-resign")
        expect(page.locator("#confirm-resign")).to_be_visible()
        expect(page.locator("#btn-resign-no")).to_be_focused()
        problems += violations(page, axe_script, f"{name}: the resign question")
        page.click("#btn-resign-yes")
        expect(page.locator("#result")).to_be_visible()
        expect(page.get_by_role("dialog", name="Game over: 0 points")).to_be_visible()
        expect(page.locator("#btn-result-close")).to_be_focused()
        expect(page.locator("#analysis")).to_have_attribute("data-state", "ready", timeout=30_000)
        problems += violations(page, axe_script, f"{name}: solo result")
    assert not problems, "\n".join(problems)


def test_axe_finds_nothing_serious_in_a_race_its_spectator_view_and_its_result(
    start_node: NodeFactory, open_page: PageFactory, axe_script: str
) -> None:
    node = start_node(test_deals=WINNABLE)
    ann, bob = start_friend_race(node, open_page)
    carol = open_page(base_url(node), "Carol")
    carol.locator("#games li", has_text="Ann vs Bob").get_by_role("button", name="Watch").click()
    expect(carol.locator(".watch-board")).to_have_count(2)
    play_one_move(ann, WINNABLE)
    expect(carol.locator(".watch-board", has_text="Ann")).to_contain_text("1 move")
    problems = violations(ann, axe_script, "Ann: race")
    problems += violations(bob, axe_script, "Bob (phone): race")
    problems += violations(carol, axe_script, "Carol: spectator view")
    # A rival's end is said politely to a screen reader (the standings show it in passing).
    bob.click("#btn-resign")
    bob.click("#btn-resign-yes")
    expect(ann.locator("#announcer")).to_have_text("Bob resigned, with 0 points.")
    expect(ann.locator("#announcer")).to_have_attribute("aria-live", "polite")
    ann.click("#btn-resign")
    ann.click("#btn-resign-yes")
    for name, page in (("Ann", ann), ("Bob", bob), ("Carol", carol)):
        expect(page.locator("#result")).to_be_visible()
        problems += violations(page, axe_script, f"{name}: race result")
    assert not problems, "\n".join(problems)


WORDS = [
    "ace",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "jack",
    "queen",
    "king",
]
RANK_WORDS = dict(zip("A23456789TJQK", WORDS, strict=True))
SUIT_WORDS = {"C": "clubs", "D": "diamonds", "H": "hearts", "S": "spades"}
NAMES = """cols => cols.map(c => [...c.querySelectorAll('.card, .slot')].map(card =>
  card.getAttribute('aria-label') || card.querySelector('.sr-only').textContent))"""


def spoken(card: str | None, column: int) -> str:
    if card is None:
        return f"face-down card, column {column}"
    return f"{RANK_WORDS[card[0]]} of {SUIT_WORDS[card[1]]}, column {column}"


def test_cards_have_names_a_screen_reader_says_and_the_focus_shows(
    start_node: NodeFactory, open_page: PageFactory
) -> None:
    node = start_node(test_deals=WINNABLE)
    page = open_page(base_url(node), "Lena")
    page.click("#btn-solo")
    expect(page.locator("#screen-game")).to_be_visible()
    view = player_view(Board.new("scorpion", WINNABLE)).as_dict()
    expected = [[spoken(card, c + 1) for card in col] for c, col in enumerate(view["columns"])]  # type: ignore[arg-type]
    assert page.eval_on_selector_all("#board .column", NAMES) == expected
    expect(page.locator("#board .card[data-card='JC']")).to_have_accessible_name("jack of clubs, column 1")
    expect(page.locator("#board .card.down").first).to_have_accessible_name("face-down card, column 1")
    expect(page.locator("#board .stock")).to_have_accessible_name("reserve: 3 cards to deal")
    expect(page.locator("#board .foundations")).to_have_accessible_name("finished runs: none")

    # The keyboard: Tab reaches the board, an arrow moves, and the focused card shows a ring.
    page.locator("#btn-deal").focus()
    focused = "document.activeElement"
    for _ in range(10):  # past the toolbar and the first-game guide
        page.keyboard.press("Tab")
        if page.evaluate(f"{focused}.closest('#board') !== null"):
            break
    assert page.evaluate(f"{focused}.matches('#board button.card:focus-visible')")
    page.keyboard.press("ArrowUp")
    assert page.evaluate(f"{focused}.dataset.card") == view["columns"][0][-2]  # type: ignore[index]
    ring = page.evaluate(
        f"[getComputedStyle({focused}).outlineStyle, getComputedStyle({focused}).outlineWidth]"
    )
    assert ring == ["solid", "3px"], ring

    # Enter picks a card (pressed), and the place it may go says so.
    move = card_move(Board.new("scorpion", WINNABLE))
    card = page.locator(f"#board .card[data-card='{card_text(move.card)}']")
    card.focus()
    page.keyboard.press("Enter")
    expect(card).to_have_attribute("aria-pressed", "true")
    place = page.locator(f"#board .column[data-col='{move.target + 1}'] button").last
    expect(place).to_have_accessible_name(re.compile(r", column \d+: the picked cards can go here$"))
