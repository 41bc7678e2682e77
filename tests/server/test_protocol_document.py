"""docs/protocol.md as a contract: what it shows is what a real server sends and answers.

A client author writes from the document alone, so its examples must be what the server
really says, field for field, and every error code it lists must be what the input it
names really gets, carrying the request's ``ref``.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import msgpack
import msgspec
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from protocol.game import Board, card_text, move_json
from protocol.solver import solve_deal
from protocol.wire.codec import JSON, MSGPACK, decode_dict
from protocol.wire.error import ErrorCode
from protocol.wire.flow import STRIKES_BEFORE_CLOSE
from protocol.wire.message import MESSAGES, SERVER_TYPES
from server.fairplay import ban

from .conftest import PASSWORD, Client, start_race

pytestmark = pytest.mark.asyncio

DOC = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"
DEAL = 1234567890123
WINNABLE = 1_000_000_000_007  # the solver wins it with a 52-move line, every card known after 51


def doc_text() -> str:
    return DOC.read_text(encoding="utf-8")


def doc_examples() -> list[dict[str, Any]]:
    """Return every JSON example of the document, client and server."""
    return [json.loads(b) for b in re.findall(r"```json\n(.*?)\n```", doc_text(), flags=re.S)]


def section_of(kind: str) -> str:
    """Return the document's text about one message type: from its heading to the next."""
    text = doc_text()
    # The heading names the type before its dash: "#### `ping` (C→S) / `pong` (S→C)".
    heading = re.search(rf"^#### [^—]*`{re.escape(kind)}`.*$", text, flags=re.M)
    assert heading, f"docs/protocol.md has no section for {kind!r}"
    following = re.search(r"^#{2,4} ", text[heading.end() :], flags=re.M)
    return text[heading.start() : heading.end() + (following.start() if following else len(text))]


def required_fields(kind: str) -> set[str]:
    """Return the wire names of a message's fields that have no default."""
    return {f.encode_name for f in msgspec.structs.fields(MESSAGES[kind]) if f.required}


def received(*clients: Client) -> dict[str, list[dict[str, Any]]]:
    """Return every frame the clients received, by type."""
    frames: dict[str, list[dict[str, Any]]] = {}
    for client in clients:
        for frame in client.frames:
            data = decode_dict(frame, client.fmt, limit=1 << 22)  # type: ignore[arg-type]
            frames.setdefault(data["type"], []).append(data)
    return frames


async def test_handshakes_on_another_path_or_offering_no_subprotocol_are_refused_clearly(
    local_node: Any,
) -> None:
    node = await local_node()
    base = node.url.rstrip("/")
    with pytest.raises(InvalidStatus) as wrong_path:
        await connect(f"{base}/ws", subprotocols=[MSGPACK])  # type: ignore[list-item]
    assert wrong_path.value.response.status_code == 404
    assert b"connect to /" in wrong_path.value.response.body
    with pytest.raises(InvalidStatus) as none_offered:
        await connect(node.url)
    assert none_offered.value.response.status_code == 400
    assert MSGPACK.encode() in none_offered.value.response.body
    assert JSON.encode() in none_offered.value.response.body
    with pytest.raises(InvalidStatus) as unknown:
        await connect(node.url, subprotocols=["scorpion.v9.xml"])  # type: ignore[list-item]
    assert unknown.value.response.status_code == 400
    for offered in ([JSON, MSGPACK], [MSGPACK, JSON], ["scorpion.v9.xml", JSON]):
        async with connect(node.url, subprotocols=offered) as ws:  # type: ignore[arg-type]
            assert ws.subprotocol == next(p for p in offered if p in (JSON, MSGPACK))


async def test_every_server_example_of_the_document_matches_a_real_frame_field_for_field(
    local_node: Any, open_client: Any
) -> None:
    # The race and the quick match deal DEAL; Fay's solo game WINNABLE, for auto-finish.
    node = await local_node(test_deals=f"{DEAL},{DEAL},{WINNABLE}", spectator_tick=0.2, queue_timeout=1.0)
    ann: Client = await open_client(node, "Ann", account=True)
    bob: Client = await open_client(node, "Bob", fmt=JSON, account=True)
    eve: Client = await open_client(node, "Eve")
    carl: Client = await open_client(node, "Carl", account=True)
    assert (await ann.request({"type": "sessions"}))["type"] == "sessions_list"
    page_origin = {"Origin": node.url.replace("ws://", "http://").rstrip("/")}
    fay_page: Client = await open_client(node, "Fay", headers=page_origin, account=False)
    asked = await fay_page.request({"type": "passkey_options", "purpose": "register", "username": "fay_p"})
    assert asked["type"] == "passkey_challenge"
    await carl.request({"type": "games_list", "subscribe": True})
    await ann.request({"type": "ping"})
    room, start, bob_start = await start_race(ann, bob, {"rated": True})  # no undo, no hints
    game = start["game"]
    await carl.expect("games_update")
    assert (await eve.request({"type": "watch", "room": room["room"]}))["type"] == "spectate"
    board = Board.new("scorpion", DEAL)
    move = next(m for m in board.legal_moves() if not m.is_deal)
    accepted = await ann.request({"type": "move", "game": game, "v": start["v"], "move": move_json(move)})
    assert accepted["type"] == "accepted"
    await bob.expect("progress")
    await eve.expect("spectate_event")
    await ann.seen("spectators")
    assert (await eve.request({"type": "unwatch", "game": game}))["type"] == "ok"
    batch = await eve.request({"type": "watch", "game": game, "v": 1})
    assert batch["type"] == "spectate_batch"
    assert (await bob.request({"type": "resume", "game": game, "v": 1}))["type"] == "batch"
    await ann.request({"type": "resign", "game": game, "v": accepted["v"]})
    await bob.request({"type": "resign", "game": game, "v": bob_start["v"]})
    await ann.expect("race_ended")
    await bob.expect("race_ended")
    assert (await eve.request({"type": "replay", "game": game}))["type"] == "replay_log"
    positions = await eve.request({"type": "replay_positions", "game": game, "player": ann.player})
    assert positions["type"] == "replay_positions_info"
    await ann.expect("rating_change")
    assert (await bob.request({"type": "profile", "player": ann.player}))["type"] == "profile_info"
    assert (await bob.request({"type": "rating_board"}))["type"] == "rating_page"
    assert (await ann.request({"type": "rematch", "game": game}))["type"] == "room"
    await bob.expect("rematch_offered")
    # A challenge of the race, taken by Eve, on the board, its maker told.
    made = await ann.request({"type": "challenge_create", "game": game})
    assert made["type"] == "challenge", made
    taking = await eve.request({"type": "challenge_take", "code": made["code"]})
    assert taking["type"] == "race_started", taking
    await eve.request({"type": "resign", "game": taking["game"], "v": taking["v"]})
    await eve.expect("race_ended")
    await ann.expect("challenge_taken")
    assert (await bob.request({"type": "challenge_board", "code": made["code"]}))[
        "type"
    ] == "challenge_board_info"
    assert (await ann.request({"type": "challenge_list"}))["type"] == "challenge_list_info"
    # Quick match, and a player left waiting alone.
    dave: Client = await open_client(node, "Dave", account=True)
    assert (await carl.request({"type": "queue_join", "variant": "wasp"}))["type"] == "queued"
    await dave.request({"type": "queue_join", "variant": "wasp"})
    await carl.expect("match_found")
    fay: Client = await open_client(node, "Fay", account=True)
    await fay.request({"type": "queue_join", "variant": "three-blind-mice"})
    await fay.expect("queue_timeout", timeout=10)
    # Solo play, its snapshot on another device, the solver's help, and its analysis.
    solo = await fay.request({"type": "solo_new"})
    assert solo["type"] == "race_started"
    other: Client = await open_client(node, "Fay", token=fay.token)
    assert (await other.request({"type": "solo_resume", "game": solo["game"]}))["type"] == "snapshot"
    assert (await fay.request({"type": "saved_games"}))["type"] == "saved_games_list"
    assert (await fay.request({"type": "hint", "game": solo["game"], "v": solo["v"]}))["type"] == "hints"
    answer = await fay.request({"type": "winnable", "game": solo["game"], "v": solo["v"]})
    assert answer["type"] == "winnable_info", answer
    # Every card face up and the reserve dealt: Finish plays the rest and wins the game.
    line = solve_deal("scorpion", WINNABLE).moves
    version = solo["v"]
    for move in line[:-1]:
        step = {"type": "move", "game": solo["game"], "v": version, "move": move_json(move)}
        played = await fay.request(step)
        assert played["type"] == "accepted", played
        version = played["v"]
    finished = await fay.request({"type": "finish", "game": solo["game"], "v": version})
    assert finished["type"] == "finish_info" and finished["moves"] == 1, finished
    await fay.expect("analysis", timeout=60)
    # The daily, the boards, statistics, and forgetting a player.
    assert (await dave.request({"type": "daily_info"}))["type"] == "daily"
    assert (await dave.request({"type": "leaderboard"}))["type"] == "leaderboard_page"
    assert (await ann.request({"type": "stats"}))["type"] == "stats_info"
    assert (await ann.request({"type": "room_join", "room": "ZZZZZZ"}))["type"] == "error"
    assert (await dave.request({"type": "forget_me"}))["type"] == "forgotten"

    real = received(ann, bob, eve, carl, dave, fay, other, fay_page)
    examples = [e for e in doc_examples() if e["type"] in SERVER_TYPES]
    assert {e["type"] for e in examples} == set(SERVER_TYPES), "every server message has an example"
    for example in examples:
        kind = example["type"]
        frames = real.get(kind)
        assert frames, f"the scenario made the server send no {kind!r}"
        required = required_fields(kind) - {"type"}
        section = section_of(kind)
        assert required <= set(example), f"the example of {kind!r} lacks {sorted(required - set(example))}"
        for frame in frames:
            assert required <= set(frame), f"a real {kind!r} lacks {sorted(required - set(frame))}"
            undocumented = {k for k in frame if f"`{k}`" not in section and k not in example} - {"ref"}
            assert not undocumented, (
                f"{kind!r} frames carry fields the document does not list: {undocumented}"
            )
            for key in set(example) & set(frame) - {"ref"}:
                assert type(frame[key]) is type(example[key]) or frame[key] is None, (kind, key)


async def test_every_error_code_of_the_table_is_what_the_documented_input_gets_with_its_ref(
    local_node: Any, open_client: Any
) -> None:
    node = await local_node(test_deals=str(DEAL), countdown_seconds=0.1)
    store = node.server.store
    got: dict[str, dict[str, Any]] = {}

    async def ask(client: Client, message: dict[str, Any], code: str) -> None:
        answer = await client.request_unchecked(message)
        assert answer["type"] == "error" and answer["code"] == code, (message, answer)
        assert answer["ref"] == client.refs, f"{code}: the error does not carry the request's ref"
        got[code] = answer

    ann: Client = await open_client(node, "Ann")
    bob: Client = await open_client(node, "Bob")
    await ask(ann, {"type": "no_such_message"}, "unknown_type")
    # Accounts: ranked play, usernames, passwords.
    await ask(ann, {"type": "queue_join", "variant": "scorpion"}, "account_required")
    await ann.register("ann")
    await ask(bob, {"type": "register", "username": "ANN", "password": PASSWORD}, "username_taken")
    for _attempt in range(5):
        async with connect(node.url, subprotocols=[MSGPACK]) as raw:  # type: ignore[list-item]
            login = {"type": "login", "username": "ann", "password": "not the password", "ref": 7}
            await raw.send(msgpack.packb(login))
            answer = decode_dict(await raw.recv(), MSGPACK)
            assert answer["ref"] == 7
            got[answer["code"]] = answer
    assert {"bad_login", "login_locked"} <= set(got)
    await ask(bob, {"type": "passkey_register", "credential": "{}"}, "bad_passkey")  # no challenge asked
    await ask(ann, {"type": "ping", "extra": 1}, "bad_field")
    await ask(ann, {"type": "hello", "name": "Ann"}, "not_allowed")
    await ask(ann, {"type": "solo_started"}, "unavailable")  # a reserved name
    assert "retry_after_ms" not in got["unavailable"]  # that one will never be served
    await ask(ann, {"type": "queue_cancel"}, "not_allowed")  # not queued at all (section 7)
    await ask(ann, {"type": "room_join", "room": "ZZZZZZ"}, "no_such_room")
    await ask(ann, {"type": "challenge_take", "code": "ZZZZZZ"}, "no_such_challenge")
    await ask(ann, {"type": "profile", "player": "p0000000000000000"}, "no_such_player")
    await ask(ann, {"type": "watch", "room": "ZZZZZZ"}, "no_such_room")
    options = {"undo": False, "hints": False, "spectators": False}
    room = await ann.request({"type": "room_create", "variant": "scorpion", "options": options})
    await ask(bob, {"type": "watch", "room": room["room"]}, "not_started")
    await ask(ann, {"type": "room_start"}, "not_ready")  # alone
    await bob.request({"type": "room_join", "room": room["room"]})
    await ask(bob, {"type": "room_start"}, "not_host")
    await ask(ann, {"type": "room_start"}, "not_ready")  # Bob is not ready
    carl: Client = await open_client(node, "Carl")
    full = await carl.request({"type": "room_create", "variant": "wasp", "max_players": 2})
    await (await open_client(node, "Dan")).request({"type": "room_join", "room": full["room"]})
    await ask(await open_client(node, "Eve"), {"type": "room_join", "room": full["room"]}, "room_full")
    await bob.request({"type": "ready", "ready": True})
    await ann.request({"type": "room_start"})
    start = await ann.expect("race_started")
    await bob.expect("race_started")
    game, v = start["game"], start["v"]
    await ask(await open_client(node, "Gus"), {"type": "room_join", "room": room["room"]}, "room_started")
    board = Board.new("scorpion", DEAL)
    hidden = card_text(board.columns[0][0])
    illegal = {"card": hidden, "from": 1, "to": 2}
    await ask(ann, {"type": "move", "game": game, "v": v, "move": illegal}, "illegal_move")
    await ask(ann, {"type": "undo", "game": game, "v": v}, "undo_forbidden")
    await ask(ann, {"type": "hint", "game": game, "v": v}, "hints_forbidden")
    await ask(ann, {"type": "move", "game": "gnothere", "v": v, "move": {"deal": True}}, "no_such_game")
    move = next(m for m in board.legal_moves() if not m.is_deal)
    accepted = await ann.request({"type": "move", "game": game, "v": v, "move": move_json(move)})
    assert accepted["type"] == "accepted"
    await ask(ann, {"type": "deal", "game": game, "v": v}, "stale_version")
    outsider: Client = await open_client(node, "Hal")
    await ask(outsider, {"type": "watch", "game": game}, "spectating_forbidden")
    await ask(outsider, {"type": "analyze", "game": game}, "not_your_game")
    await ann.request({"type": "resign", "game": game, "v": accepted["v"]})
    await ask(ann, {"type": "move", "game": game, "v": accepted["v"], "move": {"deal": True}}, "game_over")
    # A queued player whose place a match just took, as the document describes.
    quick: Client = await open_client(node, "Ivy", account=True)
    await quick.request({"type": "queue_join", "variant": "wasp"})
    assert await store.leave_queues("wasp", quick.player, 0, 0)
    await ask(quick, {"type": "queue_cancel"}, "not_in_queue")
    # The daily: one ranked attempt.
    daily: Client = await open_client(node, "Jo", account=True)
    first = await daily.request({"type": "daily_start"})
    await daily.request({"type": "resign", "game": first["game"], "v": first["v"]})
    await daily.expect("race_ended")
    await ask(daily, {"type": "daily_start"}, "daily_already_played")
    await ask(daily, {"type": "hint", "game": first["game"], "v": first["v"]}, "not_allowed")
    # A player banned from ranked play (scorpion-admin ban): every ranked request refused.
    await ban(store, daily.player, "solver play", "moderator", 0)
    await ask(daily, {"type": "queue_join", "variant": "scorpion"}, "banned")
    # Before hello, a token that was never given out, and frames that cannot be read.
    ws = await connect(node.url, subprotocols=[MSGPACK])  # type: ignore[list-item]
    try:
        await ws.send(msgpack.packb({"type": "room_join", "room": "ZZZZZZ", "ref": "r1"}))
        before = decode_dict(await ws.recv(), MSGPACK)
        assert (before["code"], before["ref"]) == ("hello_first", "r1")
        got["hello_first"] = before
        await ws.send(msgpack.packb({"type": "hello", "name": "Kim", "token": "t" * 16, "ref": "r2"}))
        token = decode_dict(await ws.recv(), MSGPACK)
        assert (token["code"], token["ref"]) == ("bad_token", "r2")
        got["bad_token"] = token
        # Frames that cannot be read carry no ref (section 5): there is none to read.
        await ws.send(b"\xc1 not msgpack")
        got["bad_frame"] = decode_dict(await ws.recv(), MSGPACK)
        await ws.send(msgpack.packb({"type": "ping", "ref": "r3", "pad": "x" * 9000}))
        got["too_large"] = decode_dict(await ws.recv(), MSGPACK)
        assert "ref" not in got["bad_frame"] and "ref" not in got["too_large"]
    finally:
        await ws.close()

    async def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("a fault the server did not expect")

    store.stats = broken
    await ask(ann, {"type": "stats"}, "internal")

    async def lost_reply(*args: Any, **kwargs: Any) -> Any:
        raise ConnectionError("Redis closed the connection before answering")

    async def still_away() -> None:
        raise ConnectionError("Redis is still away")

    # Storage stays away until the test lets the probe find it (a probe comes 0.1 s after a
    # failure: on a loaded machine, sooner than the next request).
    answering, store.health.probe = store.health.probe, still_away
    store.act = lost_reply  # a move whose commit storage never confirmed
    bob_move = {"type": "move", "game": game, "v": v, "move": move_json(move)}
    await ask(bob, bob_move, "outcome_unknown")
    assert got["outcome_unknown"]["retry_after_ms"] > 0
    await ask(bob, bob_move, "unavailable")  # storage counts as down until it answers a probe
    assert got["unavailable"]["retry_after_ms"] > 0
    store.health.probe = answering
    while not store.health.up:  # the probe finds storage answering again
        await asyncio.sleep(0.05)
    # Over the message credits: refused with the request's ref, then closed with 1008.
    flood: Client = await open_client(node, "Lee")
    refs = [await flood.send({"type": "ping"}) for _ in range(100 + STRIKES_BEFORE_CLOSE)]
    limited = []
    while True:
        data = await flood.inbox.get()
        if data["type"] == "_closed":
            break
        if data.get("code") == "rate_limited":
            limited.append(data)
    assert limited and all(d["ref"] in refs for d in limited)
    got["rate_limited"] = limited[0]

    documented = set(re.findall(r"^\| `(\w+)` \| (?:client|server) \|", doc_text(), flags=re.M))
    assert documented == {code.value for code in ErrorCode}
    missing = documented - set(got)
    assert not missing, f"codes of the table no input provoked: {sorted(missing)}"


async def test_frames_over_8_kib_are_too_large_and_over_64_kib_close_the_connection(local_node: Any) -> None:
    from websockets.exceptions import ConnectionClosed

    node = await local_node()
    async with connect(node.url, subprotocols=[MSGPACK], max_size=1 << 22) as ws:  # type: ignore[list-item]
        await ws.send(b"\x00" * (64 * 1024))
        assert decode_dict(await ws.recv(), MSGPACK)["code"] == "too_large"  # and the connection goes on
        await ws.send(msgpack.packb({"type": "ping", "ref": 1}))
        assert decode_dict(await ws.recv(), MSGPACK)["type"] == "pong"
        await ws.send(b"\x00" * (64 * 1024 + 1))
        with pytest.raises(ConnectionClosed) as closed:
            await ws.recv()
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009
    assert "exceeds limit of 65536 bytes" in closed.value.rcvd.reason


async def test_the_operator_s_frame_limit_is_the_one_the_server_applies(local_node: Any) -> None:
    node = await local_node(max_frame=1024)
    async with connect(node.url, subprotocols=[MSGPACK]) as ws:  # type: ignore[list-item]
        await ws.send(msgpack.packb({"type": "ping", "ref": 1, "pad": "x" * 1100}))
        assert decode_dict(await ws.recv(), MSGPACK)["code"] == "too_large"
        await ws.send(msgpack.packb({"type": "ping", "ref": 2}))
        assert decode_dict(await ws.recv(), MSGPACK)["type"] == "pong"
