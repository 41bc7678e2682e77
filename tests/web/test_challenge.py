"""End-to-end: a run played in one browser is raced later, from its link, in another."""

from __future__ import annotations

from playwright.sync_api import expect

from protocol.game import Board

from ..server.conftest import NodeFactory
from .conftest import PageFactory
from .test_race import DEAL, base_url, card_move, click_move


def test_a_challenge_link_races_the_ghost_which_moves_as_a_rival_then_shows_the_board(
    start_node: NodeFactory, open_page: PageFactory
) -> None:
    node = start_node(test_deals=DEAL)
    ann = open_page(base_url(node), "Ann")
    ann.click("#btn-challenge-new")  # a fresh deal played first
    expect(ann.locator("#screen-game")).to_be_visible()
    board = Board.new("scorpion", DEAL)
    for _ in range(3):
        move = card_move(board, single_target=True)
        click_move(ann, move)
        board.push(move)
        ann.wait_for_timeout(600)  # the ghost's moves, a little apart
    ann.click("#btn-resign")
    ann.click("#btn-resign-yes")
    expect(ann.locator("#result-challenge")).to_be_visible()
    link = ann.input_value("#result-challenge-link")
    assert "/?challenge=" in link

    bob = open_page(link, "Bob")
    expect(bob.locator("#challenge-box")).to_be_visible()
    expect(bob.locator("#challenge-ghosts")).to_contain_text("Ann")
    bob.click("#btn-challenge-take")
    expect(bob.locator("#screen-game")).to_be_visible()
    ghost = bob.locator("#racers li[data-player='ghost-1']")
    expect(ghost).to_contain_text("Ann")
    mine = Board.new("scorpion", DEAL)
    for _ in range(3):  # Bob plays three moves of his own
        move = card_move(mine, single_target=True)
        click_move(bob, move)
        mine.push(move)
        expect(bob.locator("#board .card.up").first).to_be_visible()
    expect(ghost.locator(".racer-detail")).to_contain_text("3 moves")  # the ghost moved, at its pace
    bob.click("#btn-resign")
    bob.click("#btn-resign-yes")
    expect(bob.locator("#result")).to_be_visible()
    expect(bob.locator("#result-challenge-table")).to_be_visible()
    expect(bob.locator("#result-challenge-board tr", has_text="Bob")).to_contain_text("resigned")
    expect(ann.locator("#notice")).to_contain_text("Bob took your challenge")
