"""Accounts and sessions: register, log in and out, change the password, list and revoke sessions."""

from __future__ import annotations

import contextlib

from protocol.game import VARIANTS
from protocol.wire import message as m
from protocol.wire.error import ErrorCode, ProtocolError
from protocol.wire.flow import CLOSE_NORMAL

from ..game.live import now_ms
from ..node import Node
from ..session import Session
from .players import device_of

__all__ = [
    "on_login",
    "on_logout",
    "on_passkey_login",
    "on_passkey_options",
    "on_passkey_register",
    "on_password_change",
    "on_register",
    "on_session_revoke",
    "on_sessions",
]


async def on_login(node: Node, session: Session, message: m.Login) -> None:
    """Before hello: open a session of the account whose username and password these are.

    Logins are limited per client address (``login``: so many a minute, right or wrong),
    and failed ones too (``login_failed``): after a few, the address is locked out for a
    while, each lockout longer, whatever account it tries.
    """
    await node.limits.check(session.address, "login_failed")
    await node.limits.take(session.address, "login")
    try:
        player, username = await node.accounts.login(message.username, message.password)
    except ProtocolError as exc:
        if exc.code is ErrorCode.BAD_LOGIN:
            await node.limits.take(session.address, "login_failed")
        raise
    token, sid = await node.accounts.open(player, device_of(session, message.device), account=True)
    granted = m.SessionGranted(player=player, username=username, token=token, session=sid, ref=message.ref)
    session.send(granted)


async def on_register(node: Node, session: Session, message: m.Register) -> None:
    """Turn the connection's guest into an account: same player id, everything they played
    kept, now kept ``account_retention``; their session is replaced by an account's."""
    assert session.player is not None
    if session.username is not None:
        raise ProtocolError(ErrorCode.NOT_ALLOWED, f"you are the account {session.username!r} already")
    player, accounts = session.player, node.accounts
    kept = accounts.retention_ms(True)
    username = await _made_account(node, session, message.username, message.password)
    await node.store.keep_player(player, accounts.retention_ms(False), list(VARIANTS), kept)
    await _new_session(node, session, username, message.ref, revoke="current")


async def _made_account(node: Node, session: Session, raw: str, password: str | None) -> str:
    """Make the session's guest an account (a password, or ``None`` for a passkey the
    caller stores); return its username. New accounts a day from one address are counted
    before (so that registrations at once cannot pass the limit together), and a
    registration that fails (a username taken) is given back."""
    assert session.player is not None
    await node.limits.take(session.address, "account")
    try:
        kept, day = node.accounts.retention_ms(True), node.daily.today()
        username, _ = await node.accounts.register(session.player, raw, password, kept, day)
    except BaseException:
        with contextlib.suppress(Exception):
            await node.limits.give_back(session.address, "account")
        raise
    return username


RECENT_SIGN_IN_MS = 10 * 60_000
"""How recent a session's sign-in must be to add a credential (a passkey, a first password)."""


async def _require_recent_sign_in(node: Node, session: Session, what: str) -> None:
    """Refuse ``what`` unless this connection's session was opened in the last few minutes:
    a token copied from an old session cannot add a credential and keep the account."""
    assert session.player is not None
    entry = (await node.store.sessions(session.player)).get(session.login or "")
    if entry is None or now_ms() - int(entry["created"]) > RECENT_SIGN_IN_MS:
        raise ProtocolError(
            ErrorCode.NOT_ALLOWED,
            f"{what} needs a recent sign-in: sign in again, then retry within "
            f"{RECENT_SIGN_IN_MS // 60_000} minutes",
        )


async def on_password_change(node: Node, session: Session, message: m.PasswordChange) -> None:
    """Change the account's password (or set the first one of an account made with a
    passkey, ``password`` empty): every session is revoked, this connection gets a new one."""
    assert session.player is not None
    if session.username is None:
        raise ProtocolError(ErrorCode.ACCOUNT_REQUIRED, "a guest has no password: register first")
    if (await node.store.account(session.player)).get("password"):
        await node.limits.check(session.address, "login_failed")
        if not await node.accounts.check_password(session.player, message.password):
            await node.limits.take(session.address, "login_failed")
            raise ProtocolError(ErrorCode.BAD_LOGIN, "the current password is wrong", field="password")
    elif message.password:  # an account made with a passkey sets its first password
        raise ProtocolError(
            ErrorCode.BAD_FIELD,
            "field 'password' must be empty: this account has no password yet (it was made with a passkey)",
            field="password",
        )
    else:
        await _require_recent_sign_in(node, session, "setting a first password")
    await node.accounts.change_password(session.player, message.new_password)
    await _new_session(node, session, session.username, message.ref, revoke="all")


async def _new_session(node: Node, session: Session, username: str, ref: m.Ref | None, revoke: str) -> None:
    """Give the connection a new account session and revoke the one it had (``current``) or
    every other (``all``); send the new token."""
    assert session.player is not None
    player = session.player
    known = await node.store.sessions(player)
    old = session.login
    device = known[old]["device"] if old in known else device_of(session, None)
    token, sid = await node.accounts.open(player, device, account=True)
    session.login, session.username = sid, username
    await node.store.revoke_sessions(player, [s for s in known if revoke == "all" or s == old])
    session.send(m.SessionGranted(player=player, username=username, token=token, session=sid, ref=ref))


async def on_logout(node: Node, session: Session, message: m.Logout) -> None:
    """End the connection's session: its token stops working; the connection closes."""
    assert session.player is not None
    if session.username is None:
        raise ProtocolError(
            ErrorCode.NOT_ALLOWED, "a guest has no account to log out of (forget_me erases a guest)"
        )
    sid, session.login = session.login, None
    if sid is not None:
        await node.store.revoke_sessions(session.player, [sid])
    session.send(m.Ok(to="logout", ref=message.ref))
    session.closing = True
    node.spawn(session.close_after_flush(CLOSE_NORMAL, "logged out"))


async def on_sessions(node: Node, session: Session, message: m.Sessions) -> None:
    """List the player's live sessions, the most recently used first."""
    assert session.player is not None
    known = await node.store.sessions(session.player)
    entries = [
        m.SessionEntry(
            session=sid,
            device=entry["device"],
            created=entry["created"],
            seen=entry["seen"],
            current=sid == session.login,
        )
        for sid, entry in known.items()
    ]
    entries.sort(key=lambda e: (-e.seen, e.session))
    session.send(m.SessionsList(sessions=tuple(entries), ref=message.ref))


async def on_session_revoke(node: Node, session: Session, message: m.SessionRevoke) -> None:
    """Revoke one of the player's sessions, or every one but this connection's."""
    assert session.player is not None
    known = await node.store.sessions(session.player)
    if message.all:
        targets = [sid for sid in known if sid != session.login]
    elif message.session in known:
        targets = [message.session]
    else:
        raise ProtocolError(
            ErrorCode.BAD_FIELD, "field 'session' names none of your live sessions", field="session"
        )
    await node.store.revoke_sessions(session.player, targets)
    session.send(m.Ok(to="session_revoke", ref=message.ref))


# -- passkeys -----------------------------------------------------------------------------


async def on_passkey_options(node: Node, session: Session, message: m.PasskeyOptions) -> None:
    """Begin a passkey ceremony: ``register`` after hello (a guest names its username, an
    account adds a passkey), ``login`` before hello. The challenge is this connection's."""
    passkeys = node.passkeys
    if message.purpose == "login":
        if message.username is not None:
            raise ProtocolError(
                ErrorCode.BAD_FIELD,
                "field 'username' is for register only: a passkey login names no username",
                field="username",
            )
        if session.player is not None:
            raise ProtocolError(
                ErrorCode.NOT_ALLOWED, "log in before hello: open a new connection to log in with a passkey"
            )
        await node.limits.check(session.address, "login_failed")
        pending, options = passkeys.begin_login(session)
    else:
        if session.player is None:
            raise ProtocolError(
                ErrorCode.HELLO_FIRST, "send 'hello' before making a passkey", ref=message.ref
            )
        player = session.player
        if session.username is not None:
            await _require_recent_sign_in(node, session, "adding a passkey")
            username = session.username
        elif message.username is None:
            raise ProtocolError(
                ErrorCode.BAD_FIELD,
                "field 'username' is needed: the username your account will have",
                field="username",
            )
        else:
            await node.limits.check(session.address, "account")
            username = await node.accounts.available(message.username)
        known = list(await node.store.passkeys(player))
        pending, options = passkeys.begin_register(session, player, username, session.name, known)
    session.passkey = pending
    timeout = pending.deadline - now_ms()
    session.send(
        m.PasskeyChallenge(purpose=pending.purpose, options=options, timeout_ms=timeout, ref=message.ref)
    )


async def on_passkey_register(node: Node, session: Session, message: m.PasskeyRegister) -> None:
    """Finish making a passkey: a guest becomes an account with it (a new session, as
    ``register`` gives), an account keeps one more passkey."""
    assert session.player is not None
    pending = node.passkeys.take(session, "register")
    made = node.passkeys.finish_register(pending, message.credential, device_of(session, None))
    accounts, player = node.accounts, session.player
    kept = accounts.retention_ms(True)
    if session.username is not None:
        await node.store.save_passkey(player, made.credential, made.record, kept)
        session.send(m.Ok(to="passkey_register", ref=message.ref))
        return
    assert pending.username is not None
    username = await _made_account(node, session, pending.username, None)
    await node.store.save_passkey(player, made.credential, made.record, kept)
    await node.store.keep_player(player, accounts.retention_ms(False), list(VARIANTS), kept)
    await _new_session(node, session, username, message.ref, revoke="current")


async def on_passkey_login(node: Node, session: Session, message: m.PasskeyLogin) -> None:
    """Before hello: open a session of the account whose passkey signed the challenge.

    A passkey that does not verify counts as a failed login of the client address."""
    await node.limits.check(session.address, "login_failed")
    await node.limits.take(session.address, "login")
    try:
        pending = node.passkeys.take(session, "login")
        player, credential = node.passkeys.claimed(message.credential)
        stored = (await node.store.passkeys(player)).get(credential)
        if stored is None or stored.get("rp") != pending.rp_id:
            raise ProtocolError(
                ErrorCode.BAD_PASSKEY, "this passkey belongs to no account here (it may have been removed)"
            )
        count = node.passkeys.finish_login(pending, message.credential, stored)
        account = await node.store.account(player)
        if "username" not in account:
            raise ProtocolError(ErrorCode.BAD_PASSKEY, "this passkey's account is gone")
    except ProtocolError as exc:
        if exc.code is ErrorCode.BAD_PASSKEY:
            await node.limits.take(session.address, "login_failed")
        raise
    kept = node.accounts.retention_ms(True)
    await node.store.save_passkey(player, credential, stored | {"count": count, "used": now_ms()}, kept)
    token, sid = await node.accounts.open(player, device_of(session, message.device), account=True)
    session.send(
        m.SessionGranted(
            player=player, username=account["username"], token=token, session=sid, ref=message.ref
        )
    )
