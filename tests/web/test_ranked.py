"""End-to-end: ranked racing in real browsers against a real server.

Profiles, the replay viewer (stepped by buttons, slider and keys, down to the move where
the win slipped away), the rating board, and the rating changes of rated races.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from playwright.sync_api import Page, expect

from protocol.game import Board, move_from_text, player_view

from ..server.conftest import NodeFactory
from .conftest import PHONE, PageFactory
from .test_race import DEAL, WINNABLE, base_url, card_move, click_move, sideways_overflow

SLIP_LINE = ("6S:3-2", "undo", "TD:4-7", "6C:5-4", "KD:2-5", "deal")
"""A solo game of WINNABLE: a move taken back, then three moves of which the third loses
the win (tests/client/test_analysis.py checks that), then a deal of the reserve."""
SLIPPED_STEP = 5
"""The replay's step after the losing move KD:2-5 (the fifth action, the undo counted)."""

RECORD_SENT = """() => {
  window.__sent = [];
  const link = window.scorpion.link;
  if (link.recorded) return;
  const send = link.send.bind(link);
  link.send = (message) => { window.__sent.push(message); return send(message); };
  link.recorded = true;
}"""
"""Keep every request the page sends from now on (window.__sent; evaluated again, it starts afresh)."""


def sent(page: Page, kind: str) -> list[dict[str, Any]]:
    return [m for m in page.evaluate("window.__sent") if m["type"] == kind]


def positions_after(actions: tuple[str, ...] | list[str]) -> list[dict[str, Any]]:
    """Return the player's view of WINNABLE from the deal on, one after each action."""
    board = Board.new("scorpion", WINNABLE)
    views = [player_view(board).as_dict()]
    for text in actions:
        if text == "undo":
            board.pop()
        else:
            board.push(move_from_text(text))
        views.append(player_view(board).as_dict())
    return views


def shown_board(page: Page, step: int) -> dict[str, Any]:
    """Return the replay's board at ``step`` as the page draws it: columns and reserve."""
    expect(page.locator("#replay-board")).to_have_attribute("data-step", str(step))
    columns = page.eval_on_selector_all(
        "#replay-board .column",
        "cols => cols.map(c => [...c.querySelectorAll('.card')]"
        ".map(n => n.classList.contains('down') ? null : n.dataset.card))",
    )
    reserve = int(page.inner_text("#replay-board .stock-count"))
    return {"columns": columns, "reserve_left": reserve}


def moved_cards(page: Page) -> list[str]:
    """Return the cards the replay marks as moved by the step shown."""
    return page.eval_on_selector_all("#replay-board .card.moved", "cards => cards.map(c => c.dataset.card)")


def group_moved(view: dict[str, Any], text: str) -> list[str]:
    """Return the cards a move took to its column: its card and those on it, in ``view`` after it."""
    move = move_from_text(text)
    column = view["columns"][move.target]
    return column[column.index(text.split(":")[0]) :]


def stat(page: Page, key: str, variant: str = "scorpion") -> Any:
    """Return the profile's cell of one statistic in one variant."""
    return page.locator(f"#profile-stats tr[data-stat='{key}'] td[data-variant='{variant}']")


def engine_board(view: dict[str, Any]) -> dict[str, Any]:
    return {"columns": view["columns"], "reserve_left": view["reserve_left"]}


def play_slip_line(page: Page) -> None:
    """Play SLIP_LINE in the solo game on the page, by clicks, then resign."""
    moves = 0
    for text in SLIP_LINE:
        if text == "undo":
            page.click("#btn-undo")
            moves -= 1
        elif text == "deal":
            page.click("#btn-deal")
            moves += 1
        else:
            click_move(page, move_from_text(text))
            moves += 1
        expect(page.locator("#moves")).to_have_text(str(moves))
    page.click("#btn-resign")
    page.click("#btn-resign-yes")


def test_a_lost_game_replays_from_the_profile_step_by_step_down_to_where_the_win_slipped_away(
    start_node: NodeFactory, open_page: PageFactory, artifacts: Path
) -> None:
    node = start_node(test_deals=WINNABLE)
    dana = open_page(base_url(node), "Dana")
    dana.click("#btn-solo")
    expect(dana.locator("#game-status")).to_contain_text("solo")
    expect(dana.locator("#game-rated")).to_be_hidden()  # a solo game is never rated
    play_slip_line(dana)
    expect(dana.locator("#result")).to_be_visible()
    expect(dana.locator("#result-rated")).to_be_hidden()
    expect(dana.locator("#result-ratings")).to_be_hidden()
    # The analysis must be stored before the replay can mark the slip: wait for it here.
    expect(dana.locator("#analysis-slipped")).to_contain_text(
        "Your win slipped away at move 3 (K♦ from column 2 to column 5).", timeout=60_000
    )
    expect(dana.locator("#btn-watch-replay")).to_be_visible()
    dana.click("#btn-result-close")
    expect(dana.locator("#screen-lobby")).to_be_visible()

    # Her own profile: no rating yet, one game played and lost, the game among the recent.
    dana.click("#btn-profile")
    expect(dana.locator("#screen-profile")).to_be_visible()
    expect(dana.locator("#screen-profile")).to_have_attribute("data-state", "ready")
    expect(dana.locator("#h-profile")).to_have_text("Dana (you)")
    expect(dana.locator("#profile-ratings")).to_contain_text("Not rated yet")
    # One column per variant played: Scorpion alone.
    expect(dana.locator("#profile-stats thead th[data-variant]")).to_have_text(["Scorpion"])
    expect(stat(dana, "played")).to_have_text("1")
    expect(stat(dana, "won")).to_have_text("0")
    expect(stat(dana, "fastest")).to_have_text("–")  # never won
    expect(stat(dana, "streak")).to_have_text("0 / 0")
    recent = dana.locator("#profile-recent li")
    expect(recent).to_have_count(1)
    expect(recent).to_contain_text("Scorpion · solo game")
    expect(recent).to_contain_text("resigned")
    expect(recent.locator(".tag.rated")).to_have_count(0)
    expect(recent.locator(".change")).to_have_count(0)
    dana.screenshot(path=str(artifacts / "profile-desktop.png"), full_page=True)

    # Its replay: the deal first, six moves (the undo among them), Dana's alone.
    recent.get_by_role("button", name=re.compile("^Replay")).click()
    expect(dana.locator("#screen-replay")).to_be_visible()
    expect(dana.locator("#screen-replay")).to_have_attribute("data-state", "ready")
    expect(dana.locator("#h-replay")).to_have_text("Replay: Dana")
    expect(dana.locator("#replay-racer-wrap")).to_be_hidden()
    expect(dana.locator("#replay-desc")).to_have_text("Scorpion · 6 moves")
    expect(dana.locator("#replay-slider")).to_have_attribute("max", "6")
    expect(dana.locator("#replay-move")).to_have_text("The deal, before move 1 of 6.")
    expect(dana.locator("#btn-step-back")).to_be_disabled()
    views = positions_after(SLIP_LINE)
    assert shown_board(dana, 0) == engine_board(views[0])

    # Forward and back with the buttons.
    dana.click("#btn-step-forward")
    assert shown_board(dana, 1) == engine_board(views[1])
    expect(dana.locator("#replay-move")).to_contain_text("Move 1 of 6: 6♠ from column 3 to column 2, at ")
    assert moved_cards(dana) == group_moved(views[1], "6S:3-2") == ["6S", "3C", "9C", "9S"]
    dana.click("#btn-step-forward")
    assert shown_board(dana, 2) == engine_board(views[0])  # the undo took it back
    expect(dana.locator("#replay-move")).to_contain_text("Move 2 of 6: undo, at ")
    dana.click("#btn-step-back")
    assert shown_board(dana, 1) == engine_board(views[1])

    # The slider goes straight to a move.
    dana.locator("#replay-slider").fill("3")
    assert shown_board(dana, 3) == engine_board(views[3])
    expect(dana.locator("#replay-move")).to_contain_text("Move 3 of 6: 10♦ from column 4 to column 7")
    expect(dana.locator("#replay-slider")).to_have_attribute("aria-valuetext", re.compile("^Move 3 of 6"))

    # The keys: Home, End, and the arrows (from a button: the slider keeps its own keys).
    dana.click("#btn-step-last")
    assert shown_board(dana, 6) == engine_board(views[6])
    assert views[6]["reserve_left"] < views[5]["reserve_left"]  # the deal shows on the board
    expect(dana.locator("#btn-step-forward")).to_be_disabled()
    dana.keyboard.press("Home")
    assert shown_board(dana, 0) == engine_board(views[0])
    dana.keyboard.press("ArrowRight")
    dana.keyboard.press("ArrowRight")
    dana.keyboard.press("ArrowRight")
    assert shown_board(dana, 3) == engine_board(views[3])
    dana.keyboard.press("ArrowLeft")
    assert shown_board(dana, 2) == engine_board(views[2])
    dana.keyboard.press("End")
    assert shown_board(dana, 6) == engine_board(views[6])

    # Where the win slipped away: marked under the slider at its step, and a button to go there.
    mark = dana.locator("#replay-slip-mark")
    expect(mark).to_be_visible()
    expect(mark).to_have_attribute("data-step", str(SLIPPED_STEP))
    expect(dana.locator("#replay-verdict")).to_have_text(
        "Deal winnable: yes. The win slipped away at move 5 (K♦ from column 2 to column 5)."
    )
    slider_box = dana.locator("#replay-slider").bounding_box()
    mark_box = mark.bounding_box()
    assert slider_box is not None and mark_box is not None
    thumb = 20  # the slider thumb's width (style.css): its centre runs over width - thumb
    expected_x = slider_box["x"] + thumb / 2 + (slider_box["width"] - thumb) * SLIPPED_STEP / 6
    assert abs(mark_box["x"] + mark_box["width"] / 2 - expected_x) < 3, (mark_box, slider_box)
    assert mark_box["y"] >= slider_box["y"] + slider_box["height"] / 2  # under the track
    dana.get_by_role("button", name="Go to where the win slipped away").click()
    assert shown_board(dana, SLIPPED_STEP) == engine_board(views[SLIPPED_STEP])
    expect(dana.locator("#replay-slider")).to_have_value(str(SLIPPED_STEP))
    expect(dana.locator("#replay-move")).to_have_text(
        re.compile(
            r"^Move 5 of 6: K♦ from column 2 to column 5, at \d+:\d\d\.\d\. "
            r"The win slipped away with this move\.$"
        )
    )
    expect(dana.locator("#replay-move")).to_have_class(re.compile(r"\bslipped\b"))
    assert moved_cards(dana) == group_moved(views[SLIPPED_STEP], "KD:2-5") == ["KD", "4S", "7S"]
    dana.screenshot(path=str(artifacts / "replay-slipped-desktop.png"), full_page=True)
    # A lost connection: the replay stays on screen, at the same move.
    dana.evaluate("window.scorpion.link.ws.close(4000)")
    expect(dana.locator("#conn")).not_to_have_attribute("data-state", "open")
    expect(dana.locator("#conn")).to_have_attribute("data-state", "open")
    expect(dana.locator("#screen-replay")).to_be_visible()
    expect(dana.locator("#screen-lobby")).to_be_hidden()
    assert shown_board(dana, SLIPPED_STEP) == engine_board(views[SLIPPED_STEP])
    # One request for the positions, whatever the stepping.
    dana.evaluate(RECORD_SENT)
    dana.keyboard.press("ArrowRight")
    assert shown_board(dana, 6) == engine_board(views[6])
    assert sent(dana, "replay_positions") == []

    # Back to the profile, then to the lobby.
    expect(dana.locator("#btn-replay-back")).to_have_text("Back to the profile")
    dana.click("#btn-replay-back")
    expect(dana.locator("#screen-profile")).to_be_visible()
    expect(dana.locator("#h-profile")).to_have_text("Dana (you)")
    dana.click("#btn-profile-back")
    expect(dana.locator("#screen-lobby")).to_be_visible()


def resign(page: Page) -> None:
    page.click("#btn-resign")
    page.click("#btn-resign-yes")


def rating_rows(page: Page) -> dict[str, list[str]]:
    """Return the result's rating changes: the cells of each racer's row, by player id."""
    rows = page.locator("#rating-changes tr")
    expect(rows).to_have_count(2, timeout=30_000)
    return {
        row.get_attribute("data-player") or "": [c.strip() for c in row.locator("td").all_inner_texts()]
        for row in rows.all()
    }


def test_a_rated_quick_match_shows_the_rating_changes_the_board_and_both_profiles(
    start_node: NodeFactory, open_page: PageFactory, artifacts: Path
) -> None:
    # Ann plays on until the race's time limit; Bob resigns before: she places first.
    node = start_node(test_deals=DEAL, race_time_limit=15)
    ann = open_page(base_url(node), "Ann")
    bob = open_page(base_url(node), "Bob", viewport=PHONE)
    ann_id = ann.evaluate("window.scorpion.state.me.player")
    bob_id = bob.evaluate("window.scorpion.state.me.player")
    expect(ann.locator("#ratings")).to_contain_text("Nobody is rated in Scorpion yet")
    expect(ann.locator("#queue-rated")).to_be_checked()  # quick matches are rated by default
    ann.evaluate(RECORD_SENT)
    ann.click("#btn-queue")
    expect(ann.locator("#queue-text")).to_contain_text("Rated: your rating is 1500.")
    assert sent(ann, "queue_join") == [{"type": "queue_join", "variant": "scorpion", "rated": True}]
    bob.click("#btn-queue")
    for page in (ann, bob):
        expect(page.locator("#screen-game")).to_be_visible()
        expect(page.locator("#game-rated")).to_be_visible()
        expect(page.locator("#game-rated")).to_have_text("Rated")
        # A rated race has no undo and no hints: no button, no key in the legend.
        for absent in ("#btn-undo", "#btn-hint", "#key-undo", "#key-hint", "#btn-winnable"):
            expect(page.locator(absent)).to_be_hidden()
    expect(ann.locator(".keys")).not_to_contain_text("U undoes", use_inner_text=True)  # (a phone has none)
    ann.keyboard.press("u")
    ann.keyboard.press("h")
    assert sent(ann, "undo") == [] and sent(ann, "hint") == []

    # Ann moves once; Bob resigns; Ann plays on until the time limit ends the race.
    board = Board.new("scorpion", DEAL)
    move = card_move(board)
    click_move(ann, move)
    board.push(move)
    expect(ann.locator("#moves")).to_have_text("1")
    resign(bob)
    expect(ann.locator("#racers li", has_text="Bob").locator(".tag")).to_have_text("resigned")
    for page in (ann, bob):
        expect(page.locator("#result")).to_be_visible(timeout=30_000)
        expect(page.locator("#result-rated")).to_be_visible()
        expect(page.locator("#result-ratings")).to_be_visible()

    # The new ratings arrive: the one placed first gains 162 (Glicko-2 from 1500/350), the
    # other loses as much, both still provisional.
    first = ann.locator("#standings tr").first.get_attribute("data-player")
    assert first == ann_id  # playing on ranks above resigning at the same score
    second = bob_id if first == ann_id else ann_id
    for page in (ann, bob):
        rows = rating_rows(page)
        assert rows[first][1:] == ["1500", "1662?", "+162"], rows
        assert rows[second][1:] == ["1500", "1338?", "−162"], rows
        assert page.locator("#rating-changes tr").first.get_attribute("data-player") == first
        expect(page.locator("#rating-changes tr.me td").nth(2)).to_have_attribute(
            "title", re.compile("^Provisional")
        )
    mine = {ann_id: ann, bob_id: bob}
    expect(mine[first].locator("#result-ratings-status")).to_have_text("Your rating: 1500 → 1662? (+162).")
    expect(mine[second].locator("#result-ratings-status")).to_have_text("Your rating: 1500 → 1338? (−162).")
    ann.screenshot(path=str(artifacts / "result-rated-desktop.png"))
    assert sideways_overflow(bob, "#result, #result *") == []

    # Ann watches the race's replay: her move, then Bob's (no move), each asked for once
    # (once the solver's analysis is in: a replay shown before it is asked for again then).
    expect(ann.locator("#analysis")).to_have_attribute("data-state", "ready", timeout=60_000)
    ann.evaluate(RECORD_SENT)
    ann.click("#btn-watch-replay")
    expect(ann.locator("#result")).to_be_hidden()
    expect(ann.locator("#screen-replay")).to_have_attribute("data-state", "ready")
    expect(ann.locator("#h-replay")).to_have_text("Replay: Ann")
    picker = ann.locator("#replay-racer")
    expect(ann.locator("#replay-racer-wrap")).to_be_visible()
    # The racers in the order they placed.
    placed = ["Ann (you)" if p == ann_id else "Bob" for p in (first, second)]
    expect(picker.locator("option")).to_have_text(placed)
    expect(ann.locator("#replay-desc")).to_have_text("Scorpion · 1 move")
    expect(ann.locator("#replay-verdict")).to_have_text("Deal winnable: no.")  # DEAL is unwinnable
    ann.keyboard.press("End")
    assert shown_board(ann, 1)["columns"] == player_view(board).as_dict()["columns"]
    picker.select_option(bob_id)
    expect(ann.locator("#h-replay")).to_have_text("Replay: Bob")
    expect(ann.locator("#replay-move")).to_have_text("The deal: no move was played.")
    assert shown_board(ann, 0)["columns"] == player_view(Board.new("scorpion", DEAL)).as_dict()["columns"]
    picker.select_option(ann_id)
    expect(ann.locator("#h-replay")).to_have_text("Replay: Ann")
    expect(ann.locator("#replay-desc")).to_have_text("Scorpion · 1 move")
    asked = sent(ann, "replay_positions")
    assert [m["player"] for m in asked] == [ann_id, bob_id], asked
    ann.click("#btn-replay-back")
    expect(ann.locator("#screen-lobby")).to_be_visible()

    # The lobby's rating board: both, best first, provisional marked; then around Ann.
    board_rows = ann.locator("#ratings tbody tr")
    expect(board_rows).to_have_count(2)
    expect(board_rows.first).to_have_attribute("data-player", first)
    expect(board_rows.first.locator("td").nth(2)).to_have_text("1662?")
    expect(ann.locator("#ratings tr.me")).to_contain_text("Ann")
    expect(ann.locator("#ratings")).to_contain_text("2 rated · you are #")
    expect(ann.locator("#ratings")).to_contain_text("? provisional: too few recent rated races")
    ann.check("#ratings-around")
    expect(ann.locator("#ratings")).to_have_attribute("data-view", "around")
    expect(ann.locator("#ratings tbody tr")).to_have_count(2)
    ann.uncheck("#ratings-around")
    expect(ann.locator("#ratings")).to_have_attribute("data-view", "top")
    ann.screenshot(path=str(artifacts / "lobby-ratings-desktop.png"), full_page=True)

    # Bob's profile, from his name on the board: his rating, and the race with its change.
    ann.locator("#ratings").get_by_role("button", name="Bob").click()
    expect(ann.locator("#screen-profile")).to_have_attribute("data-state", "ready")
    expect(ann.locator("#h-profile")).to_have_text("Bob")
    bob_rating, bob_change = ("1662?", "+162") if first == bob_id else ("1338?", "−162")
    rating = ann.locator("#profile-ratings tr[data-variant='scorpion'] td")
    expect(rating.nth(1)).to_have_text(bob_rating)
    expect(rating.nth(1)).to_have_attribute("title", re.compile("^Provisional"))
    expect(rating.nth(2)).to_have_text("1")  # rated races
    game = ann.locator("#profile-recent li")
    expect(game).to_have_count(1)
    expect(game).to_contain_text("Scorpion · race of 2")
    expect(game.locator(".tag.rated")).to_have_text("Rated")
    expect(game.locator(".change")).to_have_text(bob_change)
    expect(game.get_by_role("button", name=re.compile("^Replay"))).to_be_visible()
    ann.click("#btn-profile-back")

    # Her own profile, from the lobby.
    ann.click("#btn-profile")
    expect(ann.locator("#h-profile")).to_have_text("Ann (you)")
    ann_rating, ann_change = ("1662?", "+162") if first == ann_id else ("1338?", "−162")
    expect(ann.locator("#profile-ratings tr[data-variant='scorpion'] td").nth(1)).to_have_text(ann_rating)
    expect(ann.locator("#profile-recent li .change")).to_have_text(ann_change)

    # Bob opens Ann's profile from his result's standings.
    bob.locator("#standings").get_by_role("button", name="Ann").click()
    expect(bob.locator("#result")).to_be_hidden()
    expect(bob.locator("#screen-profile")).to_have_attribute("data-state", "ready")
    expect(bob.locator("#h-profile")).to_have_text("Ann")
    expect(bob.locator("#profile-ratings tr[data-variant='scorpion'] td").nth(1)).to_have_text(ann_rating)
    bob.screenshot(path=str(artifacts / "profile-phone.png"), full_page=True)
    assert sideways_overflow(bob, "#screen-profile, #screen-profile *") == []
    # From her profile, Bob replays the race on Ann's moves; the picker has both racers.
    bob.locator("#profile-recent li").get_by_role("button", name=re.compile("^Replay")).click()
    expect(bob.locator("#h-replay")).to_have_text("Replay: Ann")
    expect(bob.locator("#replay-racer option")).to_have_count(2)  # the roster came with `replay`
    expect(bob.locator("#replay-racer")).to_have_value(ann_id)
    bob.click("#btn-step-forward")
    assert shown_board(bob, 1)["columns"] == player_view(board).as_dict()["columns"]
    bob.screenshot(path=str(artifacts / "replay-phone.png"), full_page=True)
    assert sideways_overflow(bob, "#screen-replay, #screen-replay *") == []
    bob.click("#btn-replay-back")
    expect(bob.locator("#h-profile")).to_have_text("Ann")
    bob.click("#btn-profile-back")
    expect(bob.locator("#screen-lobby")).to_be_visible()
    assert sideways_overflow(bob, "#screen-lobby, #screen-lobby *") == []


def test_a_friend_race_is_rated_only_with_the_rated_option_and_a_spectator_replays_it(
    start_node: NodeFactory, open_page: PageFactory
) -> None:
    node = start_node(test_deals=DEAL)
    ann = open_page(base_url(node), "Ann")
    ann.evaluate(RECORD_SENT)
    ann.click("text=Race options")
    expect(ann.locator("#opt-rated")).not_to_be_checked()
    ann.check("#opt-undo")
    ann.check("#opt-rated")  # a rated race has no undo and no hints: their boxes are greyed out
    expect(ann.locator("#opt-undo")).to_be_disabled()
    expect(ann.locator("#opt-hints")).to_be_disabled()
    ann.click("#btn-create")
    expect(ann.locator("#room-desc")).to_contain_text("no undo · no hints")
    expect(ann.locator("#room-desc")).to_contain_text("· rated")
    options = sent(ann, "room_create")[0]["options"]
    assert (options["rated"], options["undo"], options["hints"]) == (True, False, False)
    bob = open_page(base_url(node), "Bob")  # an account first: a rated room refuses guests
    bob.goto(ann.input_value("#room-link"))
    expect(bob.locator("#room-desc")).to_contain_text("· rated")
    bob.click("#btn-ready")
    ann.click("#btn-start")
    for page in (ann, bob):
        expect(page.locator("#game-rated")).to_be_visible()
        expect(page.locator("#btn-undo")).to_be_hidden()
        expect(page.locator("#btn-hint")).to_be_hidden()

    carol = open_page(base_url(node), "Carol")
    carol.locator("#games li", has_text="Ann vs Bob").get_by_role("button", name="Watch").click()
    expect(carol.locator(".watch-board")).to_have_count(2)
    expect(carol.locator("#watch-rated")).to_be_visible()
    resign(bob)
    expect(ann.locator("#racers li", has_text="Bob").locator(".tag")).to_have_text("resigned")
    resign(ann)
    for page in (ann, bob):
        assert len(rating_rows(page)) == 2
    # The spectator is told the race is rated (the changes go to the racers), and replays it.
    expect(carol.locator("#result")).to_be_visible()
    expect(carol.locator("#result-rated")).to_be_visible()
    expect(carol.locator("#result-ratings-status")).to_have_text("The racers' ratings change with this race.")
    carol.click("#btn-watch-replay")
    expect(carol.locator("#screen-replay")).to_have_attribute("data-state", "ready")
    expect(carol.locator("#replay-racer option")).to_have_count(2)
    expect(carol.locator("#btn-replay-back")).to_have_text("Back to the lobby")

    # Without the option, the same players' race changes nothing and says nothing of ratings.
    for page in (ann, bob):
        page.click("#btn-result-close")
    ann.uncheck("#opt-rated")  # the race options are still open
    expect(ann.locator("#opt-undo")).to_be_enabled()  # and undo, still ticked, is back
    ann.click("#btn-create")
    expect(ann.locator("#room-desc")).to_contain_text("undo allowed")
    expect(ann.locator("#room-desc")).to_contain_text("· not rated")
    bob.fill("#join-code", ann.inner_text("#room-code"))
    bob.click("#join-form button")
    bob.click("#btn-ready")
    ann.click("#btn-start")
    for page in (ann, bob):
        expect(page.locator("#screen-game")).to_be_visible()
        expect(page.locator("#game-rated")).to_be_hidden()
        expect(page.locator("#btn-undo")).to_be_visible()
        expect(page.locator("#key-undo")).to_be_visible()
    resign(bob)
    expect(ann.locator("#racers li", has_text="Bob").locator(".tag")).to_have_text("resigned")
    resign(ann)
    for page in (ann, bob):
        expect(page.locator("#result")).to_be_visible()
        expect(page.locator("#result-rated")).to_be_hidden()
        expect(page.locator("#result-ratings")).to_be_hidden()
    ann.wait_for_timeout(1500)  # a rating_change would have come by now
    assert ann.evaluate("window.scorpion.state.ratingChanges.size") == 1
