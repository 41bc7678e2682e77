"""Abuse limits per client address: what one address may create or try, and how often.

Named limits, each an operator setting (``server/config.py``), counted in Redis so that
every node of a deployment shares them:

``guest``
    new guest identities (``hello`` without a token): ``--guests-per-minute``.
``account``
    new accounts: ``--accounts-per-day``.
``room_code``
    room codes that name no open room (joining or watching by code):
    ``--room-codes-per-minute``.
``login``
    logins tried (with a password or a passkey, right or wrong): ``--logins-per-minute``,
    so that nobody keeps the password hashing busy for others.
``login_failed``
    failed logins: after ``--login-failures`` of them the address is locked out for
    ``--login-lockout`` seconds, each next lockout twice as long, up to
    ``--login-lockout-max``; failures are forgotten a day after the last one.

The address is the session's (``session.address``: the socket's peer, or the client a
trusted proxy names). An IPv6 address counts by its /64 network, the block a single
customer usually gets. No address is exempt.
"""

from __future__ import annotations

import ipaddress
from typing import Literal

from protocol.wire.error import ErrorCode, ProtocolError
from protocol.wire.fields import MAX_RETRY_AFTER_MS

from .runtime.service import Plumbing, Service

__all__ = ["KINDS", "Kind", "Limits", "subject_of"]

Kind = Literal["guest", "account", "room_code", "login", "login_failed"]
KINDS: tuple[Kind, ...] = ("guest", "account", "room_code", "login", "login_failed")
MINUTE_MS = 60_000
DAY_MS = 24 * 3600 * 1000

_REFUSALS: dict[str, str] = {
    "guest": "too many new players from your address: wait a moment, or say hello with your token",
    "account": "too many new accounts from your address today",
    "room_code": "too many room codes that name no room from your address: check the code",
    "login": "too many logins from your address",
    "login_failed": "too many failed logins from your address",
}


def subject_of(address: str) -> str:
    """Return what an address is counted as: itself, or for IPv6 its /64 network."""
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(parsed, ipaddress.IPv6Address):
        if parsed.ipv4_mapped is not None:
            return str(parsed.ipv4_mapped)
        return str(ipaddress.IPv6Network((parsed, 64), strict=False))
    return str(parsed)


class Limits(Service):
    """The node's abuse limits per client address (shared through Redis by every node)."""

    def __init__(self, plumbing: Plumbing) -> None:
        super().__init__(plumbing)
        config = plumbing.config
        self.counted: dict[str, tuple[int, int]] = {
            "guest": (config.guests_per_minute, MINUTE_MS),
            "account": (config.accounts_per_day, DAY_MS),
            "room_code": (config.room_codes_per_minute, MINUTE_MS),
            "login": (config.logins_per_minute, MINUTE_MS),
        }
        """Kind -> (requests allowed, window in ms)."""

    async def take(self, address: str, kind: Kind) -> None:
        """Count one ``kind`` request from ``address``; refuse it if over the limit.

        For ``guest``: call it before creating the guest; for ``account``: :meth:`check`
        before making the account and this once it is made (a name already taken costs
        nothing); for ``room_code``: once a code has turned out to name no room. For
        ``login_failed``: call it after a login failed (wrong password or passkey); the
        failure that starts a lockout is refused too. Call :meth:`check` with
        ``login_failed`` before trying a login, so that a locked-out address is refused
        without its credentials being checked.

        Raises :class:`ProtocolError` ``rate_limited`` if the address is over the limit;
        its ``retry_after_ms`` says when the same request may succeed, at most the
        protocol's 60 s (a longer wait, such as a day's accounts or a long lockout, is
        said in the message, and a retry before its end is refused again).
        """
        if kind == "login_failed":
            wait = await self._lockout(address, record=True)
        else:
            allowed, window = self.counted[kind]
            wait = await self.store.count_hit(kind, subject_of(address), allowed, window)
        self._refuse_if(kind, wait)

    async def give_back(self, address: str, kind: Kind) -> None:
        """Uncount one ``kind`` request taken by :meth:`take` that turned out not to count
        (an account whose username was taken)."""
        await self.store.uncount_hit(kind, subject_of(address))

    async def check(self, address: str, kind: Kind) -> None:
        """Refuse (as :meth:`take` would) if the address is over the limit now, without
        counting a request."""
        if kind == "login_failed":
            wait = await self._lockout(address, record=False)
        else:
            wait = await self.store.hits_wait(kind, subject_of(address), self.counted[kind][0])
        self._refuse_if(kind, wait)

    async def _lockout(self, address: str, record: bool) -> int:
        config = self.config
        return await self.store.lockout(
            "login_failed",
            subject_of(address),
            failures=config.login_failures,
            first_ms=int(config.login_lockout * 1000),
            longest_ms=int(config.login_lockout_max * 1000),
            memory_ms=max(DAY_MS, int(config.login_lockout_max * 1000)),
            record=record,
        )

    def _refuse_if(self, kind: str, wait_ms: int) -> None:
        if wait_ms <= 0:
            return
        self.metrics.limited.labels(kind).inc()
        seconds = max(1, round(wait_ms / 1000))
        raise ProtocolError(
            ErrorCode.RATE_LIMITED,
            f"{_REFUSALS[kind]}: try again in {seconds} s",
            retry_after_ms=min(wait_ms, MAX_RETRY_AFTER_MS),
        )
