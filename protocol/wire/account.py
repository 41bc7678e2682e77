"""The messages of accounts and their sessions: register, log in and out, passwords, sessions.

A guest is what ``hello`` without a token gives; ``register`` (a password) or
``passkey_register`` (a passkey) turns the guest into an account (same player id, history
kept); ``login`` or ``passkey_login`` (before ``hello``) gives a session token of an
account to present in ``hello``. Public through :mod:`protocol.wire.message`, which
registers every message.
"""

from __future__ import annotations

from typing import Annotated, Literal

from msgspec import Meta

from .base import Record, Reply, Request
from .fields import MAX_LIST, Epoch, Id, Token, _bad, _kept

MAX_USERNAME = 32
"""Longest username, in characters, as sent (before the PRECIS preparation)."""
MIN_PASSWORD = 8
"""Shortest password, in characters."""
MAX_PASSWORD = 256
"""Longest password, in characters."""

Username = Annotated[str, Meta(min_length=1, max_length=MAX_USERNAME)]
Password = Annotated[str, Meta(max_length=MAX_PASSWORD)]
Device = Annotated[str, Meta(max_length=64)]
MAX_CREDENTIAL = 7000
"""Longest passkey credential, in characters of JSON (a client frame is at most 8 KiB)."""
Credential = Annotated[str, Meta(min_length=2, max_length=MAX_CREDENTIAL)]
"""A passkey's answer: the JSON text of the browser's ``PublicKeyCredential.toJSON()``."""
Options = Annotated[str, Meta(max_length=MAX_CREDENTIAL)]


def _check_password(value: str, wire: str) -> None:
    if len(value) < MIN_PASSWORD:
        raise _bad(wire, f"must be {MIN_PASSWORD} to {MAX_PASSWORD} characters")


class Register(Request, tag="register", frozen=True, kw_only=True):
    """Turn the guest into an account with a username and password (same player id, new token)."""

    username: Username
    password: Password

    def __post_init__(self) -> None:
        _check_password(self.password, "password")


class Login(Request, tag="login", frozen=True, kw_only=True):
    """Before hello: log in to an account (answered with session; then hello with its token)."""

    username: Username
    password: Password
    device: Device | None = None
    """What the client calls the device, shown in ``sessions`` (else the connection's User-Agent)."""


class Logout(Request, tag="logout", frozen=True, kw_only=True):
    """End this connection's session: its token stops working, the server closes with 1000."""


class PasswordChange(Request, tag="password_change", frozen=True, kw_only=True):
    """Change the password: every other session is revoked, this one gets a new token."""

    password: Password
    """The current password."""
    new_password: Password

    def __post_init__(self) -> None:
        _check_password(self.new_password, "new_password")


class SessionGranted(Reply, tag="session", frozen=True, kw_only=True):
    """Answer login, register and password_change: the session's token, to send in ``hello``."""

    player: Id
    username: Username
    token: Token
    session: Id
    """The session's id, as ``sessions`` lists it."""


class Sessions(Request, tag="sessions", frozen=True, kw_only=True):
    """List the player's sessions (answered with ``sessions_list``)."""


class SessionEntry(Record, frozen=True, kw_only=True):
    """One session of a player: where it was opened, when, when it was last used."""

    session: Id
    device: Device
    created: Epoch
    seen: Epoch
    current: bool = _kept(False)
    """Whether it is the session of the connection that asked."""


class SessionsList(Reply, tag="sessions_list", frozen=True, kw_only=True):
    """Answer sessions: the player's live sessions, the most recently used first."""

    sessions: Annotated[tuple[SessionEntry, ...], Meta(max_length=MAX_LIST)]


class SessionRevoke(Request, tag="session_revoke", frozen=True, kw_only=True):
    """Revoke one session (``session``) or every other one (``all``): their connections close."""

    session: Id | None = None
    all: bool = _kept(False)

    def __post_init__(self) -> None:
        if (self.session is None) == (not self.all):
            raise _bad("session", "must name one session, or be left out with all: true")


# -- passkeys (WebAuthn) ------------------------------------------------------------------


class PasskeyOptions(Request, tag="passkey_options", frozen=True, kw_only=True):
    """Ask for the WebAuthn options of a passkey ceremony: register (after hello), login (before)."""

    purpose: Literal["register", "login"]
    username: Username | None = None
    """For ``register`` by a guest: the username their account will have (an account adding a
    passkey, and ``login``, leave it out: a passkey names its own account)."""


class PasskeyChallenge(Reply, tag="passkey_challenge", frozen=True, kw_only=True):
    """Answer passkey_options: WebAuthn options as JSON text, good once on this connection."""

    purpose: Literal["register", "login"]
    options: Options
    timeout_ms: Annotated[int, Meta(ge=0, le=600_000)]
    """How long the challenge is good for."""


class PasskeyRegister(Request, tag="passkey_register", frozen=True, kw_only=True):
    """Send a new passkey: a guest becomes an account (``session``), an account adds one (``ok``)."""

    credential: Credential


class PasskeyLogin(Request, tag="passkey_login", frozen=True, kw_only=True):
    """Before hello: log in with a passkey's signed challenge (answered with ``session``)."""

    credential: Credential
    device: Device | None = None
    """What the client calls the device, shown in ``sessions`` (else the connection's User-Agent)."""
