"""Challenges: a finished race raced again later, on another node, against its ghosts.

The ghosts' actions come as a live rival's do (``progress``), in order and never before
their recorded time from the start of the taker's race; neither the taker nor a spectator
is shown a card the taker has not uncovered; the result lands on the challenge's board and
its creator is told; no rating moves; every key expires with the challenge.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from typing import Any

import redis.asyncio as aioredis

from protocol.game import Board, ReserveRule, move_from_text, move_json, move_text, view_data
from protocol.wire.codec import decode_dict
from protocol.wire.message import Options
from server.challenges import rank_board
from server.game.fairness import uncovered_cards
from server.game.ghost import GhostClock, GhostPacer, GhostRuns, record_run
from server.game.live import GameSpec
from server.game.opening import open_game, restart, save_restart
from server.store import Store

from .conftest import Client, NodeFactory, start_race
from .test_race import card_texts

DEAL = 1234567890123


def run(offsets: list[int]) -> dict[str, Any]:
    return {
        "name": "Ann",
        "actions": [[t, "move", "move", "x", {"moves": i + 1}, "playing"] for i, t in enumerate(offsets)],
    }


def test_the_pacer_gives_each_ghost_action_once_its_recorded_time_has_passed_in_time_order() -> None:
    pacer = GhostPacer([run([100, 900, 2000]), run([50, 900])])
    clock = 0  # an injected clock: the test says how long the race has run
    assert pacer.next_at() == 50
    assert pacer.due(clock) == []
    clock = 120
    assert [(i, a[0]) for i, a in pacer.due(clock)] == [(1, 50), (0, 100)]
    assert pacer.next_at() == 900
    clock = 1500
    assert [(i, a[0]) for i, a in pacer.due(clock)] == [(0, 900), (1, 900)]
    assert pacer.due(None) == [(0, pacer.ghosts[0]["actions"][2])]  # the taker is done: the rest at once
    assert pacer.next_at() is None


async def test_the_ghosts_clock_steps_a_crowd_due_at_once_in_batches_in_due_order() -> None:
    now = 1000  # an injected clock
    clock = GhostClock(lambda: now, batch=32)
    stepped: list[tuple[int, int]] = []  # (loop turn, driver)
    turn = 0

    class Driver:  # what the clock asks of a ghost driver: a step for its ticket
        def __init__(self, number: int) -> None:
            self.number = number

        def due(self, ticket: int) -> None:
            stepped.append((turn, self.number))

    for number in range(100):
        clock.wake(Driver(number), 1000 - number % 3)  # type: ignore[arg-type]
    clock.wake(Driver(100), 5000)  # type: ignore[arg-type]
    while len(stepped) < 100:
        turn += 1
        await asyncio.sleep(0)
    per_turn = [sum(1 for t, _ in stepped if t == n) for n in range(1, turn + 1)]
    assert max(per_turn) <= 32 and sum(per_turn) == 100, per_turn
    assert len([n for n in per_turn if n]) == 4  # 32 + 32 + 32 + 4: the rest left to later turns
    due = {number: 1000 - number % 3 for number in range(100)}
    assert [due[n] for _, n in stepped] == sorted(due[n] for _, n in stepped)  # the earliest first
    assert len(clock) == 1  # the one not due yet waits


def played_run(moves: int, seed: int) -> dict[str, Any]:
    """A run of ``moves`` legal actions on DEAL (an undo among them), as a ghost keeps it."""
    board, rng, actions = Board.new("scorpion", DEAL), random.Random(seed), []
    for step in range(moves):
        if step % 5 == 4 and board.depth:
            board.pop()
            actions.append([step * 100, "move", "undo", "undo", {}, "playing"])
            continue
        move = rng.choice(board.legal_moves())
        board.push(move)
        actions.append([step * 100, "move", "move", move_text(move), {}, "playing"])
    actions.append([moves * 100, "status", "resign", "", {}, "resigned"])
    return {"name": "Ann", "actions": actions}


def test_a_ghost_s_boards_are_worked_out_once_per_node_and_are_the_run_s_own() -> None:
    runs = GhostRuns(steps=40)
    ghost = played_run(12, seed=5)
    shared = runs.run("scorpion", DEAL, ReserveRule.ANY_TIME, ghost)
    replayed = Board.new("scorpion", DEAL)
    for step, action in enumerate(ghost["actions"]):
        if action[3] == "undo":
            replayed.pop()
        elif action[3]:
            replayed.push(move_from_text(action[3]))
        view, cards = shared.after(step)
        assert view == view_data(replayed)
        assert cards == uncovered_cards(view_data(replayed))
    # A second game racing the same run (read again from storage: equal, not the same
    # object) shares the boards worked out; another deal or another run does not.
    again = runs.run("scorpion", DEAL, ReserveRule.ANY_TIME, json.loads(json.dumps(ghost)))
    assert again is shared and again.after(3) is shared.after(3)
    other = played_run(12, seed=6)
    assert runs.run("scorpion", DEAL, ReserveRule.ANY_TIME, other) is not shared
    assert runs.run("scorpion", DEAL + 1, ReserveRule.ANY_TIME, ghost) is not shared
    # Past its limit (40 actions) the node drops the runs used least recently.
    assert runs.size <= 40 and len(runs.runs) == 3
    runs.run("scorpion", DEAL, ReserveRule.ANY_TIME, played_run(20, seed=7))
    assert runs.size <= 40 and runs.run("scorpion", DEAL, ReserveRule.ANY_TIME, ghost) is not shared


def test_a_run_is_its_racer_s_actions_with_their_times_from_the_start() -> None:
    events = [
        {"type": "race_started", "at": 1000},
        {
            "type": "move",
            "player": "a",
            "action": "move",
            "move": "m1",
            "summary": {},
            "status": "playing",
            "at": 1300,
        },
        {
            "type": "move",
            "player": "b",
            "action": "move",
            "move": "m2",
            "summary": {},
            "status": "playing",
            "at": 1400,
        },
        {
            "type": "status",
            "player": "a",
            "action": "resign",
            "move": "",
            "summary": {},
            "status": "resigned",
            "at": 2500,
        },
    ]
    ghost = record_run(events, "a", "Ann", 1000, {"score": 3, "elapsed": 1, "status": "resigned"})
    assert [a[0] for a in ghost["actions"]] == [300, 1500]
    assert (ghost["score"], ghost["status"]) == (3, "resigned")


async def test_a_game_started_again_as_its_start_is_sent_keeps_one_start_everywhere(redis_url: str) -> None:
    store = Store(redis_url, origin="node1")
    await store.redis.hset("player:p1", "name", "Carl")
    await store.redis.pexpire("player:p1", 60_000)
    spec = GameSpec(variant="scorpion", options=Options(undo=True), mode="challenge", number=DEAL)
    opened = await open_game(
        store, [("p1", "Carl"), ("ghost-1", "Ann")], spec, None, 60_000, follow=True, announce=False
    )
    game_id, written = opened.game.game_id, opened.game.start
    assert 0 < opened.ttls["p1"] <= 60_000 and "ghost-1" not in opened.ttls
    meta = await store.redis.hgetall(f"{{g:{game_id}}}:meta")
    assert meta["start"] == str(written) and meta["state"] == "racing" and meta["ver"] == "1"
    assert json.loads(meta["roster"]) == [{"id": "p1", "name": "Carl"}, {"id": "ghost-1", "name": "Ann"}]
    ghost = await store.redis.hgetall(f"{{g:{game_id}}}:p:ghost-1")
    assert ghost["name"] == "Ann" and ghost["status"] == "playing" and ghost["changed"] == "1"
    assert json.loads(ghost["summary"]) == opened.game.summary["ghost-1"]
    assert await store.redis.smembers(f"{{g:{game_id}}}:nodes") == {"node1"}  # followed by its node
    assert await store.redis.hget("player:p1", "game") == game_id
    assert await store.redis.zscore("live", game_id) is None  # not announced yet
    await asyncio.sleep(0.05)  # the answer is slow to leave (a burst of starts)
    restart(opened)
    await save_restart(store, opened)
    start = opened.game.start
    assert start >= written + 50 and opened.first["at"] == start
    assert await store.redis.hget(f"{{g:{game_id}}}:meta", "start") == str(start)
    first = json.loads(await store.redis.lindex(f"{{g:{game_id}}}:log", 0) or "{}")
    assert first == opened.first
    await store.announce_game(game_id, start)
    assert await store.redis.zscore("live", game_id) == start
    await store.count_start("p1", "scorpion", opened.ttls["p1"])
    assert await store.redis.hget("stats:p1:scorpion", "started") == "1"
    assert 0 < await store.redis.pttl("stats:p1:scorpion") <= 60_000
    await store.close()


def frames(client: Client) -> list[dict[str, Any]]:
    return [decode_dict(f, client.fmt, limit=1 << 22) for f in client.frames]  # type: ignore[arg-type]


async def test_a_race_s_challenge_taken_on_another_node_races_its_ghosts_fairly(
    start_node: NodeFactory, open_client: Any, redis_url: str
) -> None:
    node1 = start_node(test_deals=str(DEAL), challenge_ttl=600)
    node2 = start_node(test_deals=str(DEAL), challenge_ttl=600)
    ann: Client = await open_client(node1, "Ann", account=True)  # a rated race: accounts
    bob: Client = await open_client(node1, "Bob", account=True)
    _, start, bob_start = await start_race(ann, bob, {"rated": True})
    game = start["game"]
    board = Board.new("scorpion", DEAL)
    v = start["v"]
    for _ in range(4):  # Ann plays four moves, a little apart
        move = next(m for m in board.legal_moves() if not m.is_deal)
        board.push(move)
        answer = await ann.request({"type": "move", "game": game, "v": v, "move": move_json(move)})
        assert answer["type"] == "accepted", answer
        v = answer["v"]
        await asyncio.sleep(0.25)
    await ann.request({"type": "resign", "game": game, "v": v})
    await bob.request({"type": "resign", "game": game, "v": bob_start["v"]})
    await ann.expect("race_ended")
    await ann.expect("rating_change")
    rated_before = (await ann.request({"type": "profile"}))["ratings"]
    assert rated_before and rated_before[0]["games"] == 1
    refused = await bob.request({"type": "challenge_create", "game": "nosuchgame"})
    assert refused["code"] == "no_such_game"
    made = await ann.request({"type": "challenge_create", "game": game})
    assert made["type"] == "challenge", made
    assert [g["name"] for g in made["ghosts"]] == ["Ann", "Bob"]
    # A rated race's deal, made an unrated challenge.
    assert made["ghosts"][0]["moves"] == 4 and made["options"]["rated"] is False
    code = made["code"]

    # Carl takes it on the other node; Eve watches there.
    carl: Client = await open_client(node2, "Carl")
    eve: Client = await open_client(node2, "Eve")
    started = await carl.request({"type": "challenge_take", "code": code.lower()})
    assert started["type"] == "race_started" and started["mode"] == "challenge", started
    assert [r["player"] for r in started["roster"]][1:] == ["ghost-1", "ghost-2"]
    taken_game, begin = started["game"], started["start"]
    assert started["commitment"] != start["commitment"]  # the same deal on a fresh salt
    assert (await eve.request({"type": "watch", "game": taken_game}))["type"] == "spectate"
    arrivals: list[tuple[int, dict[str, Any]]] = []
    for _ in range(4):  # Ann's ghost's four moves, as progress
        progress = await carl.expect("progress", player="ghost-1")
        arrivals.append((int(time.time() * 1000), progress))
    recorded = await (await aioredis.from_url(redis_url)).lrange("ch:{" + code + "}:ghosts", 0, 0)
    offsets = [a[0] for a in json.loads(recorded[0])["actions"]]
    assert [p["summary"]["moves"] for _, p in arrivals] == [1, 2, 3, 4]
    assert [p["v"] for _, p in arrivals] == sorted(p["v"] for _, p in arrivals)
    for (arrived, _), offset in zip(arrivals, offsets, strict=False):
        assert arrived >= begin + offset - 20, "a ghost's action came before its recorded time"
    # One start for the taker and the ghosts: the one Carl was sent is the one stored, and the
    # ghost's actions were committed their recorded time after it.
    redis = aioredis.from_url(redis_url)
    assert int(await redis.hget(f"{{g:{taken_game}}}:meta", "start") or 0) == begin
    logged = [json.loads(raw) for raw in await redis.lrange(f"{{g:{taken_game}}}:log", 0, -1)]
    assert logged[0]["type"] == "race_started" and logged[0]["at"] == begin
    committed = [e["at"] - begin for e in logged if e.get("player") == "ghost-1"][:4]
    assert all(at >= offset for at, offset in zip(committed, offsets, strict=False)), (committed, offsets)
    await redis.aclose()
    cboard = Board.new("scorpion", DEAL)
    v = started["v"]
    for _ in range(3):  # Carl plays three moves of his own
        move = next(m for m in cboard.legal_moves() if not m.is_deal)
        cboard.push(move)
        answer = await carl.request({"type": "move", "game": taken_game, "v": v, "move": move_json(move)})
        assert answer["type"] == "accepted", answer
        v = answer["v"]
    resigned = await carl.request({"type": "resign", "game": taken_game, "v": v})
    ended = await carl.expect("race_ended")
    assert ended["number"] == str(DEAL)  # the same deal, revealed with the fresh salt
    assert {s["player"] for s in ended["standings"]} == {carl.player, "ghost-1", "ghost-2"}
    await eve.expect("race_ended")

    # Nobody saw a card Carl had not uncovered: Carl's own frames, and Eve's.
    mine: list[tuple[int, set[str]]] = []
    for data in frames(carl):
        if data.get("game") != taken_game or data["type"] == "race_ended":
            continue
        if data["type"] in ("race_started", "accepted"):
            mine.append((data["v"], card_texts(data["view"])))
        else:
            assert not card_texts(data), data  # progress: no card at all
    for data in frames(eve):
        # Once Carl's part is over there is nothing left to hide from him (decision 14).
        if data["type"] == "spectate_event" and data["player"] != carl.player and data["v"] < resigned["v"]:
            known = set().union(*(cards for version, cards in mine if version <= data["v"]))
            assert card_texts(data["view"]) <= known, data

    # The board, the creator told, no rating moved.
    taken = await ann.expect("challenge_taken")
    assert taken["code"] == code and taken["entry"]["player"] == carl.player
    listed = await bob.request({"type": "challenge_board", "code": code})
    assert [e["player"] for e in listed["entries"]] == [carl.player]
    assert listed["entries"][0]["game"] == taken_game
    mine_list = await ann.request({"type": "challenge_list"})
    assert [c["code"] for c in mine_list["challenges"]] == [code]
    assert (await ann.request({"type": "profile"}))["ratings"] == rated_before
    assert (await carl.request({"type": "profile"}))["ratings"] == []
    # Passing it on: Carl's run added as a third ghost.
    passed = await carl.request({"type": "challenge_create", "game": taken_game})
    assert [g["name"] for g in passed["ghosts"]] == ["Ann", "Bob", "Carl"]
    # Every key of the challenge expires with it.
    redis = aioredis.from_url(redis_url)
    keys = [k async for k in redis.scan_iter(match="ch:{" + code + "}*")]
    keys += [f"chs:{{{ann.player}}}".encode(), f"chs:{{{ann.player}}}:from".encode()]
    assert len(keys) == 5
    for key in keys:
        assert 0 < await redis.pttl(key) <= 600_000, key
    await redis.aclose()


async def test_a_taker_who_moves_to_another_node_and_resigns_there_ends_the_race_at_once(
    local_node: Any, open_client: Any
) -> None:
    node1 = await local_node(test_deals=str(DEAL), node_id="node1", grace_period=5.0)
    node2 = await local_node(test_deals=str(DEAL), node_id="node2", grace_period=5.0)
    fay: Client = await open_client(node1, "Fay")
    started = await fay.request({"type": "challenge_new"})
    board, v = Board.new("scorpion", DEAL), started["v"]
    for pause in (0.0, 4.0):  # Fay's second move comes four seconds after her first
        await asyncio.sleep(pause)
        move = next(m for m in board.legal_moves() if not m.is_deal)
        board.push(move)
        v = (await fay.request({"type": "move", "game": started["game"], "v": v, "move": move_json(move)}))[
            "v"
        ]
    await fay.request({"type": "resign", "game": started["game"], "v": v})
    code = (await fay.expect("challenge"))["code"]

    # Gus takes it on node 1, sees the ghost's first move, then his tab closes and he
    # carries on on node 2, the node driving the ghost left with no connection of his.
    gus: Client = await open_client(node1, "Gus")
    taken = await gus.request({"type": "challenge_take", "code": code})
    game = taken["game"]
    await gus.expect("progress", player="ghost-1")
    await gus.ws.close()
    tab: Client = await open_client(node2, "Gus", token=gus.token)
    assert (await tab.request({"type": "resume", "game": game, "v": taken["v"]}))["type"] in (
        "batch",
        "snapshot",
    )
    assert (await tab.request({"type": "resign", "game": game, "v": taken["v"]}))["type"] == "accepted"
    # His part is over: the ghost's rest is played at once and the race ends, well before
    # the ghost's second move was due at its recorded pace.
    ended = await tab.expect("race_ended", timeout=3.0)
    ghost = next(row for row in ended["standings"] if row["player"] == "ghost-1")
    assert ghost["status"] == "resigned", ended
    driving = node1.server.node
    for _ in range(50):  # and node 1 lets the game go once the race is over
        if not driving.challenges.drivers and game not in driving.race.games:
            break
        await asyncio.sleep(0.1)
    assert not driving.challenges.drivers and game not in driving.race.games


def test_a_challenge_s_board_ranks_its_takers_as_a_race_s_standings_do() -> None:
    """Score first; then finished, stuck, stopped; the quicker finish, the longer stay."""
    results = {
        "carl": {"player": "carl", "score": 0, "elapsed": 0, "status": "resigned", "finished": 1},
        "root": {"player": "root", "score": 0, "elapsed": 64, "status": "left", "finished": 2},
        "dan": {"player": "dan", "score": 0, "elapsed": 30, "status": "stuck", "finished": 3},
        "eve": {"player": "eve", "score": 100, "elapsed": 90, "status": "resigned", "finished": 4},
        "fay": {"player": "fay", "score": 2000, "elapsed": 200, "status": "finished", "finished": 5},
        "gus": {"player": "gus", "score": 2000, "elapsed": 200, "status": "finished", "finished": 6},
    }
    ranked = rank_board(results)
    assert [(e["player"], e["rank"]) for e in ranked] == [
        ("fay", 1),
        ("gus", 2),  # the same result, finished later
        ("eve", 3),
        ("dan", 4),  # stuck ranks ahead of stopped
        ("root", 5),  # who stayed longer ranks higher
        ("carl", 6),
    ]


async def test_a_challenge_passed_on_to_eight_ghosts_races_nine_within_the_contract(
    local_node: Any, open_client: Any
) -> None:
    """Eight ghosts and their taker: every frame of the race is a valid message (the test
    client decodes each against the contract), and passing a full challenge on keeps its
    first seven ghosts and the taker's run. A game made a challenge twice gives one code."""
    node = await local_node(test_deals=str(DEAL))
    ann: Client = await open_client(node, "Ann")
    carl: Client = await open_client(node, "Carl")
    started = await ann.request({"type": "challenge_new"})
    await ann.request({"type": "resign", "game": started["game"], "v": started["v"]})
    made = await ann.expect("challenge")
    again = await ann.request({"type": "challenge_create", "game": started["game"]})
    assert again["code"] == made["code"] and again["ghosts"] == made["ghosts"], again
    while True:
        race = await carl.request({"type": "challenge_take", "code": made["code"]})
        assert race["type"] == "race_started", race
        assert [r["player"] for r in race["roster"]][1:] == [
            f"ghost-{i}" for i in range(1, len(made["ghosts"]) + 1)
        ]
        v = race["v"]
        if len(made["ghosts"]) == 8:  # Carl's last run has a move in it: it tells from the others
            move = next(m for m in Board.new("scorpion", DEAL).legal_moves() if not m.is_deal)
            v = (await carl.request({"type": "move", "game": race["game"], "v": v, "move": move_json(move)}))[
                "v"
            ]
        await carl.request({"type": "resign", "game": race["game"], "v": v})
        ended = await carl.expect("race_ended", game=race["game"])
        assert len(ended["standings"]) == len(made["ghosts"]) + 1
        if len(made["ghosts"]) == 8:
            break
        made = await carl.request({"type": "challenge_create", "game": race["game"]})
        assert made["type"] == "challenge", made
    assert len(ended["standings"]) == 9 and max(s["rank"] for s in ended["standings"]) <= 9
    full = made
    passed = await carl.request({"type": "challenge_create", "game": race["game"]})
    assert len(passed["ghosts"]) == 8
    assert [g["moves"] for g in passed["ghosts"]] == [g["moves"] for g in full["ghosts"][:7]] + [1]
    assert [g["name"] for g in passed["ghosts"]] == ["Ann"] + ["Carl"] * 7
    board = await ann.request({"type": "challenge_board", "code": full["code"]})
    assert [e["player"] for e in board["entries"]] == [carl.player]  # his best of eight tries


async def test_a_taker_cannot_watch_or_replay_a_game_on_the_deal_while_racing_it(
    local_node: Any, open_client: Any
) -> None:
    """The challenge's source game and another taker's game show the ghosts' and that
    taker's uncovered cards: refused to a taker still playing the deal, shown after."""
    node = await local_node(test_deals=str(DEAL))
    ann: Client = await open_client(node, "Ann")
    carl: Client = await open_client(node, "Carl")
    dan: Client = await open_client(node, "Dan")
    started = await ann.request({"type": "challenge_new"})
    move = next(m for m in Board.new("scorpion", DEAL).legal_moves() if not m.is_deal)
    moved = await ann.request(
        {"type": "move", "game": started["game"], "v": started["v"], "move": move_json(move)}
    )
    await ann.request({"type": "resign", "game": started["game"], "v": moved["v"]})
    code = (await ann.expect("challenge"))["code"]
    carls = await carl.request({"type": "challenge_take", "code": code})
    dans = await dan.request({"type": "challenge_take", "code": code})
    tab: Client = await open_client(node, "Carl", token=carl.token)  # another tab of Carl's
    for client, asked in (
        (carl, {"type": "replay", "game": started["game"]}),
        (carl, {"type": "replay_positions", "game": started["game"], "player": ann.player}),
        (tab, {"type": "replay", "game": started["game"]}),
        (tab, {"type": "watch", "game": dans["game"]}),
    ):
        refused = await client.request(asked)
        assert refused["type"] == "error" and refused["code"] == "spectating_forbidden", refused
        assert carls["game"] in refused["message"]
    # Someone not racing the deal may watch and replay (as anyone may any finished game).
    eve: Client = await open_client(node, "Eve")
    assert (await eve.request({"type": "watch", "game": dans["game"]}))["type"] == "spectate"
    assert (await eve.request({"type": "replay", "game": started["game"]}))["type"] == "replay_log"
    # Carl's part over, nothing is left to hide from him.
    await carl.request({"type": "resign", "game": carls["game"], "v": carls["v"]})
    await carl.expect("race_ended", game=carls["game"])
    assert (await carl.request({"type": "replay", "game": started["game"]}))["type"] == "replay_log"
    assert (await tab.request({"type": "watch", "game": dans["game"]}))["type"] == "spectate"


async def test_a_challenge_expires_with_every_key(
    start_node: NodeFactory, open_client: Any, redis_url: str
) -> None:
    node = start_node(test_deals=str(DEAL), challenge_ttl=1)
    fay: Client = await open_client(node, "Fay")
    started = await fay.request({"type": "challenge_new"})
    assert started["type"] == "race_started" and started["mode"] == "challenge"
    await fay.request({"type": "resign", "game": started["game"], "v": started["v"]})
    made = await fay.expect("challenge")
    code = made["code"]
    assert (await fay.request({"type": "challenge_board", "code": code}))["entries"] == []
    await asyncio.sleep(1.5)
    redis = aioredis.from_url(redis_url)
    assert [k async for k in redis.scan_iter(match=f"*{code}*")] == []
    assert not await redis.exists(f"chs:{{{fay.player}}}", f"chs:{{{fay.player}}}:from")
    await redis.aclose()
    gone = await fay.request({"type": "challenge_take", "code": code})
    assert gone["code"] == "no_such_challenge"


async def test_the_daily_s_ghosts_open_only_once_the_ranked_attempt_is_over(
    local_node: Any, open_client: Any
) -> None:
    node = await local_node()
    gus: Client = await open_client(node, "Gus", account=True)
    early = await gus.request({"type": "daily_ghost"})
    assert early["type"] == "error" and early["code"] == "not_allowed"
    attempt = await gus.request({"type": "daily_start"})
    early = await gus.request({"type": "daily_ghost"})
    assert early["code"] == "not_allowed"  # playing it is not over
    await gus.request({"type": "resign", "game": attempt["game"], "v": attempt["v"]})
    await gus.expect("race_ended")
    for _ in range(100):  # the board takes the attempt a moment after the race ends
        if (await gus.request({"type": "leaderboard"}))["entries"]:
            break
        await asyncio.sleep(0.05)
    practice = await gus.request({"type": "daily_ghost"})
    assert practice["type"] == "race_started", practice
    assert practice["mode"] == "practice"
    assert [r["name"] for r in practice["roster"]] == ["Gus", "Gus"]  # the leader: Gus himself
