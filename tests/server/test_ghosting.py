"""No ghosting: a racer's second identity, watching the racer's own race, learns nothing of
the racer's face-down cards (decision 14).

Every racer plays the same deal, so a rival's uncovered cards may be the racer's own
face-down ones. In a rated race a spectator is shown only the cards every racer still
playing has uncovered; an unrated race is shown as it is; a daily game is shown only to a
player whose own ranked attempt of that day is over.
"""

from __future__ import annotations

import random
from typing import Any, cast

import pytest

from protocol.game import DEAL as DEAL_MOVE
from protocol.game import Board, ReserveRule, card_text, move_json, move_text, summary_data, view_data
from protocol.wire.codec import JSON, decode_dict
from protocol.wire.message import Options, SpectateEvent
from server.game.fairness import (
    common_cards,
    masked_view,
    note_uncovered,
    spectator_cards,
    spectator_view,
    uncovered_cards,
)
from server.game.live import LiveGame, game_event, project, race_started_event
from server.game.race import RaceService

from .conftest import Client, NodeFactory, accounts_only, start_race
from .test_race import card_texts


@pytest.fixture
def open_client(open_client: Any) -> Any:
    """Every client of this file is an account: ranked play needs one."""
    return accounts_only(open_client)


DEAL = 31415926535
START = 1_000_000


# ---------------------------------------------------------------- the pure mask


def seen_by(view: dict[str, Any]) -> set[str]:
    """Every card a racer's view shows them, worked out here apart from the server's code:
    face up in a column or a cell, or in a finished run on a foundation."""
    cards = {card for column in view["columns"] for card in column if card is not None}
    cards |= {card for card in view["cells"] if card is not None}
    for suit in view["foundations"]:
        cards |= {rank + suit for rank in "A23456789TJQK"}
    return cards


def test_a_racer_has_uncovered_the_face_up_cards_the_cells_and_every_card_of_a_finished_run() -> None:
    view = {
        "variant": "three-blind-mice",
        "columns": [[None, None, "KS", "QS"], [], ["7D"]],
        "reserve_left": 0,
        "cells": ["2C", None],
        "foundations": ["H"],
    }
    expected = {"KS", "QS", "7D", "2C"} | {rank + "H" for rank in "A23456789TJQK"}
    assert uncovered_cards(view) == expected == seen_by(view)


def test_the_mask_hides_every_card_not_shown_as_face_down_and_keeps_the_rest() -> None:
    view = {
        "variant": "scorpion",
        "columns": [[None, "KS", "QS"], ["7D", "6D"], []],
        "reserve_left": 3,
        "cells": [],
        "foundations": ["C"],
    }
    masked = masked_view(view, frozenset({"KS", "6D"}))
    assert masked == {
        "variant": "scorpion",
        "columns": [[None, "KS", None], [None, "6D"], []],
        "reserve_left": 3,
        "cells": [],
        "foundations": ["C"],
    }
    assert view["columns"] == [[None, "KS", "QS"], ["7D", "6D"], []], "the stored event is left as it was"
    everything = frozenset({"KS", "QS", "7D", "6D"})
    assert masked_view(view, everything) is view, "nothing to hide: no copy"
    cells = {
        "variant": "three-blind-mice",
        "columns": [],
        "reserve_left": 0,
        "cells": ["2C", "3C"],
        "foundations": [],
    }
    assert masked_view(cells, frozenset({"3C"}))["cells"] == [None, "3C"]


def test_only_cards_every_racer_still_playing_has_uncovered_are_common() -> None:
    ann = (5, frozenset({"KS", "QS", "7D"}))
    bob = (6, frozenset({"KS", "7D", "AH"}))
    assert common_cards([("playing", ann), ("playing", bob)]) == {"KS", "7D"}
    assert common_cards([("playing", ann), ("resigned", bob)]) == {"KS", "QS", "7D"}
    assert common_cards([("playing", ann), ("playing", None)]) == frozenset(), "unknown: nothing shown"
    assert common_cards([("finished", ann), ("left", bob)]) is None, "nobody playing: nothing to hide"


def live_game(rated: bool, racers: tuple[str, ...] = ("ann", "bob")) -> LiveGame:
    game = LiveGame(
        game_id="G1",
        variant="scorpion",
        rule=ReserveRule.ANY_TIME,
        options=Options(rated=rated, undo=not rated, hints=not rated),
        start=START,
        number=DEAL,
        salt="00ff",
        commitment="c0ffee",
        roster=[(pid, pid.title()) for pid in racers],
        room=None,
        time_limit_ms=0,
    )
    game.status = {pid: "playing" for pid in racers}
    return game


def test_only_a_rated_race_that_is_not_over_masks_its_spectators_view() -> None:
    view = {
        "variant": "scorpion",
        "columns": [["KS", "QS"]],
        "reserve_left": 3,
        "cells": [],
        "foundations": [],
    }
    unrated = live_game(rated=False)
    assert spectator_cards(unrated) is None and spectator_view(unrated, view) is view
    rated = live_game(rated=True)
    note_uncovered(rated.uncovered, "ann", 2, view)
    assert spectator_cards(rated) == frozenset(), "Bob's cards are not known yet: nothing shown"
    note_uncovered(rated.uncovered, "bob", 3, {**view, "columns": [["KS", None]]})
    assert spectator_view(rated, view)["columns"] == [["KS", None]]
    note_uncovered(rated.uncovered, "bob", 1, view)  # an older event read again from the log
    assert spectator_cards(rated) == {"KS"}
    rated.ended = True
    assert spectator_view(rated, view) is view, "over: the real boards"


def play_random(board: Board, rng: random.Random, deal: bool = False) -> Any:
    """Play a random legal move on ``board`` that keeps the game going (the reserve's deal
    if ``deal``); return it, or ``None`` when there is none."""
    moves = [m for m in board.legal_moves() if (m == DEAL_MOVE) == deal]
    rng.shuffle(moves)
    for move in moves:
        board.push(move)
        if board.status().value == "in_play":
            return move
        board.pop()
    return None


def test_along_a_rated_race_a_spectator_is_shown_exactly_the_cards_face_up_on_every_board() -> None:
    """The node's own path, without I/O: each event noted by ``RaceService.note_event``, then
    projected for spectators."""
    race = RaceService(cast(Any, None), node_name="n1", time_limit=0, keep_finished=0)
    game = live_game(rated=True, racers=("ann", "bob", "cid"))
    boards = {pid: Board.new("scorpion", DEAL) for pid in game.racer_ids()}
    race.note_event(game, 1, race_started_event(boards["ann"], START))
    rng = random.Random(5)
    masked = 0
    for version in range(2, 150):
        pid = rng.choice(game.racer_ids())
        board = boards[pid]
        move = play_random(board, rng, deal=version % 17 == 0 and board.reserve_left > 0)
        if move is None:
            continue
        event = game_event(
            "move", player=pid, action="move", move=move_text(move), view=view_data(board),
            summary=summary_data(board, 1, board.status()), status="playing", origin="n2/", at=START,
        )  # fmt: skip
        race.note_event(game, version, event)
        seen = project(game, version, event, None)
        assert isinstance(seen, SpectateEvent)
        on_every_board = {card_text(c) for c in range(52) if all(b.is_face_up(c) for b in boards.values())}
        shown = {card for column in seen.view["columns"] for card in column if card is not None}
        real = {card for column in event["view"]["columns"] for card in column if card is not None}
        assert shown == real & on_every_board, f"v{version}"
        masked += shown != real
    assert masked > 10, "the racers never differed: the check meant nothing"


# ---------------------------------------------------------------- between real nodes


class Racer:
    """A racer's client, its own board as its `accepted` answers show it, and a local copy
    of that board to choose moves on."""

    def __init__(self, client: Client, started: dict[str, Any]) -> None:
        self.client = client
        self.game = started["game"]
        self.v = started["v"]
        self.view: dict[str, Any] = started["view"]
        self.board = Board.new("scorpion", DEAL)
        self.status = "playing"
        self.views = [started["view"]]
        """The board after each of the racer's moves, the opening first."""

    @property
    def uncovered(self) -> set[str]:
        return seen_by(self.view)

    async def move(self, rng: random.Random, deal: bool = False) -> dict[str, Any]:
        move = play_random(self.board, rng, deal)
        assert move is not None, "no move left to play"
        request = {"type": "move", "game": self.game, "v": self.v, "move": move_json(move)}
        answer = self._took(await self.client.request(request))
        self.views.append(answer["view"])
        return answer

    async def resign(self) -> dict[str, Any]:
        answer = await self.client.request({"type": "resign", "game": self.game, "v": self.v})
        return self._took(answer)

    def _took(self, answer: dict[str, Any]) -> dict[str, Any]:
        assert answer["type"] == "accepted", answer
        assert answer["view"] == view_data(self.board)
        self.v, self.view, self.status = answer["v"], answer["view"], answer["status"]
        return answer


class Ghost:
    """A racer's second identity watching the racer's race: checks every frame it receives
    against the racer's board as it is at that moment."""

    def __init__(self, client: Client, own: Racer) -> None:
        self.client = client
        self.own = own
        self.checked = 0

    def audit(self) -> None:
        """No frame received so far shows a card face down on the racer's board now (the
        racer's board only ever uncovers more: a rated race has no undo)."""
        hidden_now = {card_text(c) for c in range(52)} - self.own.uncovered
        for frame in self.client.frames[self.checked :]:
            data = decode_dict(frame, self.client.fmt, limit=1 << 22)  # type: ignore[arg-type]
            leaked = card_texts(data) & hidden_now
            assert not leaked, f"{data['type']} frame shows {leaked}, face down on the racer's board"
        self.checked = len(self.client.frames)


def expected_view(view: dict[str, Any], racers: list[Racer]) -> dict[str, Any]:
    """A racer's view as a spectator of a rated race is to see it: only the cards every racer
    still playing has uncovered."""
    playing = [r.uncovered for r in racers if r.status == "playing"]
    if not playing:
        return view
    return masked_view(view, frozenset(set.intersection(*playing)))


async def play_and_watch(
    rng: random.Random, racers: list[Racer], ghost: Ghost, mover: Racer, deal: bool = False
) -> dict[str, Any]:
    """One racer moves; the ghost sees the move masked, and nothing it must not see."""
    ghost.audit()
    answer = await mover.move(rng, deal)
    event = await ghost.client.expect("spectate_event", v=answer["v"])
    assert event["view"] == expected_view(answer["view"], racers)
    ghost.audit()
    return event


async def ghost_a_rated_race(
    rng: random.Random, ann: Racer, bob: Racer, ghost: Ghost, watch: dict[str, Any]
) -> None:
    """Ann races Bob, her second identity watching: Bob gets ahead, deals the reserve, both
    play on; at the end the ghost may replay the real boards."""
    racers = [ann, bob]
    for _ in range(4):
        await bob.move(rng)
    await bob.move(rng, deal=True)  # three cards Ann has never seen
    assert bob.uncovered - ann.uncovered, "Bob should be ahead of Ann"
    snapshot = await ghost.client.request(watch)
    assert snapshot["type"] == "spectate", snapshot
    assert snapshot["options"]["rated"] is True
    views = {r["player"]: r["view"] for r in snapshot["racers"]}
    assert views == {r.client.player: expected_view(r.view, racers) for r in racers}
    assert views[bob.client.player] != bob.view, "the snapshot should hide what only Bob has seen"
    ghost.audit()
    masked = 0
    for turn in range(16):
        mover = bob if turn % 2 else ann
        event = await play_and_watch(rng, racers, ghost, mover, deal=mover is ann and turn == 8)
        masked += event["view"] != mover.view
    assert masked, "no event was masked: the race never tested anything"
    await end_and_replay(ghost, ann, bob)


async def end_and_replay(ghost: Ghost, ann: Racer, bob: Racer) -> None:
    """Bob resigns first: only Ann still plays, so only her cards are shown. Then she
    resigns (her part over, nothing of her board is left to hide: the frames after it are
    not audited) and the race is over: its replay shows the real boards."""
    resigned = await bob.resign()
    event = await ghost.client.expect("spectate_event", v=resigned["v"])
    assert event["view"] == masked_view(bob.view, frozenset(ann.uncovered))
    ghost.audit()
    await ann.resign()
    await ghost.client.expect("race_ended")
    replay = {"type": "replay_positions", "game": ann.game, "player": bob.client.player}
    positions = await ghost.client.request(replay)
    assert positions["type"] == "replay_positions_info", positions
    assert positions["views"] == bob.views, "the real boards, as the racer saw them"


async def test_a_second_identity_watching_its_racers_rated_race_never_gets_a_card_face_down_for_it(
    start_node: NodeFactory, open_client: Any
) -> None:
    node = start_node(test_deals=DEAL)
    ann: Client = await open_client(node, "Ann")
    bob: Client = await open_client(node, "Bob")
    ghost: Client = await open_client(node, "Ann's friend")
    room, ann_start, bob_start = await start_race(ann, bob, {"rated": True})
    assert ann_start["options"]["rated"] is True
    own = Racer(ann, ann_start)
    watch = {"type": "watch", "room": room["room"]}
    await ghost_a_rated_race(random.Random(3), own, Racer(bob, bob_start), Ghost(ghost, own), watch)


async def test_a_second_identity_on_another_node_never_gets_its_racers_face_down_cards_either(
    start_node: NodeFactory, open_client: Any
) -> None:
    first = start_node(test_deals=DEAL)
    second = start_node(test_deals=DEAL)  # whichever node starts the match
    ann: Client = await open_client(first, "Ann")
    bob: Client = await open_client(first, "Bob", fmt=JSON)
    for client in (ann, bob):
        queued = await client.request({"type": "queue_join", "variant": "scorpion"})
        assert queued["rated"] is True
    ann_start = await ann.expect("race_started", timeout=15)
    bob_start = await bob.expect("race_started", timeout=15)
    ghost: Client = await open_client(second, "Ann's friend")
    listed = await ghost.request({"type": "games_list"})
    assert ann_start["game"] in [g["game"] for g in listed["games"]]
    own = Racer(ann, ann_start)
    rival = Racer(bob, bob_start)
    watch = {"type": "watch", "game": ann_start["game"]}
    rng = random.Random(4)
    # As on one node, with a drop in the middle: the events missed come back in a
    # spectate_batch, masked as of now.
    racers = [own, rival]
    watcher = Ghost(ghost, own)
    for _ in range(4):
        await rival.move(rng)
    await rival.move(rng, deal=True)
    snapshot = await ghost.request(watch)
    assert snapshot["type"] == "spectate", snapshot
    views = {r["player"]: r["view"] for r in snapshot["racers"]}
    assert views == {r.client.player: expected_view(r.view, racers) for r in racers}
    keeper: Client = await open_client(second, "Fay")  # keeps the game on the second node
    await keeper.request(watch)
    seen = snapshot["v"]
    for turn in range(6):
        seen = (await play_and_watch(rng, racers, watcher, rival if turn % 2 else own))["v"]
    await ghost.ws.close()
    for turn in range(6):
        await (rival if turn % 2 else own).move(rng)
        await keeper.expect("spectate_event", v=(rival if turn % 2 else own).v)
    back: Client = await open_client(second, "Ann's friend", token=ghost.token)
    returned = Ghost(back, own)
    batch = await back.request({**watch, "v": seen})
    assert batch["type"] == "spectate_batch", batch
    assert [e["v"] for e in batch["events"]] == list(range(seen + 1, seen + 7))
    latest = {r["player"]: r["view"] for r in snapshot["racers"]}
    for event in batch["events"]:
        latest[event["player"]] = event["view"]
    assert latest == {r.client.player: expected_view(r.view, racers) for r in racers}
    returned.audit()
    for turn in range(4):
        await play_and_watch(rng, racers, returned, rival if turn % 2 else own)
    await end_and_replay(returned, own, rival)


async def test_an_unrated_friend_race_is_watched_as_it_is(start_node: NodeFactory, open_client: Any) -> None:
    node = start_node(test_deals=DEAL)
    ann: Client = await open_client(node, "Ann")
    bob: Client = await open_client(node, "Bob")
    eve: Client = await open_client(node, "Eve")
    room, ann_start, bob_start = await start_race(ann, bob, {"undo": True})
    assert ann_start["options"]["rated"] is False
    own, rival = Racer(ann, ann_start), Racer(bob, bob_start)
    rng = random.Random(6)
    await rival.move(rng)
    await rival.move(rng, deal=True)
    snapshot = await eve.request({"type": "watch", "room": room["room"]})
    assert {r["player"]: r["view"] for r in snapshot["racers"]} == {
        ann.player: own.view,
        bob.player: rival.view,
    }
    answer = await rival.move(rng)
    event = await eve.expect("spectate_event", v=answer["v"])
    assert event["view"] == answer["view"]
    assert seen_by(event["view"]) - own.uncovered, "cards Ann has not uncovered, shown as they are"


async def test_a_ranked_daily_attempt_is_watched_only_by_a_player_whose_own_attempt_is_over(
    local_node: Any, open_client: Any
) -> None:
    node = await local_node()
    ann: Client = await open_client(node, "Ann")
    bob: Client = await open_client(node, "Bob")
    watcher: Client = await open_client(node, "Bob", token=bob.token)  # Bob's other device
    attempt = await ann.request({"type": "daily_start"})
    assert attempt["mode"] == "daily"
    game = attempt["game"]

    async def refused() -> None:
        listed = await watcher.request({"type": "games_list"})
        assert game not in [g["game"] for g in listed["games"]]
        answer = await watcher.request({"type": "watch", "game": game})
        assert answer["type"] == "error" and answer["code"] == "spectating_forbidden", answer
        assert "daily" in answer["message"] and "your own ranked attempt" in answer["message"]

    await refused()  # no attempt of his own yet
    own = await bob.request({"type": "daily_start"})
    assert own["mode"] == "daily"
    await refused()  # his attempt is running
    await bob.request({"type": "resign", "game": own["game"], "v": own["v"]})
    await bob.expect("race_ended")
    watching = await watcher.request({"type": "watch", "game": game})
    assert watching["type"] == "spectate", watching
    assert [r["view"] for r in watching["racers"]] == [attempt["view"]]
