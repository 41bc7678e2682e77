"""The daily leaderboards as pages, and their followers on this node."""

from __future__ import annotations

import contextlib
import json
from typing import Any

from protocol.wire.message import LeaderboardEntry, LeaderboardPage

from .runtime.service import Plumbing, Service
from .session import Session
from .store import board_channel, board_of_channel

__all__ = ["Leaderboards"]


class Leaderboards(Service):
    """Read leaderboard pages; push a followed board again whenever it changes."""

    def __init__(self, plumbing: Plumbing) -> None:
        super().__init__(plumbing)
        self.watchers: dict[tuple[str, str], set[Session]] = {}

    async def page(
        self, player: str | None, variant: str, date: str, offset: int, limit: int, ref: Any = None
    ) -> LeaderboardPage:
        """Return one page of a day's board, with ``player``'s own rank."""
        total, rows = await self.store.board_page(date, variant, offset, limit)
        entries = []
        for index, (pid, raw) in enumerate(rows):
            entry = json.loads(raw)
            entries.append(
                LeaderboardEntry(
                    rank=offset + index + 1,
                    player=pid,
                    name=entry["name"],
                    score=entry["score"],
                    elapsed=entry["elapsed"],
                    finished=entry["finished"],
                    status=entry.get("status"),
                )
            )
        rank = await self.store.board_rank(date, variant, player) if player else None
        return LeaderboardPage(
            variant=variant,
            date=date,
            offset=offset,
            total=total,
            entries=tuple(entries),
            me=None if rank is None else rank + 1,
            ref=ref,
        )

    async def follow(self, session: Session, date: str, variant: str, limit: int) -> None:
        """Push a day's board's first ``limit`` rows to the session whenever it changes."""
        key = (date, variant)
        watchers = self.watchers.setdefault(key, set())
        if not watchers:
            await self.hub.subscribe(board_channel(date, variant), self._on_board_change)
        watchers.add(session)
        session.boards[key] = limit

    async def drop(self, session: Session) -> None:
        """Stop pushing boards to a closed connection."""
        for key in list(session.boards):
            watchers = self.watchers.get(key, set())
            watchers.discard(session)
            if not watchers:
                self.watchers.pop(key, None)
                with contextlib.suppress(Exception):
                    await self.hub.unsubscribe(board_channel(*key), self._on_board_change)

    def _on_board_change(self, channel: str, data: str) -> None:
        date, variant = board_of_channel(channel)
        for session in list(self.watchers.get((date, variant), ())):
            limit = session.boards.get((date, variant), 20)
            self.tasks.spawn(self._push(session, variant, date, limit))

    async def _push(self, session: Session, variant: str, date: str, limit: int) -> None:
        session.send(await self.page(session.player, variant, date, 0, limit))
