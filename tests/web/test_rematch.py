"""End-to-end: racers race again (a rematch) from the result or the lobby, in real
browsers against a real server process."""

from __future__ import annotations

import re
from pathlib import Path

from playwright.sync_api import Page, expect

from protocol.game import Board

from ..server.conftest import NodeFactory
from .conftest import PageFactory
from .test_race import DEAL, base_url, card_move, click_move, start_friend_race


def _both_resign(ann: Page, bob: Page) -> None:
    for page in (bob, ann):
        page.click("#btn-resign")
        page.click("#btn-resign-yes")
    for page in (ann, bob):
        expect(page.locator("#result")).to_be_visible()


def test_racers_race_again_from_the_result_or_from_the_lobby(
    start_node: NodeFactory, open_page: PageFactory, artifacts: Path
) -> None:
    node = start_node(test_deals=DEAL)
    ann, bob = start_friend_race(node, open_page)
    first_room = ann.evaluate("window.scorpion.state.game.room")
    _both_resign(ann, bob)
    for page in (ann, bob):
        expect(page.locator("#btn-rematch")).to_have_text("Race again")
        # Both gave up on 0 points: the one ranked first on time has not won anything.
        expect(page.locator("#h-result")).to_contain_text("(level on points)")
        expect(page.locator("#h-result")).not_to_contain_text("won")
    # Ann asks; she waits in the new room as its host, and Bob's result says so.
    ann.click("#btn-rematch")
    expect(ann.locator("#screen-room")).to_be_visible()
    expect(ann.locator("#result")).to_be_hidden()
    code = ann.inner_text("#room-code")
    assert code != first_room
    expect(ann.locator("#room-players li")).to_have_count(1)
    expect(bob.locator("#rematch-offer")).to_have_text("Ann wants a rematch.")
    expect(bob.locator("#btn-rematch")).to_have_text("Join the rematch")
    bob.screenshot(path=str(artifacts / "rematch-phone.png"))
    bob.click("#btn-rematch")
    expect(bob.locator("#screen-room")).to_be_visible()
    expect(bob.locator("#room-code")).to_have_text(code)
    expect(ann.locator("#room-players li")).to_have_count(2)
    bob.click("#btn-ready")
    expect(ann.locator("#btn-start")).to_be_enabled()
    ann.click("#btn-start")
    for page in (ann, bob):
        expect(page.locator("#screen-game")).to_be_visible()
        expect(page.locator("#moves")).to_have_text("0")
        expect(page.locator("#result")).to_be_hidden()
    assert ann.evaluate("window.scorpion.state.game.room") == code

    # Again, but Bob has gone back to the lobby: a notice tells him, with the code filled in.
    _both_resign(ann, bob)
    bob.click("#btn-result-close")
    expect(bob.locator("#screen-lobby")).to_be_visible()
    ann.click("#btn-rematch")
    expect(ann.locator("#screen-room")).to_be_visible()
    again = ann.inner_text("#room-code")
    assert again != code
    expect(bob.locator("#notice-text")).to_contain_text(f"Ann wants a rematch in room {again}: press Join")
    expect(bob.locator("#join-code")).to_have_value(again)
    bob.locator("#join-form button[type=submit]").click()
    expect(bob.locator("#screen-room")).to_be_visible()
    expect(ann.locator("#room-players li")).to_have_count(2)


def test_a_solo_result_offers_no_rematch(start_node: NodeFactory, open_page: PageFactory) -> None:
    node = start_node(test_deals=DEAL)
    page = open_page(base_url(node), "Sam")
    page.click("#btn-solo")
    page.click("#btn-resign")
    page.click("#btn-resign-yes")
    expect(page.locator("#result")).to_be_visible()
    expect(page.locator("#btn-replay")).to_be_visible()
    expect(page.locator("#btn-rematch")).to_be_hidden()


def test_a_rematch_offer_reaches_a_racer_busy_in_another_game(
    start_node: NodeFactory, open_page: PageFactory
) -> None:
    node = start_node(test_deals=DEAL)
    ann, bob = start_friend_race(node, open_page)
    _both_resign(ann, bob)
    bob.click("#btn-result-close")
    bob.click("#btn-solo")
    expect(bob.locator("#game-status")).to_contain_text("solo")
    ann.click("#btn-rematch")
    expect(ann.locator("#screen-room")).to_be_visible()
    code = ann.inner_text("#room-code")
    expect(bob.locator("#notice-text")).to_contain_text(
        f"Ann wants a rematch in room {code}; join it from the lobby when you are free."
    )
    expect(bob.locator("#screen-game")).to_be_visible()  # his solo game goes on undisturbed
    bob.click("#btn-resign")
    bob.click("#btn-resign-yes")
    expect(bob.locator("#btn-rematch")).to_be_hidden()  # a solo result
    bob.click("#btn-result-close")
    expect(bob.locator("#join-code")).to_have_value(code)
    bob.locator("#join-form button[type=submit]").click()
    expect(bob.locator("#screen-room")).to_be_visible()
    expect(ann.locator("#room-players li")).to_have_count(2)


def test_a_spectator_is_offered_to_watch_the_rematch_when_it_starts(
    start_node: NodeFactory, open_page: PageFactory
) -> None:
    node = start_node(test_deals=DEAL)
    ann, bob = start_friend_race(node, open_page)
    carol = open_page(base_url(node), "Carol")
    carol.locator("#games li", has_text="Ann vs Bob").get_by_role("button", name="Watch").click()
    expect(carol.locator(".watch-board")).to_have_count(2)
    _both_resign(ann, bob)
    expect(carol.locator("#result")).to_be_visible()
    expect(carol.locator("#btn-rematch")).to_be_hidden()  # a spectator has no race to ask for
    first_room = ann.evaluate("window.scorpion.state.game.room")
    ann.click("#btn-rematch")
    # Ann's room first, so that she hosts it: two clicks at once may reach the server in
    # either order, and the first to arrive opens the room.
    # (the first room's screen, hidden since, still lists two players: wait for the new one)
    expect(ann.locator("#screen-room")).to_be_visible()
    expect(ann.locator("#room-code")).not_to_have_text(first_room)
    bob.click("#btn-rematch")
    expect(ann.locator("#room-players li")).to_have_count(2)
    code = ann.inner_text("#room-code")
    expect(carol.locator("#rematch-offer")).to_be_hidden()  # nothing to watch until it starts
    bob.click("#btn-ready")
    ann.click("#btn-start")
    expect(carol.locator("#rematch-offer")).to_have_text("Ann and Bob are racing again.")
    expect(carol.locator("#btn-rematch")).to_have_text("Watch the rematch")
    carol.click("#btn-rematch")
    expect(carol.locator("#result")).to_be_hidden()
    expect(carol.locator("#watch-title")).to_contain_text(f"room {code}")
    expect(carol.locator(".watch-board")).to_have_count(2)
    move = card_move(Board.new("scorpion", DEAL))
    click_move(bob, move)
    expect(carol.locator(".watch-board", has_text="Bob")).to_contain_text(re.compile(r"· 1 move(?!s)"))
