"""Races between real server processes and scripted clients."""

from __future__ import annotations

import asyncio
import urllib.request
from typing import Any

import pytest

from protocol.game import Board, card_text, move_json
from protocol.wire.codec import JSON, MSGPACK

from .conftest import Client, NodeFactory

pytestmark = pytest.mark.asyncio

DEAL = 1234567890123


async def friend_race(
    start_node: NodeFactory,
    open_client: Any,
    *,
    options: dict[str, Any] | None = None,
    nodes: int = 1,
    deal: int = DEAL,
) -> tuple[Client, Client, dict[str, Any], dict[str, Any]]:
    first = start_node(test_deals=deal)
    second = start_node() if nodes == 2 else first
    ann: Client = await open_client(first, "Ann")
    bob: Client = await open_client(second, "Bob", fmt=JSON)
    room = await ann.request(
        {"type": "room_create", "variant": "scorpion", "options": options or {"undo": True, "hints": True}}
    )
    assert room["type"] == "room", room
    joined = await bob.request({"type": "room_join", "room": room["room"]})
    assert joined["type"] == "room" and len(joined["players"]) == 2
    assert (await bob.request({"type": "ready", "ready": True}))["type"] == "room"
    await ann.send({"type": "room_start"})
    countdown = await bob.expect("countdown")
    assert countdown["room"] == room["room"]
    ann_start = await ann.expect("race_started")
    bob_start = await bob.expect("race_started")
    return ann, bob, ann_start, bob_start


async def test_both_racers_get_the_same_deal_and_their_own_view(
    start_node: NodeFactory, open_client: Any
) -> None:
    _ann, _bob, ann_start, bob_start = await friend_race(start_node, open_client)
    assert ann_start["game"] == bob_start["game"]
    assert ann_start["view"] == bob_start["view"]
    assert ann_start["commitment"] == bob_start["commitment"]
    expected = Board.new("scorpion", DEAL)
    from protocol.game import player_view

    assert ann_start["view"] == player_view(expected).as_dict()


async def test_a_legal_move_is_accepted_and_the_rival_sees_progress_only(
    start_node: NodeFactory, open_client: Any
) -> None:
    ann, bob, start, _ = await friend_race(start_node, open_client)
    board = Board.new("scorpion", DEAL)
    move = next(m for m in board.legal_moves() if not m.is_deal)
    answer = await ann.request(
        {"type": "move", "game": start["game"], "v": start["v"], "move": move_json(move)}
    )
    assert answer["type"] == "accepted", answer
    board.push(move)
    from protocol.game import player_view

    assert answer["view"] == player_view(board).as_dict()
    progress = await bob.expect("progress", player=ann.player)
    assert progress["v"] == answer["v"]
    assert "view" not in progress
    assert progress["summary"]["moves"] == 1


async def test_the_same_move_from_two_tabs_on_two_nodes_is_applied_once(
    start_node: NodeFactory, open_client: Any
) -> None:
    ann, bob, start, _ = await friend_race(start_node, open_client, nodes=2)
    tab = await open_client(bob.node, "Ann", token=ann.token)  # Ann's second tab, on the other node
    assert tab.player == ann.player
    resumed = await tab.request({"type": "resume", "game": start["game"], "v": start["v"]})
    assert resumed["type"] in ("batch", "snapshot"), resumed
    board = Board.new("scorpion", DEAL)
    move = next(m for m in board.legal_moves() if not m.is_deal)
    request = {"type": "move", "game": start["game"], "v": start["v"], "move": move_json(move)}
    for _ in range(3):  # the same move, at the same moment, from both tabs
        answers = await asyncio.gather(ann.request_unchecked(request), tab.request_unchecked(request))
        kinds = sorted(a["type"] if a["type"] == "accepted" else a["code"] for a in answers)
        assert kinds == ["accepted", "stale_version"], answers
        request["v"] = next(a for a in answers if a["type"] == "accepted")["v"]
        board.push(move)
        move = next(m for m in board.legal_moves() if not m.is_deal)
        request["move"] = move_json(move)
    progress = await bob.expect("progress", player=ann.player, v=request["v"])
    assert progress["summary"]["moves"] == 3  # three moves applied, not six


async def test_bad_requests_get_their_error_codes(start_node: NodeFactory, open_client: Any) -> None:
    ann, _bob, start, _ = await friend_race(start_node, open_client)
    game = start["game"]
    board = Board.new("scorpion", DEAL)
    hidden = card_text(board.columns[0][0])  # face down in column 1
    elsewhere = card_text(board.columns[6][-1])  # face up in column 7
    answers = []
    for card in (hidden, elsewhere):
        move = {"card": card, "from": 1, "to": 2}
        illegal = await ann.request({"type": "move", "game": game, "v": start["v"], "move": move})
        assert illegal["type"] == "error" and illegal["code"] == "illegal_move"
        answers.append(illegal["message"].replace(card, "<card>"))
    assert answers[0] == answers[1], "a face-down card must be refused exactly like an absent one"
    move = next(m for m in board.legal_moves() if not m.is_deal)
    ok = await ann.request({"type": "move", "game": game, "v": start["v"], "move": move_json(move)})
    assert ok["type"] == "accepted"
    board.push(move)
    again = next(m for m in board.legal_moves())
    stale = await ann.request({"type": "move", "game": game, "v": start["v"], "move": move_json(again)})
    assert stale["type"] == "error" and stale["code"] == "stale_version"
    unknown = await ann.request({"type": "move", "game": "gnothere", "v": 1, "move": move_json(again)})
    assert unknown["code"] in ("no_such_game",)
    bad = await ann.request_unchecked({"type": "move", "game": game, "v": 1})
    assert bad["code"] == "bad_field"


async def test_a_move_before_hello_and_garbage_frames_are_refused_but_the_connection_goes_on(
    start_node: NodeFactory, open_client: Any
) -> None:
    node = start_node()
    from websockets.asyncio.client import connect

    from protocol.wire.codec import decode_dict, encode
    from protocol.wire.message import Ping

    async with connect(node.url, subprotocols=[MSGPACK]) as ws:  # type: ignore[list-item]
        await ws.send(b"\xc1\xff garbage")
        error = decode_dict(await ws.recv(), MSGPACK)
        assert error["code"] == "bad_frame"
        await ws.send(encode(Ping(ref=1), MSGPACK))
        pong = decode_dict(await ws.recv(), MSGPACK)
        assert pong["type"] == "pong"
        await ws.send(b"\x00" * 9000)
        big = decode_dict(await ws.recv(), MSGPACK)
        assert big["code"] == "too_large"
        await ws.send("text frame on a binary subprotocol")
        wrong = decode_dict(await ws.recv(), MSGPACK)
        assert wrong["code"] == "bad_frame"


async def test_two_racers_on_two_nodes_see_each_others_progress(
    start_node: NodeFactory, open_client: Any
) -> None:
    ann, bob, start, bob_start = await friend_race(start_node, open_client, nodes=2)
    board = Board.new("scorpion", DEAL)
    move = next(m for m in board.legal_moves() if not m.is_deal)
    answer = await bob.request(
        {"type": "move", "game": start["game"], "v": bob_start["v"], "move": move_json(move)}
    )
    assert answer["type"] == "accepted"
    seen = await ann.expect("progress", player=bob.player)
    assert seen["summary"]["moves"] == 1


async def test_a_resign_by_both_ends_the_race_and_reveals_the_deal(
    start_node: NodeFactory, open_client: Any
) -> None:
    ann, bob, start, _ = await friend_race(start_node, open_client)
    game = start["game"]
    assert (await ann.request({"type": "resign", "game": game, "v": start["v"]}))["status"] == "resigned"
    progress = await bob.expect("progress", player=ann.player)
    after = await bob.request({"type": "resign", "game": game, "v": progress["v"]})
    assert after["type"] == "accepted" and after["status"] == "resigned"
    ended = await ann.expect("race_ended")
    assert int(ended["number"]) == DEAL
    import hashlib

    assert hashlib.sha256(f"{ended['number']}:{ended['salt']}".encode()).hexdigest() == start["commitment"]
    late = await ann.request({"type": "move", "game": game, "v": ended["v"], "move": {"deal": True}})
    assert late["type"] == "error"
    await asyncio.sleep(0)


async def test_the_end_of_a_race_on_a_deal_number_past_64_bits_reaches_the_other_node_exactly(
    start_node: NodeFactory, open_client: Any
) -> None:
    # Most secret deal numbers are above 2**64. Bob resigns last, so his node ends the race
    # and Ann hears of it over pub/sub: the number must come through exact.
    number = 99_999_999_999_999_999_989
    ann, bob, start, _ = await friend_race(start_node, open_client, nodes=2, deal=number)
    game = start["game"]
    assert (await ann.request({"type": "resign", "game": game, "v": start["v"]}))["type"] == "accepted"
    progress = await bob.expect("progress", player=ann.player)
    assert (await bob.request({"type": "resign", "game": game, "v": progress["v"]}))["type"] == "accepted"
    for client in (ann, bob):
        ended = await client.expect("race_ended")
        assert int(ended["number"]) == number
    # And a racer who resumes reads it from the log, just as exact.
    again = await ann.request({"type": "resume", "game": game, "v": start["v"]})
    assert again["type"] == "batch", again
    assert again["events"][-1]["type"] == "race_ended"
    assert int(again["events"][-1]["number"]) == number


def winnable_deal() -> tuple[int, list[Any]]:
    """Return a large deal number the solver proves winnable, with its winning line."""
    from protocol.solver import Budget, Verdict, solve_deal

    for number in range(10**15, 10**15 + 200):
        solution = solve_deal("scorpion", number, budget=Budget(nodes=50_000))
        if solution.verdict is Verdict.WINNABLE:
            return number, list(solution.moves)
    raise AssertionError("no winnable deal found in range")


async def play_line(client: Client, game: str, version: int, moves: list[Any]) -> dict[str, Any]:
    answer: dict[str, Any] = {}
    for move in moves:
        answer = await client.request({"type": "move", "game": game, "v": version, "move": move_json(move)})
        assert answer["type"] == "accepted", answer
        version = answer["v"]
    return answer


async def test_two_scripted_clients_race_to_a_finish_on_a_known_deal(
    start_node: NodeFactory, open_client: Any
) -> None:
    number, line = winnable_deal()
    ann, bob, start, _bob_start = await friend_race(start_node, open_client, deal=number)
    final = await play_line(ann, start["game"], start["v"], line)
    assert final["status"] == "finished" and final["summary"]["runs"] == 4
    progress = await bob.expect("progress", player=ann.player, status="finished")
    bob_final = await play_line(bob, start["game"], progress["v"], line)
    assert bob_final["status"] == "finished"
    ended = await ann.expect("race_ended")
    first, second = ended["standings"]
    assert first["player"] == ann.player and first["rank"] == 1
    # level in score and ending they share the rank, listed by who finished first
    assert second["player"] == bob.player
    assert second["rank"] == (1 if second["score"] == first["score"] else 2)
    for row in ended["standings"]:
        assert row["score"] == 400 + 500 + max(0, 1200 - row["elapsed"])
    assert int(ended["number"]) == number
    replayed = Board.new("scorpion", int(ended["number"]))
    replayed.replay(line)
    assert replayed.is_won()


CARD_RE = __import__("re").compile(r"(?<![A-Za-z0-9])([A2-9TJQK][CDHS])(?![A-Za-z0-9])|([A2-9TJQK][CDHS]):")


def card_texts(value: Any) -> set[str]:
    """Return every card text that appears anywhere in a decoded message."""
    found: set[str] = set()
    if isinstance(value, str):
        for match in CARD_RE.finditer(value):
            found.add(match.group(1) or match.group(2))
    elif isinstance(value, dict):
        for key, item in value.items():
            found |= card_texts(key) | card_texts(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            found |= card_texts(item)
    return found


def audit(client: Client, board: Board, start: int, number: int) -> int:
    """Check every frame received from index ``start`` against the receiver's own board."""
    from protocol.wire.codec import decode_dict

    hidden = {card_text(c) for col, down in zip(board.columns, board.down, strict=True) for c in col[:down]}
    hidden |= {card_text(c) for c in board.stock}
    for frame in client.frames[start:]:
        data = decode_dict(frame, client.fmt, limit=1 << 22)  # type: ignore[arg-type]
        leaked = card_texts(data) & hidden
        assert not leaked, f"{data['type']} frame shows face-down {leaked}"
        if data["type"] != "race_ended":
            assert str(number) not in str(data), "deal number sent before the end"
    return len(client.frames)


async def test_no_frame_ever_reveals_a_face_down_card_or_the_deal_number_before_the_end(
    start_node: NodeFactory, open_client: Any
) -> None:
    import random

    rng = random.Random(7)
    for race in range(3):
        number = 5_000_000_000 + race
        ann, bob, start, bob_start = await friend_race(start_node, open_client, deal=number)
        boards = {"ann": Board.new("scorpion", number), "bob": Board.new("scorpion", number)}
        clients = {"ann": ann, "bob": bob}
        versions = {"ann": start["v"], "bob": bob_start["v"]}
        checked = {"ann": 0, "bob": 0}

        for _ in range(40):
            for who in ("ann", "bob"):
                board = boards[who]
                moves = board.legal_moves()
                if not moves or board.is_won():
                    continue
                if board.move_stack and rng.random() < 0.15:
                    answer = await clients[who].request(
                        {"type": "undo", "game": start["game"], "v": versions[who]}
                    )
                    if answer["type"] == "accepted":
                        board.pop()
                else:
                    move = rng.choice(moves)
                    answer = await clients[who].request(
                        {"type": "move", "game": start["game"], "v": versions[who], "move": move_json(move)}
                    )
                    assert answer["type"] == "accepted", answer
                    board.push(move)
                versions[who] = answer.get("v", versions[who])
                for receiver in ("ann", "bob"):
                    checked[receiver] = audit(clients[receiver], boards[receiver], checked[receiver], number)
        for who in ("ann", "bob"):
            if boards[who].status().value == "in_play":
                await clients[who].request({"type": "resign", "game": start["game"], "v": versions[who]})
        await ann.expect("race_ended")
        await bob.expect("race_ended")
        for receiver in ("ann", "bob"):
            audit(clients[receiver], boards[receiver], checked[receiver], number)
        await ann.close()
        await bob.close()


async def _end_by_resigning(game: str, *racers: Client, v: int = 1) -> None:
    for racer in racers:
        answer = await racer.request({"type": "resign", "game": game, "v": v})
        assert answer["type"] == "accepted", answer
        v = answer["v"]
    for racer in racers:
        await racer.expect("race_ended", game=game)


async def test_racers_ask_for_a_rematch_and_race_again_in_a_new_room(
    start_node: NodeFactory, open_client: Any
) -> None:
    options = {"undo": False, "hints": True, "reserve_rule": "when-stuck", "spectator_delay": 5}
    ann, bob, start, _ = await friend_race(start_node, open_client, options=options, nodes=2)
    game = start["game"]
    # Not while the race is on, and only for its own racers.
    early = await ann.request({"type": "rematch", "game": game})
    assert early["type"] == "error" and early["code"] == "not_allowed", early
    await _end_by_resigning(game, ann, bob)
    carol = await open_client(start_node(), "Carol")
    stranger = await carol.request({"type": "rematch", "game": game})
    assert stranger["type"] == "error" and stranger["code"] == "not_your_game", stranger
    missing = await carol.request({"type": "rematch", "game": "nosuchgame"})
    assert missing["type"] == "error" and missing["code"] == "no_such_game", missing

    # Ann asks: a new room with the race's variant and options, Ann its host; Bob (on the
    # other node) is told where it is.
    room = await ann.request({"type": "rematch", "game": game})
    assert room["type"] == "room", room
    assert room["room"] != start.get("room") and room["host"] == ann.player
    assert room["variant"] == "scorpion" and room["options"] == start["options"]
    assert [p["name"] for p in room["players"]] == ["Ann"]
    offer = await bob.expect("rematch_offered")
    assert offer == {
        "type": "rematch_offered",
        "game": game,
        "room": room["room"],
        "player": ann.player,
        "name": "Ann",
    }
    # Bob asks too and lands in the same room; a second offer is not sent.
    joined = await bob.request({"type": "rematch", "game": game})
    assert joined["type"] == "room" and joined["room"] == room["room"], joined
    assert [p["name"] for p in joined["players"]] == ["Ann", "Bob"]
    assert (await ann.expect("room"))["players"][1]["name"] == "Bob"
    assert (await bob.request({"type": "ready", "ready": True}))["type"] == "room"
    await ann.send({"type": "room_start"})
    again = await bob.expect("race_started")
    assert again["game"] != game and again["room"] == room["room"]
    assert again["options"] == start["options"]
    assert {r["name"] for r in again["roster"]} == {"Ann", "Bob"}
    assert (await ann.expect("race_started"))["game"] == again["game"]
    with pytest.raises(AssertionError):
        await ann.expect("rematch_offered", timeout=0.5)
    # The live games list says which race this one is a rematch of, for its spectators.
    listed = await carol.request({"type": "games_list"})
    entry = next(g for g in listed["games"] if g["game"] == again["game"])
    assert entry["rematch_of"] == game and entry["room"] == room["room"]

    # After the rematch started, asking again for the first race opens a fresh room.
    await _end_by_resigning(again["game"], ann, bob)
    fresh = await bob.request({"type": "rematch", "game": game})
    assert fresh["type"] == "room" and fresh["room"] != room["room"] and fresh["host"] == bob.player
    assert (await ann.expect("rematch_offered"))["room"] == fresh["room"]


async def test_two_racers_asking_for_a_rematch_at_once_meet_in_one_room(
    start_node: NodeFactory, open_client: Any
) -> None:
    ann, bob, start, _ = await friend_race(start_node, open_client, nodes=2)
    await _end_by_resigning(start["game"], ann, bob)
    first, second = await asyncio.gather(
        ann.request({"type": "rematch", "game": start["game"]}),
        bob.request({"type": "rematch", "game": start["game"]}),
    )
    assert first["type"] == second["type"] == "room", (first, second)
    assert first["room"] == second["room"]
    final = first if len(first["players"]) == 2 else second
    assert sorted(p["name"] for p in final["players"]) == ["Ann", "Bob"]


async def test_a_rematch_is_refused_for_a_solo_game(start_node: NodeFactory, open_client: Any) -> None:
    node = start_node(test_deals=DEAL)
    ann = await open_client(node, "Ann")
    started = await ann.request({"type": "solo_new", "variant": "scorpion"})
    game = started["game"]
    await _end_by_resigning(game, ann, v=started["v"])
    refused = await ann.request({"type": "rematch", "game": game})
    assert refused["type"] == "error" and refused["code"] == "not_allowed", refused
    assert "solo games have New game and Replay" in refused["message"]


async def test_a_quick_match_may_be_raced_again_by_its_two_players(
    start_node: NodeFactory, open_client: Any
) -> None:
    node = start_node()
    ann: Client = await open_client(node, "Ann", account=True)
    bob: Client = await open_client(node, "Bob", account=True)
    for racer in (ann, bob):
        assert (await racer.request({"type": "queue_join", "variant": "wasp"}))["type"] == "queued"
    start = await ann.expect("race_started")
    await bob.expect("race_started")
    assert "room" not in start
    await _end_by_resigning(start["game"], ann, bob)
    room = await bob.request({"type": "rematch", "game": start["game"]})
    assert room["type"] == "room" and room["variant"] == "wasp" and room["max_players"] == 2, room
    assert room["options"] == start["options"]
    offer = await ann.expect("rematch_offered")
    assert offer["room"] == room["room"] and offer["name"] == "Bob"
    joined = await ann.request({"type": "room_join", "room": offer["room"]})
    assert joined["type"] == "room" and len(joined["players"]) == 2

    def metrics() -> str:
        with urllib.request.urlopen(f"http://127.0.0.1:{node.port}/metrics", timeout=5) as response:
            return str(response.read().decode())

    assert "scorpion_rematches_total 1.0" in await asyncio.to_thread(metrics)


async def test_a_racer_may_open_only_a_few_rematch_rooms_for_one_race(
    start_node: NodeFactory, open_client: Any
) -> None:
    ann, bob, start, _ = await friend_race(start_node, open_client)
    await _end_by_resigning(start["game"], ann, bob)
    codes = []
    for _ in range(3):  # each room Ann opens and leaves tells Bob again
        room = await ann.request({"type": "rematch", "game": start["game"]})
        assert room["type"] == "room", room
        codes.append(room["room"])
        assert (await bob.expect("rematch_offered"))["room"] == room["room"]
        assert (await ann.request({"type": "room_leave"}))["type"] == "ok"
    assert len(set(codes)) == 3
    refused = await ann.request({"type": "rematch", "game": start["game"]})
    assert refused["type"] == "error" and refused["code"] == "not_allowed", refused
    assert "opened 3 rematch rooms" in refused["message"]
    # Bob may still open one, and Ann may join it.
    room = await bob.request({"type": "rematch", "game": start["game"]})
    assert room["type"] == "room" and room["host"] == bob.player
    joined = await ann.request({"type": "rematch", "game": start["game"]})
    assert joined["type"] == "room" and joined["room"] == room["room"]


async def test_a_rematch_room_of_a_three_racer_race_keeps_the_first_room_s_size(
    start_node: NodeFactory, open_client: Any
) -> None:
    node = start_node(test_deals=DEAL)
    ann, bob, cat = [await open_client(node, name) for name in ("Ann", "Bob", "Cat")]
    room = await ann.request({"type": "room_create", "variant": "scorpion-ii", "max_players": 4})
    for guest in (bob, cat):
        assert (await guest.request({"type": "room_join", "room": room["room"]}))["type"] == "room"
        assert (await guest.request({"type": "ready", "ready": True}))["type"] == "room"
    await ann.send({"type": "room_start"})
    start = await cat.expect("race_started")
    for other in (ann, bob):  # a racer may act once the race has started for them, not before
        assert (await other.expect("race_started"))["game"] == start["game"]
    await _end_by_resigning(start["game"], ann, bob, cat)
    again = await cat.request({"type": "rematch", "game": start["game"]})
    assert again["type"] == "room" and again["max_players"] == 4 and again["variant"] == "scorpion-ii", again
    for other in (ann, bob):
        offer = await other.expect("rematch_offered")
        assert offer["room"] == again["room"] and offer["name"] == "Cat"
        joined = await other.request({"type": "rematch", "game": start["game"]})
        assert joined["room"] == again["room"]
    assert [p["name"] for p in joined["players"]] == ["Cat", "Ann", "Bob"]


async def test_every_rival_on_a_node_is_sent_one_encoding_of_a_racer_s_move(
    local_node: Any, open_client: Any
) -> None:
    node = await local_node(test_deals=str(DEAL))
    ann, bob, cat = [await open_client(node, name) for name in ("Ann", "Bob", "Cat")]
    room = await ann.request({"type": "room_create", "variant": "scorpion", "max_players": 3})
    for guest in (bob, cat):
        assert (await guest.request({"type": "room_join", "room": room["room"]}))["type"] == "room"
        assert (await guest.request({"type": "ready", "ready": True}))["type"] == "room"
    await ann.send({"type": "room_start"})
    start = await ann.expect("race_started")
    for other in (bob, cat):
        assert (await other.expect("race_started"))["game"] == start["game"]
    move = next(m for m in Board.new("scorpion", DEAL).legal_moves() if not m.is_deal)
    accepted = await ann.request({"type": "move", "game": start["game"], "v": 1, "move": move_json(move)})
    assert accepted["type"] == "accepted", accepted
    seen = [await rival.expect("progress") for rival in (bob, cat)]
    assert seen[0] == seen[1] and seen[0]["player"] == ann.player and seen[0]["v"] == accepted["v"]
    # Both rivals were written the one frame encoded for them (and none for spectators).
    feed = node.server.node.feed
    encoded = [key for key in feed.frames_sent if key[:2] == (start["game"], accepted["v"])]
    assert encoded == [(start["game"], accepted["v"], False, MSGPACK)]
