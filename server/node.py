"""What every feature of a node shares: its settings, store, services and connections.

The handlers (``server/handlers/``) receive a :class:`Node` and a session; nothing here
handles a message itself.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from .accounts import AccountService
from .challenges import ChallengeService
from .daily import DailyService
from .fairplay import FairPlay
from .game.feed import GameFeed
from .game.live import LiveGame
from .game.race import NOT_RACING, RaceService, own
from .game.results import Results
from .leaderboard import Leaderboards
from .limits import Limits
from .matchmaking import Matchmaker
from .passkeys import PasskeyService
from .presence import Presence
from .ratings import RatingService
from .runtime.service import Plumbing, Service
from .session import Session
from .solver import SolverPool

__all__ = ["Handler", "Node"]

log = logging.getLogger("scorpion.server")

Handler = Callable[["Node", Session, Any], Awaitable[None]]
"""A message handler: ``async def on_x(node, session, message) -> None``."""


class Node(Service):
    """One node's shared state and services, wired together once Redis answers."""

    def __init__(self, plumbing: Plumbing, clock: Callable[[], float]) -> None:
        super().__init__(plumbing)
        config = plumbing.config
        self.clock = clock
        self.sessions: set[Session] = set()
        store = plumbing.store
        self.daily = DailyService(store, clock=clock, keep_days=config.leaderboard_days)
        self.race = RaceService(
            store,
            node_name=self.node_name,
            time_limit=config.race_time_limit,
            keep_finished=config.finished_game_ttl,
        )
        self.feed = GameFeed(plumbing, self.race, self.daily)
        self.solver = SolverPool(self.node_name)
        self.ratings = RatingService(plumbing)
        self.matchmaker = Matchmaker(plumbing, clock=lambda: int(clock() * 1000))
        """Forms rated matches; the node's start says how a match is started (``on_match``)."""
        self.fairplay = FairPlay(plumbing, self.solver)
        self.results = Results(plumbing, self.daily, self.solver, self.ratings, self.fairplay)
        self.challenges = ChallengeService(plumbing, self.race, self.feed, self.daily)
        self.race.listen(
            on_game_loaded=self.feed.game_loaded,
            on_race_done=self._race_done,
            on_event=self.feed.local_event,
        )
        self.presence = Presence(plumbing, self.race, self.feed)
        self.accounts = AccountService(plumbing)
        self.passkeys = PasskeyService(plumbing)
        """Passkey (WebAuthn) ceremonies: accounts made, extended and logged in with passkeys."""
        self.leaderboards = Leaderboards(plumbing)
        self.limits = Limits(plumbing)
        """Abuse limits per client address (new guests, accounts, failed logins, room codes)."""
        self.test_deals = [int(n) for n in config.test_deals.split(",") if n.strip()]
        if self.test_deals:
            log.warning(
                "using fixed test deals: never do this in production", extra={"deals": config.test_deals}
            )

    async def _race_done(
        self, game: LiveGame, standings: list[dict[str, Any]], finished: dict[str, int]
    ) -> None:
        # the challenge's board first: its taker asks for it as soon as the race ends
        await self.challenges.race_done(game, standings, finished)
        await self.results.race_done(game, standings, finished)

    def spawn(self, coro: Awaitable[Any]) -> Any:
        """Run a background task the node keeps track of (and cancels at shutdown)."""
        return self.tasks.spawn(coro)

    async def own_game(self, session: Session, game_id: str, stranger: str = NOT_RACING) -> LiveGame:
        """Return a kept game the session's player races in; else ``no_such_game`` or ``not_your_game``."""
        return own(await self.race.load(game_id), game_id, session.player, stranger)

    def next_test_deal(self) -> int | None:
        """Return the next fixed deal number of a test run, or ``None`` (a fresh secret deal)."""
        if not self.test_deals:
            return None
        return self.test_deals.pop(0) if len(self.test_deals) > 1 else self.test_deals[0]
