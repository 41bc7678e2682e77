"""Passkeys against a real Redis and a software authenticator: an account made with a
passkey, a login with it on another connection, a passkey added to a password account, and
every answer that must not verify (replayed, another origin, another key, a cloned
authenticator, no challenge), which counts as a failed login of the address (issue
"Accounts, sessions and abuse limits", point 1)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from websockets.asyncio.client import connect

from protocol.wire.codec import MSGPACK
from server.store import Store

from .authenticator import Authenticator, b64url
from .conftest import Client

pytestmark = pytest.mark.asyncio


def origin_of(node: Any) -> str:
    return node.url.replace("ws://", "http://").rstrip("/")


async def connected(node: Any, origin: str | None = "") -> Client:
    """Open a connection that has not said hello yet, from a page of ``origin`` (the
    node's own by default; ``None``: no Origin, as a client that is no browser)."""
    headers = {} if origin is None else {"Origin": origin or origin_of(node)}
    ws = await connect(node.url, subprotocols=[MSGPACK], additional_headers=headers)  # type: ignore[list-item]
    return Client(ws, MSGPACK)


async def page(node: Any, open_client: Any, name: str = "Ann", token: str | None = None) -> Client:
    """A browser page's connection that said hello."""
    headers = {"Origin": origin_of(node)}
    client: Client = await open_client(node, name, token=token, headers=headers, account=False)
    return client


async def make_account(client: Client, key: Authenticator, username: str) -> dict[str, Any]:
    challenge = await client.request({"type": "passkey_options", "purpose": "register", "username": username})
    assert challenge["type"] == "passkey_challenge", challenge
    return await client.request({"type": "passkey_register", "credential": key.create(challenge["options"])})


async def passkey_login(node: Any, key: Authenticator, **signing: Any) -> dict[str, Any]:
    """Log in with the authenticator's passkey on a new connection; return the answer."""
    client = await connected(node)
    try:
        challenge = await client.request({"type": "passkey_options", "purpose": "login"})
        if challenge["type"] != "passkey_challenge":
            return challenge
        credential = key.get(challenge["options"], **signing)
        return await client.request({"type": "passkey_login", "credential": credential, "device": "laptop"})
    finally:
        await client.close()


async def test_a_guest_makes_an_account_with_a_passkey_and_logs_in_with_it_elsewhere(
    local_node: Any, open_client: Any, redis_url: str
) -> None:
    node = await local_node()
    key = Authenticator(origin_of(node))
    ann = await page(node, open_client)
    challenge = await ann.request({"type": "passkey_options", "purpose": "register", "username": "Ann_K"})
    options = json.loads(challenge["options"])
    assert options["rp"]["id"] == "127.0.0.1" and options["user"]["name"] == "ann_k"
    assert options["authenticatorSelection"]["residentKey"] == "required"
    assert 0 < challenge["timeout_ms"] <= 120_000
    granted = await ann.request({"type": "passkey_register", "credential": key.create(challenge["options"])})
    assert granted["type"] == "session" and granted["player"] == ann.player and granted["username"] == "ann_k"
    queued = await ann.request({"type": "queue_join", "variant": "scorpion", "rated": True})
    assert queued["type"] == "queued"  # ranked play is open to the account

    session = await passkey_login(node, key)
    assert session["type"] == "session" and session["player"] == ann.player, session
    laptop: Client = await open_client(node, "Ann", token=session["token"], account=False)
    assert laptop.welcome["username"] == "ann_k" and laptop.welcome["player"] == ann.player
    listed = await laptop.request({"type": "sessions"})
    assert {s["device"] for s in listed["sessions"]} >= {"laptop"} and len(listed["sessions"]) == 2
    # The account has no password: a password login fails like any wrong one.
    login = await connected(node)
    answer = await login.request({"type": "login", "username": "ann_k", "password": "x" * 12})
    assert answer["code"] == "bad_login"
    await login.close()
    # It sets a first password (no current one to give), for the terminal client.
    change = {"type": "password_change", "new_password": "x" * 12}
    wrong = await laptop.request({**change, "password": "guess it"})
    assert wrong["code"] == "bad_field" and "no password yet" in wrong["message"]
    first = await laptop.request({**change, "password": ""})
    assert first["type"] == "session"
    login = await connected(node)
    answer = await login.request({"type": "login", "username": "ann_k", "password": "x" * 12})
    assert answer["type"] == "session" and answer["player"] == ann.player
    await login.close()
    assert (await passkey_login(node, key))["type"] == "session"  # the passkey still works

    store = Store(redis_url)  # a plain server or a cluster
    redis = store.redis
    raw = await redis.hgetall(f"passkeys:{ann.player}")
    stored = {(k.decode() if isinstance(k, bytes) else k): json.loads(v) for k, v in raw.items()}
    (record,) = stored.values()
    assert set(record) == {"key", "count", "rp", "device", "created", "used"} and record["count"] == 2
    assert record["used"] > 0 and list(stored) == [b64url(key.passkeys[0].credential)]
    assert await redis.pttl(f"passkeys:{ann.player}") > 0
    await store.close()


async def test_answers_that_must_not_verify_are_refused_and_count_as_failed_logins(
    local_node: Any, open_client: Any
) -> None:
    node = await local_node(login_failures=5, login_lockout=60.0)
    key = Authenticator(origin_of(node))
    ann = await page(node, open_client)
    assert (await make_account(ann, key, "ann_x"))["type"] == "session"

    # No challenge asked on this connection.
    client = await connected(node)
    alone = await client.request(
        {
            "type": "passkey_login",
            "credential": key.get(json.dumps({"rpId": "127.0.0.1", "challenge": "AAAA"})),
        }
    )
    assert alone["code"] == "bad_passkey" and "passkey_options" in alone["message"]
    # A login answer replayed on another connection: its challenge is not this one's.
    challenge = await client.request({"type": "passkey_options", "purpose": "login"})
    answer = key.get(challenge["options"])
    other = await connected(node)
    await other.request({"type": "passkey_options", "purpose": "login"})
    replayed = await other.request({"type": "passkey_login", "credential": answer})
    assert replayed["code"] == "bad_passkey" and "challenge" in replayed["message"]
    # The same answer on its own connection works once; the challenge is gone afterwards.
    assert (await client.request({"type": "passkey_login", "credential": answer}))["type"] == "session"
    again = await client.request({"type": "passkey_login", "credential": answer})
    assert again["code"] == "bad_passkey"
    await client.close()
    await other.close()
    # Signed for another site's page.
    assert (await passkey_login(node, key, origin="https://evil.example"))["code"] == "bad_passkey"
    # The fifth failure locks the address out: even the right passkey is refused, unread.
    fifth = await passkey_login(node, key, origin="https://evil.example")
    assert fifth["code"] == "rate_limited", fifth
    locked = await passkey_login(node, key)
    assert locked["code"] == "rate_limited", locked


async def test_a_cloned_or_foreign_passkey_does_not_log_in(local_node: Any, open_client: Any) -> None:
    node = await local_node()
    key = Authenticator(origin_of(node))
    ann = await page(node, open_client)
    assert (await make_account(ann, key, "ann_c"))["type"] == "session"
    assert (await passkey_login(node, key))["type"] == "session"
    key.passkeys[0].count = 0  # a copy of the authenticator, behind the original's counter
    cloned = await passkey_login(node, key)
    assert cloned["code"] == "bad_passkey" and "count" in cloned["message"].lower()
    # Another key claiming the same credential id and account.
    impostor = Authenticator(origin_of(node))
    impostor.create(
        json.dumps(
            {"rp": {"id": "127.0.0.1"}, "user": {"id": b64url(ann.player.encode())}, "challenge": "AA"}
        )
    )
    impostor.passkeys[0].credential = key.passkeys[0].credential
    impostor.passkeys[0].count = 50
    assert (await passkey_login(node, impostor))["code"] == "bad_passkey"
    # A passkey this server never stored (the account's id, an unknown credential).
    stranger = Authenticator(origin_of(node))
    stranger.create(
        json.dumps(
            {"rp": {"id": "127.0.0.1"}, "user": {"id": b64url(ann.player.encode())}, "challenge": "AA"}
        )
    )
    unknown = await passkey_login(node, stranger)
    assert unknown["code"] == "bad_passkey" and "no account" in unknown["message"]


async def test_an_account_adds_a_passkey_and_forget_me_removes_it(local_node: Any, open_client: Any) -> None:
    node = await local_node()
    key = Authenticator(origin_of(node))
    bob = await page(node, open_client, "Bob")
    await bob.register("bob_p")
    challenge = await bob.request({"type": "passkey_options", "purpose": "register"})
    assert json.loads(challenge["options"])["user"]["name"] == "bob_p"
    added = await bob.request({"type": "passkey_register", "credential": key.create(challenge["options"])})
    assert added == {"type": "ok", "to": "passkey_register", "ref": added["ref"]}
    # The same authenticator is told not to make a second passkey for the account.
    challenge = await bob.request({"type": "passkey_options", "purpose": "register"})
    excluded = json.loads(challenge["options"])["excludeCredentials"]
    assert [c["id"] for c in excluded] == [b64url(key.passkeys[0].credential)]
    session = await passkey_login(node, key)
    assert session["type"] == "session" and session["username"] == "bob_p"

    forgotten = await bob.request({"type": "forget_me"})
    assert forgotten["type"] == "forgotten"
    assert (await passkey_login(node, key))["code"] == "bad_passkey"


async def test_passkey_requests_out_of_place_get_clear_errors(local_node: Any, open_client: Any) -> None:
    node = await local_node()
    key = Authenticator(origin_of(node))
    taken = await page(node, open_client, "Cat")
    await taken.register("cat")
    dan = await page(node, open_client, "Dan")
    asked = await dan.request({"type": "passkey_options", "purpose": "register", "username": "CAT"})
    assert asked["code"] == "username_taken"  # said before the passkey is made
    nameless = await dan.request({"type": "passkey_options", "purpose": "register"})
    assert nameless["code"] == "bad_field" and nameless["field"] == "username"
    late = await dan.request({"type": "passkey_options", "purpose": "login"})
    assert late["code"] == "not_allowed" and "before hello" in late["message"]
    early = await connected(node)
    first = await early.request({"type": "passkey_options", "purpose": "register", "username": "eve"})
    assert first["code"] == "hello_first"
    await early.close()
    bot = await connected(node, origin=None)
    refused = await bot.request({"type": "passkey_options", "purpose": "login"})
    assert refused["code"] == "not_allowed" and "password" in refused["message"]
    await bot.close()
    # A registration answer that is no credential at all.
    await dan.request({"type": "passkey_options", "purpose": "register", "username": "dan"})
    junk = await dan.request({"type": "passkey_register", "credential": '{"id": 1}'})
    assert junk["code"] == "bad_passkey"
    # The username is still free: the account was not made.
    assert (await make_account(dan, key, "dan"))["type"] == "session"


async def test_the_relying_party_is_the_operator_setting_when_set(local_node: Any, open_client: Any) -> None:
    node = await local_node(passkey_rp_id="scorpion.example")
    key = Authenticator(origin_of(node))
    ann = await page(node, open_client)
    challenge = await ann.request({"type": "passkey_options", "purpose": "register", "username": "ann_rp"})
    assert json.loads(challenge["options"])["rp"]["id"] == "scorpion.example"
    assert (await ann.request({"type": "passkey_register", "credential": key.create(challenge["options"])}))[
        "type"
    ] == "session"
    assert (await passkey_login(node, key))["type"] == "session"
