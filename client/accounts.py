"""The account requests of the client library: log in before hello, register, change the
password, log out, list and revoke sessions; :class:`~client.api.ScorpionClient` has them."""

from __future__ import annotations

from protocol.wire.message import (
    Login,
    Logout,
    Ok,
    PasswordChange,
    Register,
    SessionGranted,
    SessionRevoke,
    Sessions,
    SessionsList,
    Welcome,
)

from .connection import Connection
from .identity import Identity

__all__ = ["AccountClient"]


class AccountClient(Connection):
    """A connection that may log in to an account before its hello, and the account requests."""

    credentials: tuple[str, str] | None = None
    """A username and password to log in with on the next connection, before its hello
    (then forgotten: the session token the login gives is kept, in the token store too)."""

    async def _hello(self) -> Welcome:
        if self.credentials is not None:
            username, password = self.credentials
            login = Login(username=username, password=password, device=self.client_name)
            granted = await self._request(login, need_ready=False)
            assert isinstance(granted, SessionGranted)
            self.credentials = None
            self.token = granted.token
        return await super()._hello()

    def _keep(self, granted: SessionGranted) -> SessionGranted:
        """Use and store the session token an account request gave."""
        self.token = granted.token
        if self.store is not None:
            self.store.save(self.urls[0], Identity(granted.token, self.name, granted.player))
        return granted

    async def register(self, username: str, password: str) -> SessionGranted:
        """Turn this guest into an account (same player, history kept); keeps the new token."""
        return self._keep(await self._typed(Register(username=username, password=password), SessionGranted))

    async def password_change(self, password: str, new_password: str) -> SessionGranted:
        """Change the account's password: every session is revoked, this one gets a new token."""
        change = PasswordChange(password=password, new_password=new_password)
        return self._keep(await self._typed(change, SessionGranted))

    async def logout(self) -> Ok:
        """End this session on the server and forget its stored token; the server closes."""
        answer = await self._typed(Logout(), Ok)
        if self.store is not None:
            self.store.forget(self.urls[0])
        self.token = None
        return answer

    async def sessions(self) -> SessionsList:
        """List this player's live sessions, the most recently used first."""
        return await self._typed(Sessions(), SessionsList)

    async def session_revoke(self, session: str | None = None, *, all: bool = False) -> Ok:
        """Revoke one session by id, or (``all``) every session but this one."""
        return await self._typed(SessionRevoke(session=session, all=all), Ok)
