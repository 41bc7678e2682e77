"""What a finished game leaves behind: statistics, saved games, the daily board, analyses, ratings."""

from __future__ import annotations

import json
from typing import Any

from ..daily import DailyService, leaderboard_key
from ..fairplay import FairPlay
from ..ratings import RatingService
from ..runtime.service import Plumbing, Service
from ..solver import SolverPool, analyze_game
from ..store import UNREACHABLE, is_ghost
from .live import LiveGame

__all__ = ["Results"]


class Results(Service):
    """Record finished games (the race service calls :meth:`race_done`)."""

    def __init__(
        self,
        plumbing: Plumbing,
        daily: DailyService,
        solver: SolverPool,
        ratings: RatingService,
        fairplay: FairPlay,
    ) -> None:
        super().__init__(plumbing)
        self.fairplay = fairplay
        self.daily = daily
        self.solver = solver
        self.ratings = ratings
        self.keep_ms = int(self.config.finished_game_ttl * 1000)

    def solo_played(self, player: str, variant: str) -> None:
        """Count a solo game as played, at its first move (a game left, deleted or replaced
        before it counts as none); in the background, after the move's answer, and again
        once storage is back if it is unreachable just then."""
        self.tasks.spawn(self._count_start(player, variant))

    async def _count_start(self, player: str, variant: str) -> None:
        while True:
            try:
                await self.store.count_start(player, variant)
                return
            except UNREACHABLE:
                await self.store.health.wait_to_retry()

    async def race_done(
        self, game: LiveGame, standings: list[dict[str, Any]], finished: dict[str, int]
    ) -> None:
        """Record a finished game: statistics, saved games, the daily leaderboard, ratings.

        Nothing is written of a racer who asked to be forgotten during the game (their seat
        is marked so): no statistics, result, analysis, daily attempt or board entry, and
        no rating; the others' ratings count the race as usual (decision 15).
        """
        forgotten = await self._forgotten(game, standings)
        ranked = (game.options.rated and game.mode == "race" and len(standings) >= 2) or (
            game.mode == "daily" and bool(game.daily)
        )
        if game.options.rated and game.mode == "race" and len(standings) >= 2:
            self.tasks.spawn(self.ratings.rate_when_reachable(game, standings, forgotten))
        for row in standings:
            player = row["player"]
            if player in forgotten or is_ghost(player):  # a recorded run is nobody's game
                continue
            won = row["status"] == "finished"
            if game.mode == "solo" and not int(game.summary.get(player, {}).get("moves", 0)):
                # Ended before a move: not a game played (no statistics, no recent game); the
                # analysis still says whether the deal could have been won.
                await self.store.unsave_game(player, game.game_id)
                self.tasks.spawn(self._analyze(game, player))
                continue
            if game.mode != "practice":
                await self.store.count_finish(
                    player,
                    game.variant,
                    won=won,
                    score=row["score"],
                    elapsed=row["elapsed"],
                    daily=game.mode == "daily",
                )
                await self.store.add_result(player, game.game_id)
            if game.mode == "solo":
                await self.store.unsave_game(player, game.game_id)
            if game.mode != "practice":
                self.tasks.spawn(self._analyze(game, player))
            if ranked:
                opponents = [r["player"] for r in standings if r["player"] != player]
                self.tasks.spawn(
                    self.fairplay.review(
                        game.game_id,
                        game.mode,
                        game.variant,
                        game.number,
                        game.rule.value,
                        game.start,
                        player,
                        opponents if game.mode == "race" else [],
                        game.daily if game.mode == "daily" else None,
                    )
                )
            if game.mode == "daily" and game.daily:
                keep = self.daily.keep_ms
                await self.store.finish_daily_attempt(game.daily, game.variant, player, keep)
                day_start = self.daily.bounds(game.daily)[0]
                key = leaderboard_key(
                    row["score"], row["status"], row["elapsed"], finished[player], day_start
                )
                entry = json.dumps(
                    {
                        "name": row["name"],
                        "score": row["score"],
                        "elapsed": row["elapsed"],
                        "finished": finished[player],
                        "status": row["status"],
                    }
                )
                await self.store.submit_score(game.daily, game.variant, player, key, entry, keep)

    async def _forgotten(self, game: LiveGame, standings: list[dict[str, Any]]) -> frozenset[str]:
        """Return the racers whose seat in the game is marked forgotten (or is gone)."""
        seats = [await self.store.racer(game.game_id, row["player"]) for row in standings]
        return frozenset(
            row["player"]
            for row, seat in zip(standings, seats, strict=True)
            if seat is None or seat.fields.get("forgotten")
        )

    async def _analyze(self, game: LiveGame, player: str) -> None:
        """Compute, store and push one racer's post-game analysis."""
        racer = await self.store.racer(game.game_id, player)
        if racer is None:
            return
        result = await self.solver.run(analyze_game, game.variant, game.number, game.rule.value, racer.moves)
        await self.store.save_analysis(game.game_id, player, json.dumps(result), self.keep_ms)
        if game.daily and not self.daily.is_over(game.daily):
            return  # it would give the day's deal away: asked for once the day is over
        await self.store.notify(player, {"kind": "analysis", "game": game.game_id, "analysis": result})
