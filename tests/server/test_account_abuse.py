"""What an attacker tried against accounts, as tests against a real Redis: registrations at
once past the day's limit, one guest registering twice at once, a flood of logins, usernames
found out by their lockout, look-alikes by combining marks and letter pairs, a credential
too deeply nested to parse, a stolen old session adding a credential, and a guest scouting
the daily's leader (issue "Accounts, sessions and abuse limits")."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from server.accounts import prepare_username, skeleton
from server.store import Store

from .authenticator import Authenticator
from .conftest import PASSWORD, Client
from .test_passkeys import connected, origin_of, page, passkey_login


async def login(node: Any, username: str, password: str = PASSWORD) -> dict[str, Any]:
    client = await connected(node, origin=None)
    try:
        return await client.request({"type": "login", "username": username, "password": password})
    finally:
        await client.close()


async def ask(client: Client, message: dict[str, Any]) -> dict[str, Any]:
    """Send a request; return its answer, or the close if the connection closes first."""
    ref = await client.send(message)
    while True:
        answer = await asyncio.wait_for(client.inbox.get(), 10)
        if answer.get("ref") == ref or answer["type"] == "_closed":
            return answer


@pytest.mark.asyncio
async def test_registrations_at_once_stay_within_the_day_s_accounts_and_a_taken_name_costs_nothing(
    local_node: Any, open_client: Any
) -> None:
    node = await local_node(accounts_per_day=5)
    taken: Client = await open_client(node, "Tak", account=False)
    guests = [await open_client(node, f"G{i}", account=False) for i in range(10)]
    # A username already taken is given back to the day's count.
    assert (await guests[0].request({"type": "register", "username": "tak", "password": PASSWORD}))[
        "type"
    ] == "session"
    assert (await taken.request({"type": "register", "username": "TAK", "password": PASSWORD}))[
        "code"
    ] == "username_taken"
    answers = await asyncio.gather(
        *(
            g.request({"type": "register", "username": f"racer{i}", "password": PASSWORD})
            for i, g in enumerate(guests[1:])
        )
    )
    kinds = sorted(a.get("code", a["type"]) for a in answers)
    assert kinds == ["rate_limited"] * 5 + ["session"] * 4, kinds  # 1 + 4 = the day's 5


@pytest.mark.asyncio
async def test_one_guest_registering_twice_at_once_becomes_one_account(
    local_node: Any, open_client: Any, redis_url: str
) -> None:
    node = await local_node()
    one: Client = await open_client(node, "Twin", account=False)
    two: Client = await open_client(node, "Twin", token=one.token, account=False)
    first, second = await asyncio.gather(
        ask(one, {"type": "register", "username": "twin_a", "password": "first password"}),
        ask(two, {"type": "register", "username": "twin_b", "password": "second password"}),
    )
    made = [a for a in (first, second) if a["type"] == "session"]
    assert len(made) == 1, (first, second)
    other = second if made[0] is first else first
    assert other["type"] in ("error", "_closed"), other
    if other["type"] == "error":
        assert other["code"] == "not_allowed"
    won, lost = ("twin_a", "twin_b") if made[0] is first else ("twin_b", "twin_a")
    password = "first password" if won == "twin_a" else "second password"
    assert (await login(node, won, password))["type"] == "session"
    assert (await login(node, lost, password))["code"] == "bad_login"
    store = Store(redis_url)
    held = await store.player_of_username(skeleton(prepare_username(lost)))
    await store.close()
    assert held is None  # the loser's username is not squatted


@pytest.mark.asyncio
async def test_logins_right_or_wrong_are_limited_per_address(local_node: Any, open_client: Any) -> None:
    limited = await local_node(logins_per_minute=3)
    await (await open_client(limited, "Bo", account=False)).register("bo_l")
    answers = [(await login(limited, "bo_l")).get("code", "session") for _ in range(3)]
    assert answers == ["session"] * 3, answers
    assert (await login(limited, "bo_l"))["code"] == "rate_limited"


@pytest.mark.asyncio
async def test_an_unknown_username_locks_out_like_a_known_one(local_node: Any, open_client: Any) -> None:
    node = await local_node(account_login_failures=3, account_login_lockout=60.0)
    ann: Client = await open_client(node, "Ann", account=False)
    await ann.register("ann_l")
    for who in ("ann_l", "nobody_here"):
        answers = [(await login(node, who, "wrong password"))["code"] for _ in range(3)]
        assert answers == ["bad_login", "bad_login", "login_locked"], (who, answers)
        locked = await login(node, who, "wrong password")
        assert locked["code"] == "login_locked" and "this username" in locked["message"]


@pytest.mark.asyncio
async def test_a_passkey_only_account_s_password_login_is_counted_like_a_wrong_one(
    local_node: Any, open_client: Any
) -> None:
    node = await local_node(account_login_failures=2, account_login_lockout=60.0)
    key = Authenticator(origin_of(node))
    ann = await page(node, open_client)
    challenge = await ann.request({"type": "passkey_options", "purpose": "register", "username": "pk_only"})
    await ann.request({"type": "passkey_register", "credential": key.create(challenge["options"])})
    answers = [(await login(node, "pk_only", "any password"))["code"] for _ in range(2)]
    assert answers == ["bad_login", "login_locked"]


def test_look_alikes_by_marks_and_letter_pairs_are_one_username() -> None:
    same = [
        ("mail29b", "rnail29b"),  # "rn" looks like "m" (UTS #39)
        ("mail29b", "mail29b\u0323"),  # a dot below
        ("mail29b", "mai\u0332l29b"),  # a low line
        ("al7e7fa", "al7e7f\u0227"),  # a with a dot above
        ("jose", "josé"),
        ("alice", "\u0430lice"),  # Cyrillic a
    ]
    for a, b in same:
        assert skeleton(prepare_username(a)) == skeleton(prepare_username(b)), (a, b)
    for a, b in (("ann", "anne"), ("abc", "abd"), ("walt", "wall")):
        assert skeleton(prepare_username(a)) != skeleton(prepare_username(b)), (a, b)


@pytest.mark.asyncio
async def test_a_credential_nested_too_deep_is_a_bad_passkey_not_a_failure(
    local_node: Any, open_client: Any
) -> None:
    node = await local_node()
    client = await connected(node)
    for nested in ("[" * 2000 + "]" * 2000, '{"a":' * 1000 + "1" + "}" * 1000):
        await client.request({"type": "passkey_options", "purpose": "login"})
        answer = await client.request({"type": "passkey_login", "credential": nested})
        assert answer["code"] == "bad_passkey", answer
    await client.close()
    ann = await page(node, open_client)
    challenge = await ann.request({"type": "passkey_options", "purpose": "register", "username": "deep"})
    assert challenge["type"] == "passkey_challenge"
    answer = await ann.request({"type": "passkey_register", "credential": '{"a":' * 1000 + "1" + "}" * 1000})
    assert answer["code"] == "bad_passkey", answer


@pytest.mark.asyncio
async def test_an_old_session_cannot_add_a_credential(
    local_node: Any, open_client: Any, redis_url: str
) -> None:
    node = await local_node()
    key = Authenticator(origin_of(node))
    ann = await page(node, open_client)
    challenge = await ann.request({"type": "passkey_options", "purpose": "register", "username": "old_s"})
    granted = await ann.request({"type": "passkey_register", "credential": key.create(challenge["options"])})
    login_id = granted["session"]
    # The session was opened an hour ago (as a token copied from an old session would be).
    store = Store(redis_url)
    raw = await store.redis.hget(f"sessions:{ann.player}", login_id)
    entry = json.loads(raw)
    entry["created"] -= 3_600_000
    await store.redis.hset(f"sessions:{ann.player}", login_id, json.dumps(entry))
    await store.close()
    more = await ann.request({"type": "passkey_options", "purpose": "register"})
    assert more["code"] == "not_allowed" and "recent sign-in" in more["message"]
    first = await ann.request({"type": "password_change", "password": "", "new_password": "a new password"})
    assert first["code"] == "not_allowed" and "recent sign-in" in first["message"]
    # Signing in again opens a fresh session that may.
    session = await passkey_login(node, key)
    fresh = await page(node, open_client, token=session["token"])
    assert (await fresh.request({"type": "passkey_options", "purpose": "register"}))[
        "type"
    ] == "passkey_challenge"
    assert (
        await fresh.request({"type": "password_change", "password": "", "new_password": "a new password"})
    )["type"] == "session"


@pytest.mark.asyncio
async def test_a_guest_neither_watches_nor_races_the_ghosts_of_today_s_daily(
    local_node: Any, open_client: Any
) -> None:
    node = await local_node()
    leader: Client = await open_client(node, "Lea", account=True)
    attempt = await leader.request({"type": "daily_start"})
    assert attempt["type"] == "race_started"
    guest: Client = await open_client(node, "Scout", account=False)
    practice = await guest.request({"type": "daily_start", "practice": True})
    await guest.request({"type": "resign", "game": practice["game"], "v": practice["v"]})
    await guest.expect("race_ended")
    watched = await guest.request({"type": "watch", "game": attempt["game"]})
    assert watched["code"] == "account_required", watched
    ghost = await guest.request({"type": "daily_ghost"})
    assert ghost["code"] == "account_required", ghost


@pytest.mark.asyncio
async def test_forget_me_then_a_new_account_from_the_same_address_does_not_rank_today_again(
    local_node: Any, open_client: Any, redis_url: str
) -> None:
    node = await local_node(trusted_proxies="127.0.0.1/32")
    home, elsewhere = {"X-Forwarded-For": "203.0.113.7"}, {"X-Forwarded-For": "198.51.100.9"}
    ann: Client = await open_client(node, "Ann", headers=home, account=True)
    attempt = await ann.request({"type": "daily_start"})
    assert attempt["type"] == "race_started"
    forgotten = await ann.request({"type": "forget_me"})  # mid-attempt: resigned, then erased
    assert forgotten["type"] == "forgotten"
    again: Client = await open_client(node, "Ann2", headers=home, account=True)
    refused = await again.request({"type": "daily_start"})
    assert refused["code"] == "daily_already_played" and "since forgotten" in refused["message"]
    practice = await again.request({"type": "daily_start", "practice": True})
    assert practice["code"] == "not_allowed"  # no ranked attempt made: practice waits as ever
    # Someone else, from another address, ranks as usual; only a keyed hash is kept.
    other: Client = await open_client(node, "Cy", headers=elsewhere, account=True)
    assert (await other.request({"type": "daily_start"}))["type"] == "race_started"
    store = Store(redis_url)
    keys = [k async for k in store.redis.scan_iter("daily:*:forgotten")]
    assert len(keys) == 1
    (mark,) = await store.redis.smembers(keys[0])
    text = mark.decode() if isinstance(mark, bytes) else mark
    assert len(text) == 64 and "203.0.113.7" not in text and await store.redis.pttl(keys[0]) > 0
    await store.close()
