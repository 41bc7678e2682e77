"""Rated races and the daily's ranked attempt: no undo, no hints, no solver help (decision 13).

Friend races keep the options their host picks, a casual quick match keeps undo and hints,
and the daily's practice keeps its undo.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from protocol.game import Board, Move, move_json
from protocol.wire.message import Options
from server.daily import choose_number
from server.launch import rated_rules

from .conftest import DAILY_SECRET, Client, NodeFactory, accounts_only
from .test_race import DEAL


@pytest.fixture
def open_client(open_client: Any) -> Any:
    """Every client of this file is an account: ranked play needs one."""
    return accounts_only(open_client)


def line_turning_a_card(variant: str, number: int, depth: int = 4) -> list[Move]:
    """Return the shortest line of tableau moves (no deal) after which a card is turned up."""
    board = Board.new(variant, number)
    start = board.face_down_left

    def search(left: int) -> list[Move] | None:
        for move in board.legal_moves():
            if move.is_deal:
                continue
            board.push(move)
            try:
                if board.face_down_left < start:
                    return [move]
                if left > 1 and (rest := search(left - 1)) is not None:
                    return [move, *rest]
            finally:
                board.pop()
        return None

    for most in range(1, depth + 1):
        if (line := search(most)) is not None:
            return line
    raise AssertionError(f"no line of {depth} moves turns a card of deal {number}")


async def play(client: Client, game: str, v: int, line: list[Move]) -> dict[str, Any]:
    answer: dict[str, Any] = {}
    for move in line:
        answer = await client.request({"type": "move", "game": game, "v": v, "move": move_json(move)})
        assert answer["type"] == "accepted", answer
        v = answer["v"]
    return answer


async def refused(client: Client, request: dict[str, Any], code: str) -> dict[str, Any]:
    answer = await client.request(request)
    assert answer["type"] == "error" and answer["code"] == code, answer
    return answer


async def no_help(client: Client, game: str, v: int) -> None:
    """Check that undo, hints and the solver's verdict are all refused in ``game``."""
    undo = await refused(client, {"type": "undo", "game": game, "v": v}, "undo_forbidden")
    assert "undo" in undo["message"]
    hint = await refused(client, {"type": "hint", "game": game, "v": v}, "hints_forbidden")
    assert "hints" in hint["message"]
    solver = await refused(client, {"type": "winnable", "game": game, "v": v}, "not_allowed")
    assert "solo games only" in solver["message"]


async def face_down_counts(client: Client, game: str) -> list[int]:
    """Resume ``game`` from the start: the racer's face-down count after each of its events."""
    answer = await client.request({"type": "resume", "game": game, "v": 0})
    if answer["type"] == "snapshot":
        return [answer["summary"]["face_down_left"]]
    assert answer["type"] == "batch", answer
    assert answer["events"][0]["type"] == "race_started"
    return [e["summary"]["face_down_left"] for e in answer["events"] if e["type"] == "accepted"]


RATED_OFF = {"undo": False, "hints": False, "rated": True}


def test_the_rule_turns_off_undo_and_hints_of_a_rated_race_and_leaves_an_unrated_one_alone() -> None:
    asked = Options(undo=True, hints=True, spectators=False, spectator_delay=30, rated=True)
    effective = Options(undo=False, hints=False, spectators=False, spectator_delay=30, rated=True)
    assert rated_rules(asked) == effective
    casual = Options(undo=True, hints=False, reserve_rule="when-stuck")
    assert rated_rules(casual) is casual
    assert rated_rules(Options(undo=False, hints=False, rated=True)).rated is True


async def test_a_rated_quick_match_refuses_undo_hints_and_the_solver_and_a_turned_card_stays_up(
    start_node: NodeFactory, open_client: Any
) -> None:
    node = start_node(test_deals=DEAL)
    ann: Client = await open_client(node, "Ann")
    bob: Client = await open_client(node, "Bob")
    for client in (ann, bob):
        assert (await client.request({"type": "queue_join", "variant": "scorpion"}))["rated"] is True
    start = await ann.expect("race_started")
    await bob.expect("race_started", game=start["game"])
    assert {k: start["options"][k] for k in RATED_OFF} == RATED_OFF
    await no_help(ann, start["game"], start["v"])
    line = line_turning_a_card("scorpion", DEAL)
    turned = await play(ann, start["game"], start["v"], line)
    down = turned["summary"]["face_down_left"]
    assert down == Board.new("scorpion", DEAL).face_down_left - 1
    await no_help(ann, start["game"], turned["v"])
    counts = await face_down_counts(ann, start["game"])
    assert counts == sorted(counts, reverse=True) and counts[-1] == down, counts


async def test_a_casual_quick_match_keeps_undo_and_hints(start_node: NodeFactory, open_client: Any) -> None:
    node = start_node(test_deals=DEAL)
    ann: Client = await open_client(node, "Ann")
    bob: Client = await open_client(node, "Bob")
    for client in (ann, bob):
        await client.request({"type": "queue_join", "variant": "scorpion", "rated": False})
    start = await ann.expect("race_started")
    options = start["options"]
    assert (options["undo"], options["hints"], options["rated"]) == (True, True, False)
    hints = await ann.request({"type": "hint", "game": start["game"], "v": start["v"]})
    assert hints["type"] == "hints" and hints["moves"]
    moved = await play(ann, start["game"], start["v"], line_turning_a_card("scorpion", DEAL)[:1])
    undone = await ann.request({"type": "undo", "game": start["game"], "v": moved["v"]})
    assert undone["type"] == "accepted" and undone["summary"]["moves"] == 0


async def test_a_rated_room_shows_undo_and_hints_off_in_its_state_and_race_started_and_refuses_both(
    start_node: NodeFactory, open_client: Any
) -> None:
    node = start_node(test_deals=DEAL)
    ann: Client = await open_client(node, "Ann")
    bob: Client = await open_client(node, "Bob")
    asked = {"undo": True, "hints": True, "spectator_delay": 5, "rated": True}  # clients' defaults
    room = await ann.request({"type": "room_create", "variant": "scorpion", "options": asked})
    assert room["type"] == "room", room
    effective = {**asked, "undo": False, "hints": False}
    assert {k: room["options"][k] for k in effective} == effective
    joined = await bob.request({"type": "room_join", "room": room["room"]})
    assert joined["options"] == room["options"]
    await bob.request({"type": "ready", "ready": True})
    await ann.send({"type": "room_start"})
    starts = [await client.expect("race_started") for client in (ann, bob)]
    for start in starts:
        assert start["options"] == room["options"]
    ann_start, bob_start = starts
    await no_help(ann, ann_start["game"], ann_start["v"])
    await no_help(bob, bob_start["game"], bob_start["v"])
    # Its rematch is rated too, and has neither.
    for client, start in ((ann, ann_start), (bob, bob_start)):
        answer = await client.request({"type": "resign", "game": start["game"], "v": start["v"]})
        assert answer["type"] == "accepted", answer
    await ann.expect("race_ended", game=ann_start["game"])
    rematch = await ann.request({"type": "rematch", "game": ann_start["game"]})
    assert rematch["type"] == "room" and rematch["options"] == room["options"]


async def test_an_unrated_friend_race_keeps_the_undo_and_hints_its_host_picked(
    start_node: NodeFactory, open_client: Any
) -> None:
    node = start_node(test_deals=DEAL)
    ann: Client = await open_client(node, "Ann")
    bob: Client = await open_client(node, "Bob")
    room = await ann.request(
        {"type": "room_create", "variant": "scorpion", "options": {"undo": True, "hints": False}}
    )
    options = room["options"]
    assert (options["undo"], options["hints"], options["rated"]) == (True, False, False)
    await bob.request({"type": "room_join", "room": room["room"]})
    await bob.request({"type": "ready", "ready": True})
    await ann.send({"type": "room_start"})
    start = await ann.expect("race_started")
    assert start["options"] == room["options"]
    await refused(ann, {"type": "hint", "game": start["game"], "v": start["v"]}, "hints_forbidden")
    line = line_turning_a_card("scorpion", DEAL)
    turned = await play(ann, start["game"], start["v"], line)
    undone = await ann.request({"type": "undo", "game": start["game"], "v": turned["v"]})
    assert undone["type"] == "accepted" and undone["summary"]["moves"] == len(line) - 1


def today(node: Any) -> str:
    return dt.datetime.fromtimestamp(node.clock(), dt.UTC).date().isoformat()


async def test_the_ranked_daily_attempt_refuses_undo_and_its_face_down_count_never_goes_back_up(
    local_node: Any, open_client: Any
) -> None:
    node = await local_node()
    ann: Client = await open_client(node, "Ann")
    start = await ann.request({"type": "daily_start"})
    assert start["type"] == "race_started" and start["mode"] == "daily"
    options = start["options"]
    assert (options["undo"], options["hints"]) == (False, False)
    number = choose_number(DAILY_SECRET, today(node), "scorpion")
    line = line_turning_a_card("scorpion", number)
    counts = [Board.new("scorpion", number).face_down_left]
    v = start["v"]
    for move in line:
        answer = await play(ann, start["game"], v, [move])
        counts.append(answer["summary"]["face_down_left"])
        v = answer["v"]
        await refused(ann, {"type": "undo", "game": start["game"], "v": v}, "undo_forbidden")
    await no_help(ann, start["game"], v)
    counts += await face_down_counts(ann, start["game"])
    assert counts == sorted(counts, reverse=True) and counts[-1] == counts[0] - 1, counts
    # Over, its analysis still waits for the end of the day.
    await ann.request({"type": "resign", "game": start["game"], "v": v})
    await ann.expect("race_ended", game=start["game"])
    await refused(ann, {"type": "analyze", "game": start["game"]}, "not_allowed")


async def test_the_daily_practice_after_the_ranked_attempt_still_allows_undo(
    local_node: Any, open_client: Any
) -> None:
    node = await local_node()
    ann: Client = await open_client(node, "Ann")
    ranked = await ann.request({"type": "daily_start"})
    await ann.request({"type": "resign", "game": ranked["game"], "v": ranked["v"]})
    await ann.expect("race_ended", game=ranked["game"])
    practice = await ann.request({"type": "daily_start", "practice": True})
    assert practice["mode"] == "practice" and practice["options"]["undo"] is True
    number = choose_number(DAILY_SECRET, today(node), "scorpion")
    line = line_turning_a_card("scorpion", number)
    turned = await play(ann, practice["game"], practice["v"], line)
    undone = await ann.request({"type": "undo", "game": practice["game"], "v": turned["v"]})
    assert undone["type"] == "accepted" and undone["summary"]["moves"] == len(line) - 1
    await refused(ann, {"type": "winnable", "game": practice["game"], "v": undone["v"]}, "not_allowed")
