"""Accounts and sessions: usernames, passwords, session tokens, ranked play's gate.

A guest is what ``hello`` without a token gives: a player id and a session whose token is
kept ``guest_retention``. ``register`` turns the guest into an account (same player id, so
everything they played stays theirs) with a username and a password (or a passkey:
:mod:`server.passkeys`); ``login`` gives a new session of an account, kept
``session_idle`` unused. A session token presented in ``hello`` is replaced by a new one
at most once a ``session_rotation``; the old one works ``session_overlap`` longer, so a
reconnect that raced the rotation is not logged out.
Only SHA-256 hashes of tokens are stored (decision 17).

Usernames are prepared and compared as RFC 8265's UsernameCaseMapped profile says
(``precis-i18n``), and are unique up to look-alikes: two usernames whose skeletons (UTS #39,
from Unicode's confusables data as ``confusable-homoglyphs`` ships it) are equal cannot
both be taken. Passwords are hashed with argon2id (``argon2-cffi``), off the event loop.
"""

from __future__ import annotations

import asyncio
import functools
import unicodedata

import argon2
import precis_i18n
from confusable_homoglyphs import confusables

from protocol.wire.error import ErrorCode, ProtocolError

from .game.live import now_ms
from .runtime.service import Service
from .session import Session
from .store.accounts import SessionRecord

__all__ = ["AccountService", "prepare_username", "require_account", "skeleton"]

_HASHER = argon2.PasswordHasher(type=argon2.Type.ID)
"""argon2id with the library's defaults (RFC 9106's second recommended profile)."""
_PROFILE = precis_i18n.get_profile("UsernameCaseMapped")
_MARKS = "\u200e\u200f"
"""Direction marks the confusables data wraps right-to-left characters in."""


def prepare_username(raw: str) -> str:
    """Return a username as the PRECIS UsernameCaseMapped profile enforces it (width mapped,
    case folded, NFC), or raise ``bad_field`` saying what it may not hold."""
    try:
        username: str = _PROFILE.enforce(raw)
    except UnicodeError as exc:
        start = getattr(exc, "start", None)
        if isinstance(start, int) and 0 <= start < len(raw):
            what = f"may not contain U+{ord(raw[start]):04X}"
        else:
            what = "must not be empty"
        raise ProtocolError(
            ErrorCode.BAD_FIELD,
            f"field 'username' {what}: a username is letters, digits and symbols, without "
            "spaces or characters that show as nothing",
            field="username",
        ) from None
    return username


@functools.cache
def _prototypes() -> dict[str, str]:
    """Map every character of a look-alike class to the class's one representative: an
    ASCII character where the class has one, else its lowest code point."""
    parent: dict[str, str] = {}

    def find(c: str) -> str:
        while parent.setdefault(c, c) != c:
            parent[c] = parent[parent[c]]
            c = parent[c]
        return c

    for source, entries in confusables.confusables_data.items():
        a = source.strip(_MARKS)
        for entry in entries:
            b = entry["c"].strip(_MARKS)
            if len(a) == 1 and len(b) == 1:
                ra, rb = find(a), find(b)
                if ra != rb:
                    parent[max(ra, rb, key=_rank)] = min(ra, rb, key=_rank)
    return {c: find(c) for c in parent}


def _rank(c: str) -> tuple[bool, int]:
    return (not c.isascii(), ord(c))


@functools.cache
def _expansions() -> dict[str, str]:
    """Map a class representative that looks like several characters to them (``m`` to
    ``rn``, as UTS #39's data has it), each of those a representative too."""
    table = _prototypes()
    found: dict[str, str] = {}
    for source, entries in confusables.confusables_data.items():
        a = source.strip(_MARKS)
        for entry in entries:
            b = entry["c"].strip(_MARKS)
            if len(a) == 1 and len(b) > 1 and table.get(a, a) == a:
                found.setdefault(a, "".join(table.get(c, c) for c in b))
    return found


def skeleton(username: str) -> str:
    """Return the look-alike skeleton of a prepared username (after UTS #39: decomposed,
    each character replaced by its class's representative, or the characters it looks
    like, decomposed again), without combining marks: a dot or a stroke added to a letter
    does not make another username."""
    table, expand = _prototypes(), _expansions()
    parts = []
    for c in unicodedata.normalize("NFD", username):
        if unicodedata.category(c) in ("Mn", "Me"):
            continue
        r = table.get(c, c)
        parts.append(expand.get(r, r))
    mapped = unicodedata.normalize("NFD", "".join(parts))
    return "".join(c for c in mapped if unicodedata.category(c) not in ("Mn", "Me"))


def require_account(session: Session, what: str, casual: str) -> None:
    """Raise ``account_required`` unless the session's player is an account."""
    if session.username is None:
        raise ProtocolError(
            ErrorCode.ACCOUNT_REQUIRED,
            f"{what} needs an account: register (a passkey in the browser, or a username and a "
            f"password) to keep a rating, or {casual}",
        )


class AccountService(Service):
    """Sessions and accounts of one node: what the account handlers and ``hello`` call."""

    def _ttl_ms(self, account: bool) -> int:
        return int((self.config.session_idle if account else self.config.guest_retention) * 1000)

    def retention_ms(self, account: bool) -> int:
        """Return how long a player's keys are kept after their last visit."""
        seconds = self.config.account_retention if account else self.config.guest_retention
        return int(seconds * 1000)

    # -- sessions -----------------------------------------------------------------------

    async def open(self, player: str, device: str, account: bool) -> tuple[str, str]:
        """Open a session of a player; return its token and id."""
        return await self.store.open_session(player, device, now_ms(), self._ttl_ms(account))

    async def resume(self, token: str) -> tuple[SessionRecord, str, dict[str, str]]:
        """Return the session a token stands for, the token to use from now on (a new one
        when the rotation is due) and the player's ``name`` (and ``username`` for an
        account); raise ``bad_token`` for an unknown, expired or revoked token."""
        record = await self.store.session_of(token)
        player = await self.store.account(record["player"]) if record else {}
        if record is None or "name" not in player:
            raise ProtocolError(
                ErrorCode.BAD_TOKEN,
                "that token is unknown, expired or revoked: log in again, or say hello without it",
            )
        ttl, now = self._ttl_ms("username" in player), now_ms()
        due = now - record["born"] >= self.config.session_rotation * 1000 or not record["current"]
        if due:
            overlap = int(self.config.session_overlap * 1000)
            token = await self.store.rotate_session(record, token, now, ttl, overlap)
        else:
            await self.store.touch_session(record, token, now, ttl)
        return record, token, player

    # -- accounts -----------------------------------------------------------------------

    async def available(self, raw: str) -> str:
        """Return a username as prepared, or raise ``username_taken`` when it (or a look-alike)
        is an account's already (a hint before a passkey is made: ``register`` decides)."""
        username = prepare_username(raw)
        if await self.store.player_of_username(skeleton(username)) is not None:
            raise _taken(username)
        return username

    async def register(
        self, player: str, raw: str, password: str | None, retention_ms: int, day: str = ""
    ) -> tuple[str, str]:
        """Make a guest an account with a password (``None``: its credential is a passkey,
        stored by the caller); return its username and skeleton (``username_taken`` when it,
        or a look-alike, is another account's; ``not_allowed`` when the player is an account
        already, or becoming one on another connection). ``day``: the daily's date now, kept
        as the day the account was made."""
        username = prepare_username(raw)
        shape = skeleton(username)
        if not await self.store.begin_account(player, shape):
            raise ProtocolError(
                ErrorCode.NOT_ALLOWED, "you are an account already (or becoming one on another connection)"
            )
        try:
            if not await self.store.claim_username(shape, player, retention_ms):
                raise _taken(username)
            if password is None:
                await self.store.make_passkey_account(player, username, shape, day)
            else:
                digest = await asyncio.to_thread(_HASHER.hash, password)
                await self.store.make_account(player, username, shape, digest, day)
        except BaseException:
            await self.store.release_username(shape, player)
            await self.store.abandon_account(player, shape)
            raise
        return username, shape

    async def _locked_out(self, shape: str) -> None:
        """Refuse (``login_locked``) while the username's lockout lasts."""
        now = now_ms()
        until = await self.store.login_locked_until(shape)
        if until > now:
            raise _locked(until - now)

    async def _wrong(self, shape: str) -> None:
        """Count a wrong password for a username; raise ``login_locked`` once it locks."""
        now = now_ms()
        free, first = self.config.account_login_failures, int(self.config.account_login_lockout * 1000)
        until = await self.store.login_failed(shape, now, free, first)
        if until > now:
            raise _locked(until - now)

    async def _verify(self, player: str, shape: str, stored: str, password: str) -> bool:
        """Check a password against an account's stored hash, counting a wrong one."""
        try:
            await asyncio.to_thread(_HASHER.verify, stored, password)
        except (argon2.exceptions.VerificationError, argon2.exceptions.InvalidHashError):
            await self._wrong(shape)
            return False
        await self.store.login_succeeded(shape)
        if _HASHER.check_needs_rehash(stored):
            await self.store.set_password(player, await asyncio.to_thread(_HASHER.hash, password))
        return True

    async def check_password(self, player: str, password: str) -> bool:
        """Tell whether ``password`` is the account's, with the growing lockout: a locked
        account's logins are refused (``login_locked``) without looking at the password."""
        account = await self.store.account(player)
        shape = account.get("skeleton", player)
        await self._locked_out(shape)
        return await self._verify(player, shape, account.get("password", ""), password)

    async def login(self, raw: str, password: str) -> tuple[str, str]:
        """Return the player id and username of an account whose password this is; else
        ``bad_login``. An unknown username, an account without a password and a wrong
        password look the same: the same answer, an argon2 hash's time, and the same
        lockout after wrong tries (it is kept per username, known or not)."""
        try:
            shape = skeleton(prepare_username(raw))
        except ProtocolError:
            shape = "\x00" + raw.casefold()  # no username can have it: counted apart
        await self._locked_out(shape)
        player = await self.store.player_of_username(shape)
        account = await self.store.account(player) if player else {}
        stored = account.get("password")
        if player is None or not stored:
            await asyncio.to_thread(_HASHER.hash, password)  # as long as a wrong password takes
            await self._wrong(shape)
            raise _bad_login()
        if not await self._verify(player, shape, stored, password):
            raise _bad_login()
        return player, account["username"]

    async def change_password(self, player: str, new_password: str) -> None:
        """Store a new password of an account."""
        await self.store.set_password(player, await asyncio.to_thread(_HASHER.hash, new_password))


def _taken(username: str) -> ProtocolError:
    return ProtocolError(
        ErrorCode.USERNAME_TAKEN,
        f"the username {username!r}, or one that looks the same, is taken: choose another",
        field="username",
    )


def _bad_login() -> ProtocolError:
    return ProtocolError(ErrorCode.BAD_LOGIN, "no account has this username and password")


def _locked(wait_ms: int) -> ProtocolError:
    seconds = max(1, -(-wait_ms // 1000))
    return ProtocolError(
        ErrorCode.LOGIN_LOCKED,
        f"too many wrong passwords for this username: try again in {seconds} s",
    )
