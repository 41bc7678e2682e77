"""Winnable deals only, for solo games, and the deal that never could be won (issue 50,
browser point 6)."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from ..server.conftest import NodeFactory
from ..server.test_winnable_deals import UNWINNABLE, WINNABLE
from .conftest import PageFactory
from .test_race import base_url
from .test_seal import revealed


def resign(page: Page) -> None:
    page.click("#btn-resign")
    page.click("#btn-resign-yes")
    expect(page.locator("#result")).to_be_visible()


def test_winnable_deals_only_deals_a_proven_deal_and_is_remembered(
    start_node: NodeFactory, open_page: PageFactory
) -> None:
    node = start_node(test_deals=f"{UNWINNABLE},{UNWINNABLE},{WINNABLE}")
    page = open_page(base_url(node), "Wren")
    box = page.locator("#solo-winnable")
    expect(box).not_to_be_checked()  # the classic game by default: any deal
    box.check()
    page.reload()
    expect(page.locator("#solo-winnable")).to_be_checked()  # remembered on this device
    page.click("#btn-solo")
    expect(page.locator("#screen-game")).to_be_visible()
    resign(page)
    assert revealed(page)[0] == str(WINNABLE)


def test_still_winnable_says_a_deal_cannot_be_won_when_it_never_could(
    start_node: NodeFactory, open_page: PageFactory
) -> None:
    node = start_node(test_deals=str(UNWINNABLE))
    page = open_page(base_url(node), "Wren")
    page.click("#btn-solo")
    expect(page.locator("#screen-game")).to_be_visible()
    page.click("#btn-winnable")
    expect(page.locator("#winnable-verdict")).to_have_text(
        "Still winnable: no, this deal cannot be won (it never could)."
    )
