"""Accounts and sessions, against a real Redis: register, log in and out, look-alike
usernames, wrong passwords and the growing lockout, idle expiry, rotation, revocation,
hashed tokens, and ranked play that needs an account (issue "Accounts, sessions and abuse
limits", points 1 to 3)."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
import redis.asyncio as aioredis
from websockets.asyncio.client import connect

from protocol.wire.codec import MSGPACK

from .conftest import PASSWORD, Client

pytestmark = pytest.mark.asyncio


async def connected(node: Any) -> Client:
    """Open a connection that has not said hello yet."""
    ws = await connect(node.url, subprotocols=[MSGPACK])  # type: ignore[list-item]
    return Client(ws, MSGPACK)


async def login(node: Any, username: str, password: str = PASSWORD, device: str = "") -> dict[str, Any]:
    """Log in on a new connection and return the answer (``session`` or ``error``)."""
    client = await connected(node)
    try:
        message = {"type": "login", "username": username, "password": password}
        if device:
            message["device"] = device
        return await client.request(message)
    finally:
        await client.close()


async def hello(node: Any, token: str, name: str = "Ann") -> dict[str, Any]:
    """Say hello with a token on a new connection and return the answer."""
    client = await connected(node)
    try:
        return await client.request({"type": "hello", "name": name, "token": token})
    finally:
        await client.close()


async def test_a_guest_registers_logs_in_elsewhere_and_logs_out(local_node: Any, open_client: Any) -> None:
    node = await local_node()
    ann: Client = await open_client(node, "Ann")
    assert "username" not in ann.welcome and ann.welcome["session"]
    guest_token = ann.token
    granted = await ann.register("Ann_R")
    assert granted["player"] == ann.player and granted["username"] == "ann_r"  # case mapped
    assert (await hello(node, guest_token))["code"] == "bad_token"  # the guest's token is replaced
    again = await ann.request({"type": "register", "username": "other", "password": PASSWORD})
    assert again["code"] == "not_allowed"

    session = await login(node, "ANN_R", device="phone")
    assert session["type"] == "session" and session["player"] == ann.player
    phone: Client = await open_client(node, "Ann", token=session["token"])
    assert phone.welcome["username"] == "ann_r" and phone.welcome["player"] == ann.player
    assert phone.welcome["session"] == session["session"]
    listed = await phone.request({"type": "sessions"})
    devices = {s["session"]: (s["device"], s["current"]) for s in listed["sessions"]}
    assert devices[session["session"]] == ("phone", True) and len(devices) == 2

    assert (await phone.request({"type": "logout"}))["type"] == "ok"
    assert (await phone.expect("_closed"))["error"] == "closed with 1000"
    assert (await hello(node, session["token"]))["code"] == "bad_token"
    assert (await hello(node, ann.token))["type"] == "welcome"  # the other session lives on
    guest: Client = await open_client(node, "Guest")
    assert (await guest.request({"type": "logout"}))["code"] == "not_allowed"


async def test_usernames_are_unique_up_to_case_width_and_look_alikes(
    local_node: Any, open_client: Any
) -> None:
    node = await local_node()
    alice: Client = await open_client(node, "Alice")
    await alice.register("alice")
    for taken in ("alice", "ALICE", "\u0430lice", "\uff41lice", "a1ice"):  # Cyrillic a, fullwidth a, 1 for l
        other: Client = await open_client(node, "Other")
        answer = await other.request({"type": "register", "username": taken, "password": PASSWORD})
        assert answer["code"] == "username_taken", (taken, answer)
    for bad in ("alice bob", "\u3164", "a\u034fb"):  # a space, a Hangul filler, a grapheme joiner
        other = await open_client(node, "Other")
        answer = await other.request({"type": "register", "username": bad, "password": PASSWORD})
        assert (answer["code"], answer["field"]) == ("bad_field", "username"), (bad, answer)
    short = await other.request_unchecked({"type": "register", "username": "bob", "password": "short"})
    assert (short["code"], short["field"]) == ("bad_field", "password")
    assert (await other.register("bob"))["username"] == "bob"
    assert (await login(node, "\u0430lice"))["player"] == alice.player  # the look-alike finds it


async def test_wrong_passwords_lock_the_account_out_for_longer_and_longer(
    local_node: Any, open_client: Any
) -> None:
    node = await local_node(account_login_failures=3, account_login_lockout=1.0)
    ann: Client = await open_client(node, "Ann")
    await ann.register("ann")
    assert (await login(node, "nobody"))["code"] == "bad_login"
    for _ in range(2):
        assert (await login(node, "ann", "wrong password"))["code"] == "bad_login"
    locked = await login(node, "ann", "wrong password")  # the third in a row
    assert locked["code"] == "login_locked" and "1 s" in locked["message"]
    assert (await login(node, "ann"))["code"] == "login_locked"  # even the right password waits
    await asyncio.sleep(1.2)
    longer = await login(node, "ann", "wrong password")
    assert longer["code"] == "login_locked" and "2 s" in longer["message"]  # doubled
    await asyncio.sleep(2.2)
    assert (await login(node, "ann"))["type"] == "session"
    assert (await login(node, "ann", "wrong password"))["code"] == "bad_login"  # counted afresh


async def test_an_unused_session_expires_and_a_revoked_one_stops_at_once(
    local_node: Any, open_client: Any
) -> None:
    node = await local_node(session_idle=1.0)
    ann: Client = await open_client(node, "Ann")
    await ann.register("ann")
    idle = await login(node, "ann")
    await asyncio.sleep(1.5)
    assert (await hello(node, idle["token"]))["code"] == "bad_token"

    node = await local_node()
    bob: Client = await open_client(node, "Bob")
    mine = (await bob.register("bob"))["session"]
    other = await login(node, "bob", device="laptop")
    laptop: Client = await open_client(node, "Bob", token=other["token"])
    listed = await bob.request({"type": "sessions"})
    assert {s["session"]: s["current"] for s in listed["sessions"]} == {mine: True, other["session"]: False}
    revoked = await bob.request({"type": "session_revoke", "session": other["session"]})
    assert revoked["type"] == "ok"
    assert (await laptop.expect("_closed"))["error"].count("1008") >= 1
    assert (await hello(node, other["token"]))["code"] == "bad_token"
    unknown = await bob.request({"type": "session_revoke", "session": other["session"]})
    assert unknown["code"] == "bad_field"
    for _ in range(2):
        await login(node, "bob")
    assert (await bob.request({"type": "session_revoke", "all": True}))["type"] == "ok"
    left = (await bob.request({"type": "sessions"}))["sessions"]
    assert [s["current"] for s in left] == [True]


async def test_a_session_token_is_rotated_and_the_old_one_lasts_the_overlap(
    local_node: Any, open_client: Any
) -> None:
    node = await local_node(session_rotation=0, session_overlap=1.0)
    ann: Client = await open_client(node, "Ann")
    await ann.register("ann")
    first = (await login(node, "ann"))["token"]
    welcome = await hello(node, first)
    second = welcome["token"]
    assert second != first
    raced = await hello(node, first)  # a reconnect that raced the rotation still gets in
    assert raced["type"] == "welcome" and raced["session"] == welcome["session"]
    await asyncio.sleep(1.3)
    assert (await hello(node, first))["code"] == "bad_token"
    assert (await hello(node, raced["token"]))["type"] == "welcome"

    steady = await local_node()  # rotation at most once an hour: the same token comes back
    bob: Client = await open_client(steady, "Bob")
    await bob.register("bob")
    token = (await login(steady, "bob"))["token"]
    assert (await hello(steady, token))["token"] == token


async def test_redis_holds_no_session_token(local_node: Any, open_client: Any, redis_url: str) -> None:
    node = await local_node()
    guest: Client = await open_client(node, "Guest")
    ann: Client = await open_client(node, "Ann", account=True)
    session = await login(node, ann.username)
    tokens = {guest.token, ann.token, session["token"]}
    redis = aioredis.from_url(redis_url, decode_responses=False)
    try:
        seen: list[bytes] = []
        async for key in redis.scan_iter(count=1000):
            seen.append(key)
            kind = (await redis.type(key)).decode()
            if kind == "string":
                seen.append(await redis.get(key) or b"")
            elif kind == "hash":
                for field, value in (await redis.hgetall(key)).items():
                    seen += [field, value]
            elif kind == "list":
                seen += await redis.lrange(key, 0, -1)
            elif kind in ("set", "zset"):
                seen += await (redis.smembers(key) if kind == "set" else redis.zrange(key, 0, -1))
            else:
                seen.append(await redis.dump(key) or b"")
        assert len(seen) > 10
        for token in tokens:
            assert not any(token.encode() in item for item in seen), "a raw token is stored"
        assert not any(PASSWORD.encode() in item for item in seen), "a raw password is stored"
        password = (await redis.hget(f"player:{ann.player}".encode(), b"password")) or b""
        assert password.startswith(b"$argon2id$")
    finally:
        await redis.aclose()


async def test_a_guest_asking_for_ranked_play_is_told_to_register_or_play_casually(
    local_node: Any, open_client: Any
) -> None:
    node = await local_node()
    guest: Client = await open_client(node, "Guest")
    host: Client = await open_client(node, "Host", account=True)
    rated = await host.request({"type": "room_create", "variant": "scorpion", "options": {"rated": True}})
    asks = [
        ({"type": "queue_join", "variant": "scorpion"}, "rated: false"),
        ({"type": "room_create", "variant": "scorpion", "options": {"rated": True}}, "rated: false"),
        ({"type": "room_join", "room": rated["room"]}, "unrated room"),
        ({"type": "daily_start"}, "practice: true"),
    ]
    for ask, casual in asks:
        answer = await guest.request(ask)
        assert answer["type"] == "error" and answer["code"] == "account_required", (ask, answer)
        assert "register" in answer["message"] and casual in answer["message"], answer
    # The casual form is one step away.
    assert (await guest.request({"type": "queue_join", "variant": "scorpion", "rated": False}))[
        "type"
    ] == "queued"
    await guest.request({"type": "queue_cancel"})
    practice = await guest.request({"type": "daily_start", "practice": True})
    assert practice["type"] == "race_started" and practice["mode"] == "practice"
    board = await guest.request({"type": "rating_board"})
    assert board["type"] == "rating_page"  # boards can be read
    await guest.request({"type": "resign", "game": practice["game"], "v": practice["v"]})
    await guest.expect("race_ended")
    # The guest saw the day's deal: registering does not give a ranked attempt of it.
    await guest.register()
    assert (await guest.request({"type": "daily_start"}))["code"] == "daily_already_played"
    assert (await guest.request({"type": "queue_join", "variant": "scorpion"}))["type"] == "queued"


async def test_a_guest_who_registers_keeps_their_history(local_node: Any, open_client: Any) -> None:
    node = await local_node()
    ann: Client = await open_client(node, "Ann")
    solo = await ann.request({"type": "solo_new"})
    await ann.request({"type": "resign", "game": solo["game"], "v": solo["v"]})
    await ann.expect("race_ended")
    before = await ann.request({"type": "stats"})
    profile = await ann.request({"type": "profile"})
    await ann.register("ann")
    ann2: Client = await open_client(node, "Ann", token=(await login(node, "ann"))["token"])
    assert ann2.player == ann.player
    assert (await ann2.request({"type": "stats"}))["stats"] == before["stats"]
    assert (await ann2.request({"type": "profile"}))["recent"] == profile["recent"]


async def test_a_password_change_revokes_every_other_session(local_node: Any, open_client: Any) -> None:
    node = await local_node()
    ann: Client = await open_client(node, "Ann")
    await ann.register("ann")
    other = await login(node, "ann")
    tablet: Client = await open_client(node, "Ann", token=other["token"])
    wrong = await ann.request(
        {"type": "password_change", "password": "not it at all", "new_password": "n3w pass"}
    )
    assert wrong["code"] == "bad_login"
    old_token = ann.token
    changed = await ann.request({"type": "password_change", "password": PASSWORD, "new_password": "n3w pass"})
    assert changed["type"] == "session" and changed["token"] != old_token
    assert (await tablet.expect("_closed"))["error"].count("1008") >= 1
    for token in (other["token"], old_token):
        assert (await hello(node, token))["code"] == "bad_token"
    assert (await hello(node, changed["token"]))["type"] == "welcome"
    assert (await ann.request({"type": "sessions"}))["type"] == "sessions_list"  # still connected
    assert (await login(node, "ann"))["code"] == "bad_login"
    assert (await login(node, "ann", "n3w pass"))["type"] == "session"


async def test_forget_me_revokes_every_session_and_holds_the_username_back(
    local_node: Any, open_client: Any
) -> None:
    node = await local_node()
    ann: Client = await open_client(node, "Ann")
    await ann.register("ann")
    other = await login(node, "ann")
    forgotten = await ann.request({"type": "forget_me"})
    assert forgotten["removed"]["sessions"] == 2
    for token in (other["token"], ann.token):
        assert (await hello(node, token))["code"] == "bad_token"
    assert (await login(node, "ann"))["code"] == "bad_login"
    newcomer: Client = await open_client(node, "Ann")
    taken = await newcomer.request({"type": "register", "username": "ann", "password": PASSWORD})
    assert taken["code"] == "username_taken"
    assert re.search(r"taken", taken["message"])


async def test_one_address_makes_few_accounts_and_is_locked_out_after_failed_logins(
    local_node: Any, open_client: Any
) -> None:
    # Every test client comes from 127.0.0.1: the limits per address count them together.
    node = await local_node(accounts_per_day=2, login_failures=3, login_lockout=60.0)
    ann: Client = await open_client(node, "Ann")
    assert (await ann.register("ann"))["username"] == "ann"
    bob: Client = await open_client(node, "Bob")
    taken = await bob.request({"type": "register", "username": "ANN", "password": PASSWORD})
    assert taken["code"] == "username_taken"  # refused without costing one of the address's accounts
    assert (await bob.register("bob"))["username"] == "bob"
    cat: Client = await open_client(node, "Cat")
    third = await cat.request({"type": "register", "username": "cat", "password": PASSWORD})
    assert third["code"] == "rate_limited" and "accounts" in third["message"], third
    # three failed logins (unknown names or wrong passwords, any account) lock the address out
    answers = [(await login(node, name, "wrong password"))["code"] for name in ("ann", "bob", "nobody")]
    assert answers == ["bad_login", "bad_login", "rate_limited"]
    refused = await login(node, "bob")  # the right password too, while the lockout lasts
    assert refused["code"] == "rate_limited" and refused["retry_after_ms"] > 0
