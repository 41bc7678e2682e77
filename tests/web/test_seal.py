"""The deal's seal in the browser: the commitment shown from the first move, and a Verify
that recomputes it in the page from the number and salt the result reveals (issue 50,
browser point 7)."""

from __future__ import annotations

import hashlib
import re

from playwright.sync_api import Page, expect

from ..server.conftest import NodeFactory
from .conftest import PageFactory
from .test_race import DEAL, base_url


def resign(page: Page) -> None:
    page.click("#btn-resign")
    page.click("#btn-resign-yes")
    expect(page.locator("#result")).to_be_visible()


def revealed(page: Page) -> tuple[str, str]:
    """Return the deal number and salt the result dialog reveals."""
    found = re.search(r"Deal number (\d+) \(salt ([0-9a-f]+)\)", page.inner_text("#result-deal"))
    assert found, page.inner_text("#result-deal")
    return found.group(1), found.group(2)


def test_a_solo_game_shows_its_seal_and_the_result_verifies_it(
    start_node: NodeFactory, open_page: PageFactory
) -> None:
    node = start_node(test_deals=str(DEAL))
    page = open_page(base_url(node), "Vera")
    page.click("#btn-solo")
    expect(page.locator("#screen-game")).to_be_visible()
    commitment = page.evaluate("window.scorpion.state.game.commitment")
    assert re.fullmatch(r"[0-9a-f]{64}", commitment)
    expect(page.locator("#seal")).to_have_text(commitment[:12] + "…")
    expect(page.locator("#seal")).to_have_attribute("title", re.compile(commitment))
    resign(page)
    number, salt = revealed(page)
    assert number == str(DEAL)
    assert hashlib.sha256(f"{number}:{salt}".encode()).hexdigest() == commitment  # the server's word
    expect(page.locator("#result-deal")).to_contain_text(commitment[:12])
    expect(page.locator("#verify-result")).to_have_text("")
    page.click("#btn-verify")
    expect(page.locator("#verify-result")).to_have_attribute("data-match", "true")
    expect(page.locator("#verify-result")).to_contain_text(
        f'✓ SHA-256 of "{number}:{salt}" is {commitment[:12]}'
    )


def test_verify_says_so_when_the_seal_shown_at_the_start_does_not_match(
    start_node: NodeFactory, open_page: PageFactory
) -> None:
    node = start_node(test_deals=str(DEAL))
    page = open_page(base_url(node), "Vera")
    page.click("#btn-solo")
    expect(page.locator("#screen-game")).to_be_visible()
    forged = "0" * 64  # as if the start had shown another deal's seal
    page.evaluate(f"window.scorpion.state.game.commitment = '{forged}'")
    resign(page)
    page.click("#btn-verify")
    expect(page.locator("#verify-result")).to_have_attribute("data-match", "false")
    expect(page.locator("#verify-result")).to_contain_text("not the seal shown at the start (000000000000…)")


def test_the_daily_shows_its_seal_and_offers_no_verify_before_its_day_is_over(
    start_node: NodeFactory, open_page: PageFactory
) -> None:
    node = start_node()
    page = open_page(base_url(node), "Dana")
    expect(page.locator("#btn-daily")).to_be_enabled()
    page.click("#btn-daily")
    expect(page.locator("#screen-game")).to_be_visible()
    commitment = page.evaluate("window.scorpion.state.game.commitment")
    assert re.fullmatch(r"[0-9a-f]{64}", commitment)
    expect(page.locator("#seal")).to_have_text(commitment[:12] + "…")
    resign(page)
    expect(page.locator("#result-deal")).to_have_text("The deal number is revealed once the day is over.")
    expect(page.locator("#btn-verify")).to_be_hidden()


def test_the_pages_own_sha_256_matches_for_a_page_without_web_crypto(
    start_node: NodeFactory, open_page: PageFactory
) -> None:
    # Served over plain http from another machine, a page has no crypto.subtle: the seal is
    # then checked by seal.js's own SHA-256, which must agree with the standard one.
    node = start_node()
    page = open_page(base_url(node), "Sam")
    texts = ["", "abc", f"{DEAL}:00112233445566778899aabbccddeeff", "x" * 55, "y" * 64, "z" * 119]
    digests = page.evaluate(
        """async (texts) => {
            const seal = await import("/seal.js");
            return texts.map((t) => seal.sha256Plain(new TextEncoder().encode(t)));
        }""",
        texts,
    )
    assert digests == [hashlib.sha256(t.encode()).hexdigest() for t in texts]
