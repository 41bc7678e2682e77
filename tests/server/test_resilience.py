"""Resume, node failure, limits, shutdown and the HTTP endpoints, on real processes."""

from __future__ import annotations

import asyncio
import http.client
import signal
import socket
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from protocol.game import Board, move_json
from protocol.wire.codec import MSGPACK, decode_dict
from server.store import Store
from tests.conftest import RedisServer

from .conftest import Client, NodeFactory, start_race
from .test_race import DEAL, friend_race, winnable_deal

pytestmark = pytest.mark.asyncio


async def test_a_dropped_racer_resumes_with_exactly_the_missed_events(
    start_node: NodeFactory, open_client: Any
) -> None:
    ann, bob, start, bob_start = await friend_race(start_node, open_client)
    token, last = ann.token, start["v"]
    await ann.close()
    board = Board.new("scorpion", 1234567890123)
    versions = []
    version = bob_start["v"]
    for _ in range(3):
        move = next(m for m in board.legal_moves() if not m.is_deal)
        answer = await bob.request(
            {"type": "move", "game": start["game"], "v": version, "move": move_json(move)}
        )
        assert answer["type"] == "accepted"
        board.push(move)
        version = answer["v"]
        versions.append(version)
    again: Client = await open_client(bob.node, "Ann", token=token)
    batch = await again.request({"type": "resume", "game": start["game"], "v": last})
    assert batch["type"] == "batch"
    assert [e["v"] for e in batch["events"]] == versions
    assert all(e["type"] == "progress" and e["player"] == bob.player for e in batch["events"])
    assert batch["v"] == versions[-1]


async def local_race(
    local_node: Any, open_client: Any
) -> tuple[Any, Client, Client, dict[str, Any], dict[str, Any]]:
    """Start an in-process node and a race of Ann and Bob on it; return the node, both
    clients and both racers' ``race_started``."""
    node = await local_node(test_deals=str(DEAL))
    ann: Client = await open_client(node, "Ann")
    bob: Client = await open_client(node, "Bob")
    _room, start, bob_start = await start_race(ann, bob)
    return node, ann, bob, start, bob_start


async def test_a_racer_whose_answer_jumps_over_events_it_was_not_sent_gets_them_first(
    local_node: Any, open_client: Any
) -> None:
    # Bob's moves never reach Ann's connection (as when another node's events are lost to a
    # pub/sub outage); Ann's next answer is a version past them, so they are read from the
    # log and sent to her, in order, before that answer.
    node, ann, bob, start, bob_start = await local_race(local_node, open_client)
    game_id = start["game"]
    live = node.server.node.race.games[game_id]
    session = next(s for s in live.listeners if s.player == ann.player)
    live.listeners.discard(session)
    first = next(m for m in Board.new("scorpion", DEAL).legal_moves() if not m.is_deal)
    missed = []
    version = bob_start["v"]
    for move in (move_json(first), {"deal": True}):
        answer = await bob.request({"type": "move", "game": game_id, "v": version, "move": move})
        assert answer["type"] == "accepted", answer
        version = answer["v"]
        missed.append(version)
    live.listeners.add(session)
    mine = await ann.request({"type": "move", "game": game_id, "v": start["v"], "move": move_json(first)})
    assert mine["type"] == "accepted", mine
    received = [decode_dict(frame, ann.fmt) for frame in ann.frames]
    heard = [m for m in received if m["type"] in ("progress", "accepted") and m["v"] > start["v"]]
    expected = [("progress", v) for v in missed] + [("accepted", mine["v"])]
    assert [(m["type"], m["v"]) for m in heard] == expected
    assert all(m["player"] == bob.player for m in heard[:-1])


async def test_a_killed_node_loses_no_accepted_move_and_its_racers_finish_elsewhere(
    start_node: NodeFactory, open_client: Any, redis_url: str
) -> None:
    number, line = winnable_deal()
    first = start_node(test_deals=number)
    second = start_node()
    ann: Client = await open_client(first, "Ann")
    bob: Client = await open_client(second, "Bob")
    _room, start, _ = await start_race(ann, bob)
    version = start["v"]
    half = len(line) // 2
    for move in line[:half]:
        answer = await ann.request(
            {"type": "move", "game": start["game"], "v": version, "move": move_json(move)}
        )
        assert answer["type"] == "accepted"
        version = answer["v"]
    first.stop(signal.SIGKILL)
    again: Client = await open_client(second, "Ann", token=ann.token)
    assert again.welcome["games"] == [start["game"]]
    batch = await again.request({"type": "resume", "game": start["game"], "v": version})
    assert batch["type"] == "batch" and batch["events"] == []
    for move in line[half:]:
        answer = await again.request(
            {"type": "move", "game": start["game"], "v": version, "move": move_json(move)}
        )
        assert answer["type"] == "accepted", answer
        version = answer["v"]
    assert answer["status"] == "finished"
    store = Store(redis_url)
    racer = await store.racer(start["game"], ann.player)
    assert racer is not None and racer.moves == [move_json_text(m) for m in line]
    await store.close()


def move_json_text(move: Any) -> str:
    from protocol.game import move_text

    return move_text(move)


async def test_a_flooding_client_is_rate_limited_then_closed_while_a_race_goes_on(
    start_node: NodeFactory, open_client: Any
) -> None:
    ann, bob, start, bob_start = await friend_race(start_node, open_client)
    assert ann.node is not None
    async with connect(ann.node.url, subprotocols=[MSGPACK]) as flood:  # type: ignore[list-item]
        from protocol.wire.codec import decode_dict, encode
        from protocol.wire.flow import STRIKES_BEFORE_CLOSE
        from protocol.wire.message import Ping

        answers = []
        try:
            for i in range(400):
                await flood.send(encode(Ping(ref=i), MSGPACK))
            while True:
                answers.append(decode_dict(await asyncio.wait_for(flood.recv(), 5), MSGPACK))
        except ConnectionClosed as closed:
            assert closed.rcvd is not None and closed.rcvd.code == 1008
        refused = [a for a in answers if a["type"] == "error"]
        assert refused and {a["code"] for a in refused} == {"rate_limited"}
        # Each refusal answers its own request (docs/protocol.md §2), and the connection is
        # closed only after the documented number of refusals in a row (§3).
        refs = [a["ref"] for a in answers]
        assert refs == sorted(refs) and len(set(refs)) == len(refs)
        assert len(refused) >= STRIKES_BEFORE_CLOSE
        assert all(a["type"] == "error" for a in answers[-STRIKES_BEFORE_CLOSE:])
    board = Board.new("scorpion", 1234567890123)
    move = next(m for m in board.legal_moves() if not m.is_deal)
    answer = await bob.request(
        {"type": "move", "game": start["game"], "v": bob_start["v"], "move": move_json(move)}
    )
    assert answer["type"] == "accepted"


async def test_quick_match_pairs_two_waiting_players_into_a_race(
    start_node: NodeFactory, open_client: Any
) -> None:
    node = start_node()
    ann: Client = await open_client(node, "Ann", account=True)
    bob: Client = await open_client(node, "Bob", account=True)
    assert (await ann.request({"type": "queue_join", "variant": "wasp"}))["type"] == "queued"
    assert (await bob.request({"type": "queue_join", "variant": "wasp"}))["type"] == "queued"
    found = await ann.expect("match_found")
    assert {p["player"] for p in found["players"]} == {ann.player, bob.player}
    a_start = await ann.expect("race_started")
    b_start = await bob.expect("race_started")
    assert a_start["game"] == b_start["game"] and a_start["variant"] == "wasp"


async def test_a_lone_queued_player_is_told_when_the_wait_times_out(
    start_node: NodeFactory, open_client: Any
) -> None:
    node = start_node(queue_timeout=1)
    ann: Client = await open_client(node, "Ann", account=True)
    await ann.request({"type": "queue_join", "variant": "scorpion"})
    timeout = await ann.expect("queue_timeout", timeout=5)
    assert timeout["variant"] == "scorpion"
    cancel = await ann.request({"type": "queue_cancel"})
    assert cancel["type"] == "error"


async def test_cancelling_leaves_the_queue(start_node: NodeFactory, open_client: Any) -> None:
    node = start_node()
    ann: Client = await open_client(node, "Ann", account=True)
    await ann.request({"type": "queue_join", "variant": "scorpion"})
    assert (await ann.request({"type": "queue_cancel"}))["type"] == "ok"
    bob: Client = await open_client(node, "Bob", account=True)
    await bob.request({"type": "queue_join", "variant": "scorpion"})
    with pytest.raises(AssertionError):
        await bob.expect("match_found", timeout=1)


async def test_sigterm_closes_clients_with_1012(start_node: NodeFactory, open_client: Any) -> None:
    node = start_node()
    ann: Client = await open_client(node, "Ann")
    node.process.send_signal(signal.SIGTERM)
    await asyncio.wait_for(ann.ws.wait_closed(), 10)
    assert ann.ws.close_code == 1012
    assert await asyncio.to_thread(node.process.wait, 10) == 0


async def test_health_and_metrics_answer_over_http(start_node: NodeFactory, open_client: Any) -> None:
    node = start_node()
    await open_client(node, "Ann")

    def get(path: str) -> tuple[int, str]:
        with urllib.request.urlopen(f"http://127.0.0.1:{node.port}{path}", timeout=5) as response:
            return response.status, response.read().decode()

    status, body = await asyncio.to_thread(get, "/healthz")
    assert status == 200 and body.strip() == "ok"
    status, body = await asyncio.to_thread(get, "/metrics")
    assert status == 200
    assert "scorpion_connections 1.0" in body
    assert "scorpion_move_seconds_bucket" in body


async def test_the_browser_client_is_served_under_a_strict_policy_and_nothing_outside_it(
    start_node: NodeFactory,
) -> None:
    node = start_node()

    def get(path: str) -> tuple[int, dict[str, str], bytes]:
        connection = http.client.HTTPConnection("127.0.0.1", node.port, timeout=5)
        try:
            connection.request("GET", path)  # sent as written: no client-side clean-up of '..'
            response = connection.getresponse()
            return response.status, dict(response.getheaders()), response.read()
        finally:
            connection.close()

    for path, kind in (("/", "text/html"), ("/app.js", "text/javascript"), ("/style.css", "text/css")):
        status, headers, body = await asyncio.to_thread(get, path)
        assert status == 200 and headers["Content-Type"].startswith(kind) and body, path
        policy = headers["Content-Security-Policy"]
        for directive in ("default-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"):
            assert directive in policy, (path, policy)
        assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
        assert headers["X-Content-Type-Options"] == "nosniff"
        assert headers["Referrer-Policy"] == "no-referrer"
    outside = ("/../../../../etc/passwd", "/%2e%2e/%2e%2e/etc/hostname", "/nothing-here.js", "//etc/passwd")
    for path in outside:
        status, _, body = await asyncio.to_thread(get, path)
        assert status == 404 and body == b"not found\n", path


async def test_http_answers_get_and_head_and_refuses_other_methods(start_node: NodeFactory) -> None:
    node = start_node()

    def ask(method: str, path: str, body: bytes | None = None) -> tuple[int, dict[str, str], bytes]:
        connection = http.client.HTTPConnection("127.0.0.1", node.port, timeout=5)
        try:
            connection.request(method, path, body=body)
            response = connection.getresponse()
            return response.status, dict(response.getheaders()), response.read()
        finally:
            connection.close()

    def raw_head(path: str) -> bytes:
        with socket.create_connection(("127.0.0.1", node.port), timeout=5) as sock:
            sock.sendall(f"HEAD {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
            answer = b""
            while chunk := sock.recv(65536):
                answer += chunk
            return answer

    for path in ("/", "/app.js", "/healthz", "/metrics"):
        status, got, body = await asyncio.to_thread(ask, "GET", path)
        assert status == 200 and body, path
        status, headers, _ = await asyncio.to_thread(ask, "HEAD", path)
        assert status == 200, (path, status)
        raw = await asyncio.to_thread(raw_head, path)  # http.client would not read a stray body
        assert raw.endswith(b"\r\n\r\n") and raw.count(b"\r\n\r\n") == 1, raw[-80:]
        assert headers["Content-Type"] == got["Content-Type"], path
        if path != "/metrics":  # the figures move between two requests
            assert headers["Content-Length"] == str(len(body)), path
        for method in ("POST", "PUT", "DELETE"):
            status, headers, answer = await asyncio.to_thread(ask, method, path, b"")
            assert status == 405, (method, path, status)
            assert headers["Allow"] == "GET, HEAD", (method, path)
            assert answer == f"{method} is not served here: use GET\n".encode(), answer
    status, _, body = await asyncio.to_thread(ask, "GET", "/healthz")
    assert status == 200 and body == b"ok\n"


async def test_requests_while_redis_is_down_are_refused_as_unavailable_then_served_again(
    local_node: Any, open_client: Any, tmp_path: Path
) -> None:
    redis = RedisServer(tmp_path / "r")  # a Redis of this test's own, to stop and start
    redis.start()
    try:
        node = await local_node(redis_url=redis.url)
        ann: Client = await open_client(node, "Ann")
        assert (await ann.request({"type": "saved_games"}))["type"] == "saved_games_list"
        redis.stop()
        for request in ({"type": "saved_games"}, {"type": "stats"}, {"type": "solo_new"}):
            refused = await ann.request(request)
            assert refused["type"] == "error", refused
            assert refused["code"] == "unavailable", refused  # retry later; not a failure of the server
            assert refused["message"] == "storage is unavailable; retry"
        redis.start()
        deadline = time.monotonic() + 15
        while (answer := await ann.request({"type": "saved_games"}))["type"] != "saved_games_list":
            assert answer["code"] == "unavailable" and time.monotonic() < deadline, answer
            await asyncio.sleep(0.1)
    finally:
        redis.stop()


async def test_a_race_ends_at_its_time_limit(start_node: NodeFactory, open_client: Any) -> None:
    first = start_node(test_deals=77777777, race_time_limit=2)
    ann: Client = await open_client(first, "Ann")
    bob: Client = await open_client(first, "Bob")
    await start_race(ann, bob)
    ended = await ann.expect("race_ended", timeout=10)
    assert [row["status"] for row in ended["standings"]] == ["playing", "playing"]


async def test_a_racer_away_past_the_grace_period_is_marked_as_left(
    start_node: NodeFactory, open_client: Any
) -> None:
    ann, bob, _start, _ = await friend_race(start_node, open_client)
    await ann.close()
    left = await bob.expect("progress", timeout=10, status="left")
    assert left["player"] == ann.player


async def test_racers_of_a_killed_node_who_never_return_are_marked_as_left(
    start_node: NodeFactory, open_client: Any
) -> None:
    settings = {"node_heartbeat": 0.2, "node_timeout": 1.0}
    first = start_node(test_deals=DEAL, **settings)
    second = start_node(**settings)
    ann: Client = await open_client(first, "Ann")
    bob: Client = await open_client(second, "Bob")
    _room, _, start = await start_race(ann, bob)
    await asyncio.sleep(0.5)  # both nodes have heartbeats in Redis
    first.stop(signal.SIGKILL)  # Ann's connection is never closed: her node just dies
    left = await bob.expect("progress", timeout=15, status="left")
    assert left["player"] == ann.player
    # Bob can finish the race now instead of waiting for the time limit.
    answer = await bob.request({"type": "resign", "game": start["game"], "v": left["v"]})
    assert answer["type"] == "accepted"
    ended = await bob.expect("race_ended", timeout=10)
    assert {row["status"] for row in ended["standings"]} == {"left", "resigned"}


async def test_a_racer_whose_node_dies_and_who_comes_back_in_time_races_on(
    start_node: NodeFactory, open_client: Any
) -> None:
    settings = {"node_heartbeat": 0.2, "node_timeout": 1.0, "grace_period": 3}
    first = start_node(test_deals=DEAL, **settings)
    second = start_node(**settings)
    ann: Client = await open_client(first, "Ann")
    token = ann.token
    bob: Client = await open_client(second, "Bob")
    _room, _, start = await start_race(ann, bob)
    await asyncio.sleep(0.5)
    first.stop(signal.SIGKILL)
    await asyncio.sleep(1.5)  # the second node has noticed: Ann's grace period runs
    again: Client = await open_client(second, "Ann", token=token)
    resumed = await again.request({"type": "resume", "game": start["game"], "v": 0})
    assert resumed["type"] in ("batch", "snapshot")
    await asyncio.sleep(3.5)  # past the grace period
    board = Board.new("scorpion", DEAL)
    move = next(m for m in board.legal_moves() if not m.is_deal)
    request = {"type": "move", "game": start["game"], "v": resumed["v"], "move": move_json(move)}
    answer = await again.request(request)
    assert answer["type"] == "accepted", answer
    assert answer["status"] == "playing"


async def test_an_action_whose_commit_got_no_answer_leaves_no_stale_board_behind(
    local_node: Any, open_client: Any
) -> None:
    node, ann, _bob, start, _ = await local_race(local_node, open_client)
    store = node.server.store
    real_act = store.act
    calls = 0

    async def lost_answer(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise ConnectionError("the connection to Redis dropped before the script ran")
        return await real_act(*args, **kwargs)

    store.act = lost_answer
    move = next(m for m in Board.new("scorpion", DEAL).legal_moves() if not m.is_deal)
    request = {"type": "move", "game": start["game"], "v": start["v"], "move": move_json(move)}
    failed = await ann.request(request)
    # The script's outcome is unknown to the node: the client is told so, and when to retry.
    assert failed["type"] == "error" and failed["code"] == "outcome_unknown", failed
    assert 0 < failed["retry_after_ms"] <= 60_000
    while not store.health.up:  # the node probes Redis before it takes requests again
        await asyncio.sleep(0.05)
    # The node must not believe the move was made: there is nothing to undo.
    undo = await ann.request({"type": "undo", "game": start["game"], "v": start["v"]})
    assert undo["type"] == "error" and undo["code"] == "illegal_move", undo
    record = await store.racer(start["game"], ann.player)
    assert record is not None and record.moves == []
    again = await ann.request(request)
    assert again["type"] == "accepted"


def _children(pid: int) -> set[int]:
    """The processes whose parent is ``pid`` (from /proc)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if int(fields[1]) == pid:
                found.add(int(entry.name))
    return found


def _running(pid: int) -> bool:
    """Whether process ``pid`` still runs (a zombie waiting to be reaped does not)."""
    try:
        state = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


async def test_a_killed_node_leaves_no_solver_process_behind(
    start_node: NodeFactory, open_client: Any
) -> None:
    node = start_node(test_deals=str(DEAL))
    ann: Client = await open_client(node, "Ann")
    start = await ann.request({"type": "solo_new", "variant": "scorpion"})
    check = await ann.request({"type": "winnable", "game": start["game"], "v": start["v"]})
    assert check["type"] == "winnable_info"
    # The solver's worker process (with multiprocessing's resource tracker) now runs.
    helpers = _children(node.process.pid)
    assert helpers
    node.stop(signal.SIGKILL)
    deadline = time.monotonic() + 15
    while any(_running(pid) for pid in helpers) and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    assert not [pid for pid in helpers if _running(pid)]


async def test_a_race_whose_last_action_was_stored_but_never_confirmed_still_ends(
    local_node: Any, open_client: Any
) -> None:
    node, ann, bob, start, bob_start = await local_race(local_node, open_client)
    game = start["game"]
    resigned = await bob.request({"type": "resign", "game": game, "v": bob_start["v"]})
    assert resigned["type"] == "accepted", resigned
    store = node.server.store
    real_act = store.act

    async def stored_but_reply_lost(*args: Any, **kwargs: Any) -> Any:
        await real_act(*args, **kwargs)
        raise ConnectionError("the connection dropped after the script ran")

    store.act = stored_but_reply_lost
    unknown = await ann.request({"type": "resign", "game": game, "v": start["v"]})
    assert unknown["type"] == "error" and unknown["code"] == "outcome_unknown", unknown
    store.act = real_act
    while not store.health.up:
        await asyncio.sleep(0.05)
    batch = await ann.request({"type": "resume", "game": game, "v": start["v"]})
    assert batch["type"] == "batch", batch
    assert [e["status"] for e in batch["events"] if e["type"] == "accepted"] == ["resigned"]
    # The node learnt of the last racer's end from the log, not from its own answer: the
    # race must end all the same.
    ended = await ann.expect("race_ended", timeout=10)
    assert {s["status"] for s in ended["standings"]} == {"resigned"}
