"""End-to-end: real browsers race, watch and reconnect against a real server process."""

from __future__ import annotations

import re
from pathlib import Path

from playwright.sync_api import Page, expect

from protocol.game import Board, Move, card_text, player_view

from ..server.conftest import NodeFactory
from .conftest import PHONE, PageFactory

DEAL = 1234567890123
WINNABLE = 1_000_000_000_007  # the solver proves it winnable at once, with a 52-move line
TOP_STRIP = {"x": 8, "y": 6}  # the visible strip of a card that others cover


def base_url(node: object) -> str:
    return f"http://127.0.0.1:{node.port}/"  # type: ignore[attr-defined]


def card_move(board: Board, *, single_target: bool = False) -> Move:
    """Return a legal card move (one whose card fits in exactly one place if asked)."""
    moves = [m for m in board.legal_moves() if not m.is_deal]
    if single_target:
        moves = [m for m in moves if sum(1 for o in moves if o.card == m.card) == 1]
    assert moves, "the test deal has no such move"
    return moves[0]


def click_move(page: Page, move: Move) -> None:
    """Play ``move`` the way a player does: click the card, then the destination column."""
    page.click(f"#board .card[data-card='{card_text(move.card)}']", position=TOP_STRIP)
    destination = page.locator(f"#board .column[data-col='{move.target + 1}']")
    expect(destination).to_have_class("column target")
    destination.click(position={"x": 5, "y": 5})


def exposed_cards(page: Page, board_selector: str) -> list[str | None]:
    return page.eval_on_selector_all(
        f"{board_selector} .column",
        "cols => cols.map(c => { const up = c.querySelectorAll('.card.up'); "
        "return up.length ? up[up.length - 1].dataset.card : null; })",
    )


def engine_exposed(board: Board) -> list[str | None]:
    return [col[-1] if col else None for col in player_view(board).as_dict()["columns"]]  # type: ignore[index]


def racer(page: Page, name: str) -> object:
    return page.locator("#racers li", has_text=name)


def start_friend_race(node: object, open_page: PageFactory) -> tuple[Page, Page]:
    ann = open_page(base_url(node), "Ann")
    ann.click("#btn-create")
    expect(ann.locator("#screen-room")).to_be_visible()
    link = ann.input_value("#room-link")
    code = ann.inner_text("#room-code")
    assert link.endswith(f"/?room={code}")
    bob = open_page(link, "Bob", viewport=PHONE, has_touch=True, is_mobile=True)
    expect(bob.locator("#screen-room")).to_be_visible()
    expect(bob.locator("#room-code")).to_have_text(code)
    expect(ann.locator("#room-players li")).to_have_count(2)
    expect(ann.locator("#btn-start")).to_be_disabled()
    bob.click("#btn-ready")
    expect(ann.locator("#btn-start")).to_be_enabled()
    ann.click("#btn-start")
    for page in (ann, bob):
        expect(page.locator("#screen-game")).to_be_visible()
    return ann, bob


def test_two_pages_race_a_third_watches_and_both_see_the_result(
    start_node: NodeFactory, open_page: PageFactory, artifacts: Path
) -> None:
    node = start_node(test_deals=DEAL)
    ann, bob = start_friend_race(node, open_page)
    board = Board.new("scorpion", DEAL)
    assert exposed_cards(ann, "#board") == engine_exposed(board)
    assert exposed_cards(bob, "#board") == engine_exposed(board)

    # Ann moves by click + click; Bob sees her progress (never her board).
    move = card_move(board)
    click_move(ann, move)
    board.push(move)
    expect(ann.locator("#moves")).to_have_text("1")
    assert exposed_cards(ann, "#board") == engine_exposed(board)
    expect(racer(bob, "Ann")).to_contain_text(re.compile(r"· 1 move(?!s)"))
    assert exposed_cards(bob, "#board") == engine_exposed(Board.new("scorpion", DEAL))

    # Carol opens the site, finds the race in the live games list and watches it.
    carol = open_page(base_url(node), "Carol")
    game = carol.locator("#games li", has_text="Ann vs Bob")
    expect(game).to_be_visible()
    game.get_by_role("button", name="Watch").click()
    expect(carol.locator("#screen-watch")).to_be_visible()
    expect(carol.locator(".watch-board")).to_have_count(2)
    ann_board = ".watch-board:has(h3:has-text('Ann')) .board"
    assert exposed_cards(carol, ann_board) == engine_exposed(board)

    # Ann's second move, by double-click (auto-move to the only place it fits).
    move = card_move(board, single_target=True)
    ann.dblclick(f"#board .card[data-card='{card_text(move.card)}']", position=TOP_STRIP)
    board.push(move)
    expect(ann.locator("#moves")).to_have_text("2")
    expect(racer(bob, "Ann")).to_contain_text("2 moves")
    expect(carol.locator(".watch-board", has_text="Ann")).to_contain_text("2 moves")
    assert exposed_cards(carol, ann_board) == engine_exposed(board)

    ann.screenshot(path=str(artifacts / "race-desktop.png"))
    bob.screenshot(path=str(artifacts / "race-phone.png"), full_page=True)
    carol.screenshot(path=str(artifacts / "spectator-desktop.png"), full_page=True)

    # Carol's connection drops; Ann moves meanwhile; Carol's page watches again from the
    # last version it saw and catches up.
    carol.evaluate("window.scorpion.link.ws.close(4000)")
    expect(carol.locator("#conn")).not_to_have_attribute("data-state", "open")
    move = card_move(board)
    click_move(ann, move)
    board.push(move)
    expect(ann.locator("#moves")).to_have_text("3")
    expect(carol.locator("#conn")).to_have_attribute("data-state", "open")
    expect(carol.locator(".watch-board", has_text="Ann")).to_contain_text("3 moves")
    assert exposed_cards(carol, ann_board) == engine_exposed(board)

    # Bob resigns; Ann sees it; then Ann resigns and everyone sees the standings.
    bob.click("#btn-resign")
    bob.click("#btn-resign-yes")
    expect(bob.locator("#game-status")).to_contain_text("you resigned")
    expect(racer(ann, "Bob").locator(".tag")).to_have_text("resigned")
    expect(ann.locator("#btn-resign")).to_be_enabled()
    ann.click("#btn-resign")
    ann.click("#btn-resign-yes")
    for page in (ann, bob, carol):
        expect(page.locator("#result")).to_be_visible()
        expect(page.locator("#standings tr")).to_have_count(2)
        expect(page.locator("#result-deal")).to_contain_text(str(DEAL))
    expect(ann.locator("#standings tr", has_text="Ann")).to_contain_text("resigned")
    ann.screenshot(path=str(artifacts / "result-desktop.png"))
    ann.click("#btn-result-close")
    expect(ann.locator("#screen-lobby")).to_be_visible()


def test_keyboard_play_hints_undo_and_a_resume_after_a_lost_connection(
    start_node: NodeFactory, open_page: PageFactory, artifacts: Path
) -> None:
    node = start_node(test_deals=DEAL)
    ann = open_page(base_url(node), "Ann")
    ann.click("text=Race options")
    ann.check("#opt-undo")
    ann.check("#opt-hints")
    ann.click("#btn-create")
    expect(ann.locator("#room-link")).to_have_value(re.compile(r"/\?room=\w{6}$"))
    link = ann.input_value("#room-link")
    bob = open_page(link, "Bob")
    bob.click("#btn-ready")
    expect(ann.locator("#btn-start")).to_be_enabled()
    ann.click("#btn-start")
    expect(ann.locator("#screen-game")).to_be_visible()
    board = Board.new("scorpion", DEAL)

    # A hint highlights a card and its destination.
    ann.keyboard.press("h")
    expect(ann.locator("#board .card.hinted").first).to_be_visible()
    expect(ann.locator("#board .column.hint-target")).to_have_count(1)

    # Keyboard only: walk to the card with the arrows, Enter to pick, walk, Enter to drop.
    move = card_move(board)
    ann.locator("#board button[tabindex='0']").focus()
    source, row = move.source + 1, board.columns[move.source].index(move.card)
    for _ in range(10):
        ann.keyboard.press("ArrowLeft")
    for _ in range(source - 1):
        ann.keyboard.press("ArrowRight")
    up = len(board.columns[move.source]) - 1 - row
    for _ in range(up):
        ann.keyboard.press("ArrowUp")
    assert ann.evaluate("document.activeElement.dataset.card") == card_text(move.card)
    ann.keyboard.press("Enter")
    expect(ann.locator("#board .card.selected").first).to_be_visible()
    steps = move.target - move.source
    for _ in range(abs(steps)):
        ann.keyboard.press("ArrowRight" if steps > 0 else "ArrowLeft")
    ann.keyboard.press("Enter")
    board.push(move)
    expect(ann.locator("#moves")).to_have_text("1")
    assert exposed_cards(ann, "#board") == engine_exposed(board)

    # Undo takes it back.
    ann.keyboard.press("u")
    board.pop()
    expect(ann.locator("#moves")).to_have_text("0")
    assert exposed_cards(ann, "#board") == engine_exposed(board)

    # The connection drops; Bob moves meanwhile; Ann's page reconnects and resumes.
    ann.evaluate("window.scorpion.link.ws.close(4000)")
    expect(ann.locator("#conn")).not_to_have_attribute("data-state", "open")
    bob_move = card_move(Board.new("scorpion", DEAL))
    click_move(bob, bob_move)
    expect(bob.locator("#moves")).to_have_text("1")
    expect(ann.locator("#conn")).to_have_attribute("data-state", "open")
    expect(racer(ann, "Bob")).to_contain_text(re.compile(r"· 1 move(?!s)"))
    move = card_move(board)
    click_move(ann, move)
    board.push(move)
    expect(ann.locator("#moves")).to_have_text("1")
    assert exposed_cards(ann, "#board") == engine_exposed(board)

    # Server errors are told in words: e.g. a room code that does not exist.
    carol = open_page(base_url(node), "Carol", viewport=PHONE)
    carol.fill("#join-code", "ZZZZZZ")
    carol.click("#join-form button")
    expect(carol.locator("#notice")).to_contain_text("No open room has that code")
    carol.screenshot(path=str(artifacts / "lobby-phone.png"), full_page=True)


def test_solo_game_replay_daily_leaderboard_and_stats(
    start_node: NodeFactory, open_page: PageFactory, artifacts: Path
) -> None:
    node = start_node(test_deals=WINNABLE)
    dana = open_page(base_url(node), "Dana", viewport=PHONE)
    dana.click("#btn-solo")
    expect(dana.locator("#screen-game")).to_be_visible()
    expect(dana.locator("#game-status")).to_contain_text("solo")
    expect(dana.locator("#racers-panel")).to_be_hidden()
    expect(dana.locator("#btn-undo")).to_be_visible()
    opening = exposed_cards(dana, "#board")

    # Still winnable? The solver says so, and its winning move is highlighted like a hint.
    dana.click("#btn-winnable")
    expect(dana.locator("#winnable-verdict")).to_contain_text("Still winnable: yes. Try", timeout=30_000)
    expect(dana.locator("#board .column.hint-target")).to_have_count(1)
    expect(dana.locator("#board .card.hinted").first).to_be_visible()

    # Play the first hinted move by clicks, then resign and replay the same deal.
    dana.click("#btn-hint")
    hinted = dana.locator("#board .column.hint-target")
    expect(hinted).to_have_count(1)
    if dana.locator("#board .card.hinted").count():
        dana.locator("#board .card.hinted").first.click(position=TOP_STRIP)
        hinted.click(position={"x": 5, "y": 5})
        expect(dana.locator("#moves")).to_have_text("1")
    dana.click("#btn-hint")
    expect(dana.locator("#notice-text")).to_contain_text("Hint: ")
    dana.click("#btn-resign")
    dana.click("#btn-resign-yes")
    expect(dana.locator("#result")).to_be_visible()
    expect(dana.locator("#h-result")).to_contain_text("Game over")
    # The hint spoke of a game that is over: it goes at once, not when its time runs out.
    assert dana.locator("#notice").is_hidden()
    expect(dana.locator("#btn-winnable")).to_be_disabled()

    # The solver's analysis comes on the result: the deal was winnable, with a 52-move line.
    expect(dana.locator("#analysis")).to_be_visible()
    expect(dana.locator("#analysis-verdict")).to_have_text("Deal winnable: yes", timeout=30_000)
    expect(dana.locator("#analysis-slipped")).to_contain_text(
        re.compile(r"Your win slipped away at move 1 \(.+ to column \d\)\.|not proved lost")
    )
    expect(dana.locator("#analysis-line-info")).to_have_text("A winning line from the opening has 52 moves.")
    expect(dana.locator("#analysis-line")).to_be_hidden()
    dana.click("#btn-show-line")
    expect(dana.locator("#analysis-line li")).to_have_count(52)
    dana.screenshot(path=str(artifacts / "result-analysis-phone.png"), full_page=True)
    dana.click("#btn-replay")
    expect(dana.locator("#result")).to_be_hidden()
    expect(dana.locator("#moves")).to_have_text("0")
    assert exposed_cards(dana, "#board") == opening
    dana.click("#btn-resign")
    dana.click("#btn-resign-yes")
    dana.click("#btn-result-close")

    # Today's deal: one ranked attempt, then the leaderboard and the stats show it.
    expect(dana.locator("#btn-daily")).to_be_enabled()
    dana.click("#btn-daily")
    expect(dana.locator("#game-status")).to_contain_text("ranked")
    expect(dana.locator("#btn-hint")).to_be_hidden()
    dana.click("#btn-resign")
    dana.click("#btn-resign-yes")
    expect(dana.locator("#result")).to_be_visible()
    dana.click("#btn-result-close")
    expect(dana.locator("#btn-daily")).to_be_disabled()
    expect(dana.locator("#btn-practice")).to_be_visible()
    expect(dana.locator("#leaderboard tr.me")).to_contain_text("Dana")
    expect(dana.locator("#stats tr[data-variant='scorpion']")).to_be_visible()
    dana.screenshot(path=str(artifacts / "lobby-after-daily-phone.png"), full_page=True)

    # The daily box counts down to the next deal, and asks for it once the day is over.
    expect(dana.locator("#daily-info")).to_contain_text("The next deal comes in")
    dana.evaluate(
        "(() => { const link = window.scorpion.link, send = link.send.bind(link); window.__sent = [];"
        " link.send = (m) => { window.__sent.push(m.type); return send(m); };"
        " const s = window.scorpion.state; s.daily.ends = Date.now() + s.offset + 90 * 60000 - 1000; })()"
    )
    expect(dana.locator("#daily-info")).to_contain_text("The next deal comes in 1 h 30 min.")
    dana.evaluate(
        "(() => { const s = window.scorpion.state; s.daily.ends = Date.now() + s.offset + 1500; })()"
    )
    expect(dana.locator("#daily-info")).to_contain_text("The next deal comes in 1 min.")
    for _ in range(100):  # (wait_for_function would evaluate a string, which the page's policy forbids)
        if dana.evaluate("window.__sent.includes('daily_info')"):
            break
        dana.wait_for_timeout(50)
    assert dana.evaluate("window.__sent.includes('daily_info')"), (
        "the page did not ask for the new day's deal"
    )
    expect(dana.locator("#daily-info")).not_to_contain_text("in 1 min.")  # the server's own end of day again

    # Forget me: the server erases the player; the page comes back as a new one.
    old_token = dana.evaluate("localStorage.getItem('scorpion.token')")
    dana.once("dialog", lambda dialog: dialog.accept())
    dana.click("#btn-forget")
    expect(dana.locator("#notice")).to_contain_text("The server has forgotten you")
    expect(dana.locator("#conn")).to_have_attribute("data-state", "open")
    expect(dana.locator("#stats")).to_contain_text("No game finished yet")
    assert dana.evaluate("localStorage.getItem('scorpion.token')") not in (None, old_token)


def test_quick_match_pairs_two_pages(start_node: NodeFactory, open_page: PageFactory) -> None:
    node = start_node()
    eve = open_page(base_url(node), "Eve")
    fay = open_page(base_url(node), "Fay", viewport=PHONE)
    for page in (eve, fay):
        page.select_option("#variant", "wasp")
        page.click("#btn-queue")
        if page is eve:
            expect(eve.locator("#queue-text")).to_contain_text("Looking for an opponent for Wasp")
    for page in (eve, fay):
        expect(page.locator("#screen-game")).to_be_visible()
        expect(page.locator("#board")).to_have_attribute("data-variant", "wasp")
    expect(racer(eve, "Fay")).to_be_visible()
    expect(racer(fay, "Eve")).to_be_visible()


# The longest names the server accepts (24 characters), with nowhere to break a line.
LONG_NAMES = ("Bartholomew_Featherstone", "Wilhelmina_Cavendish_III")


def sideways_overflow(page: Page, selector: str) -> list[str]:
    """Name what sticks out sideways: the page itself, or an element matching ``selector``.

    Text fields are left out: their text scrolls inside them by design.
    """
    return page.evaluate(
        """(selector) => {
          const out = [];
          const doc = document.documentElement;
          if (doc.scrollWidth > innerWidth) out.push(`the page: ${doc.scrollWidth} > ${innerWidth}`);
          for (const e of document.querySelectorAll(selector)) {
            if (e.matches("input, select, textarea") || e.getClientRects().length === 0) continue;
            if (e.scrollWidth > e.clientWidth + 1)
              out.push(`${e.tagName}#${e.id}.${e.className}: ${e.scrollWidth} > ${e.clientWidth}`);
          }
          return out;
        }""",
        selector,
    )


def test_the_longest_names_fit_a_phone_screen_everywhere_they_are_shown(
    start_node: NodeFactory, open_page: PageFactory
) -> None:
    node = start_node(test_deals=DEAL)
    first, second = LONG_NAMES
    ann = open_page(base_url(node), first, viewport=PHONE)
    ann.click("#btn-create")
    expect(ann.locator("#screen-room")).to_be_visible()
    bob = open_page(ann.input_value("#room-link"), second, viewport=PHONE)
    expect(bob.locator("#screen-room")).to_be_visible()
    problems = sideways_overflow(bob, "#screen-room, #screen-room *")
    assert problems == [], problems
    bob.click("#btn-ready")
    ann.click("#btn-start")
    for page in (ann, bob):
        expect(page.locator("#screen-game")).to_be_visible()
        expect(page.locator("#racers li")).to_have_count(2)
        problems = sideways_overflow(page, "#racers-panel, #racers-panel *")
        assert problems == [], problems

    # A spectator on a phone: the live games list, then the two boards.
    carol = open_page(base_url(node), "Carol", viewport=PHONE)
    game = carol.locator("#games li", has_text=f"{first} vs {second}")
    expect(game).to_be_visible()
    problems = sideways_overflow(carol, "#games, #games *")
    assert problems == [], problems
    game.get_by_role("button", name="Watch").click()
    expect(carol.locator(".watch-board")).to_have_count(2)
    problems = sideways_overflow(carol, "#screen-watch, #screen-watch *")
    assert problems == [], problems

    for page in (bob, ann):
        page.click("#btn-resign")
        page.click("#btn-resign-yes")
    for page in (ann, bob, carol):
        expect(page.locator("#standings tr")).to_have_count(2)
        problems = sideways_overflow(page, "#result, #result *")
        assert problems == [], problems

    # The lobby's tables after a ranked daily attempt: the leaderboard and the stats.
    ann.click("#btn-result-close")
    ann.click("#btn-daily")
    expect(ann.locator("#game-status")).to_contain_text("ranked")
    ann.click("#btn-resign")
    ann.click("#btn-resign-yes")
    ann.click("#btn-result-close")
    expect(ann.locator("#leaderboard tr.me")).to_contain_text(first)
    expect(ann.locator("#stats tr[data-variant='scorpion']")).to_be_visible()
    problems = sideways_overflow(ann, "#screen-lobby, #screen-lobby *")
    assert problems == [], problems


def test_three_blind_mice_has_no_reserve_to_deal_on_the_page(
    start_node: NodeFactory, open_page: PageFactory
) -> None:
    node = start_node(test_deals=DEAL)
    page = open_page(base_url(node), "Tom")
    page.select_option("#variant", "three-blind-mice")
    page.click("#btn-solo")
    expect(page.locator("#game-status")).to_contain_text("Three Blind Mice")
    expect(page.locator("#board .reserve .card")).to_have_count(2)  # the two open reserve cells
    expect(page.locator("#btn-deal")).to_be_hidden()
    expect(page.locator("#key-deal")).to_be_hidden()
    expect(page.locator(".keys")).not_to_contain_text("D deals", use_inner_text=True)
    expect(page.locator(".keys")).to_contain_text("U undoes", use_inner_text=True)
    # Back in Scorpion, the reserve and its key are offered again.
    page.click("#btn-resign")
    page.click("#btn-resign-yes")
    page.click("#btn-result-close")
    page.select_option("#variant", "scorpion")
    page.click("#btn-solo")
    expect(page.locator("#btn-deal")).to_be_visible()
    expect(page.locator(".keys")).to_contain_text("D deals", use_inner_text=True)


def _centre(page: Page, selector: str, strip: bool = False) -> tuple[float, float]:
    box = page.locator(selector).bounding_box()
    assert box is not None, selector
    if strip:  # a card others cover shows only its top strip
        return box["x"] + box["width"] / 2, box["y"] + 6
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def _drop_point(page: Page, column: int) -> tuple[float, float]:
    """Return a point over the exposed end of ``column`` (1-based), where a player drops."""
    last = page.locator(f"#board .column[data-col='{column}'] > *").last
    box = last.bounding_box()
    assert box is not None
    return box["x"] + box["width"] / 2, box["y"] + box["height"] * 0.6


def test_cards_are_dragged_onto_a_column_with_a_mouse_or_a_finger(
    start_node: NodeFactory, open_page: PageFactory, artifacts: Path
) -> None:
    node = start_node(test_deals=DEAL)
    board = Board.new("scorpion", DEAL)
    moves = [m for m in board.legal_moves() if not m.is_deal]
    # A card with others on it, so the whole group is seen to travel.
    move = next((m for m in moves if board.columns[m.source][-1] != m.card), moves[0])
    card = f"#board .card[data-card='{card_text(move.card)}']"
    wrong = next(c for c in range(len(board.columns)) if c not in (move.source, move.target))

    page = open_page(base_url(node), "Ann")
    page.click("#btn-solo")
    expect(page.locator("#screen-game")).to_be_visible()
    expect(page.locator(card)).to_be_visible()

    # A drop where the card may not go moves nothing and says why.
    page.mouse.move(*_centre(page, card, strip=True))
    page.mouse.down()
    page.mouse.move(*_drop_point(page, wrong + 1), steps=8)
    expect(page.locator(".drag-ghost")).to_have_count(1)
    expect(page.locator(f"#board .column[data-col='{move.target + 1}']")).to_have_class(
        re.compile(r"\btarget\b")
    )
    expect(page.locator(f"#board .column[data-col='{wrong + 1}']")).to_have_class(
        re.compile(r"\bdrop-over\b")
    )
    page.screenshot(path=str(artifacts / "drag-desktop.png"))
    page.mouse.up()
    expect(page.locator(".drag-ghost")).to_have_count(0)
    expect(page.locator("#notice-text")).to_contain_text(f"cannot go on column {wrong + 1}")
    expect(page.locator("#moves")).to_have_text("0")
    expect(page.locator("#board .column.target")).to_have_count(0)

    # Dropped off the board, or let go after Esc, the drag just ends.
    page.locator("#notice-close").click()
    page.mouse.move(*_centre(page, card, strip=True))
    page.mouse.down()
    page.mouse.move(640, 20, steps=8)  # the page's header
    page.mouse.up()
    page.mouse.move(*_centre(page, card, strip=True))
    page.mouse.down()
    page.mouse.move(*_drop_point(page, move.target + 1), steps=8)
    page.keyboard.press("Escape")
    expect(page.locator(".drag-ghost")).to_have_count(0)
    page.mouse.up()
    expect(page.locator("#notice")).to_be_hidden()
    expect(page.locator("#board .card.selected, #board .card.lifted, #board .column.target")).to_have_count(0)
    expect(page.locator("#moves")).to_have_text("0")

    # Dragged onto its target with the mouse, the card and the cards on it move there.
    page.mouse.move(*_centre(page, card, strip=True))
    page.mouse.down()
    page.mouse.move(*_drop_point(page, move.target + 1), steps=8)
    page.mouse.up()
    expect(page.locator("#moves")).to_have_text("1")
    board.push(move)
    assert exposed_cards(page, "#board") == engine_exposed(board)
    assert page.locator(".drag-ghost").count() == 0

    # A short press that hardly moves is still a click: the card is picked, not dragged.
    follow = next(m for m in board.legal_moves() if not m.is_deal)
    x, y = _centre(page, f"#board .card[data-card='{card_text(follow.card)}']", strip=True)
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x + 2, y + 1)
    page.mouse.up()
    expect(page.locator("#board .card.selected").first).to_be_visible()
    page.keyboard.press("Escape")

    # On a phone, a finger drags the same way (touch events, which must not scroll the page).
    phone = open_page(base_url(node), "Bob", viewport=PHONE, has_touch=True, is_mobile=True)
    phone.click("#btn-solo")
    expect(phone.locator(card)).to_be_visible()
    cdp = phone.context.new_cdp_session(phone)
    path = [_centre(phone, card, strip=True)]
    end = _drop_point(phone, move.target + 1)
    path += [
        (path[0][0] + (end[0] - path[0][0]) * i / 8, path[0][1] + (end[1] - path[0][1]) * i / 8)
        for i in range(1, 9)
    ]
    cdp.send(
        "Input.dispatchTouchEvent",
        {"type": "touchStart", "touchPoints": [{"x": path[0][0], "y": path[0][1]}]},
    )
    for x, y in path[1:]:
        cdp.send("Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": [{"x": x, "y": y}]})
    cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
    expect(phone.locator("#moves")).to_have_text("1")
    assert exposed_cards(phone, "#board") == engine_exposed(board)
