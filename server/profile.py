"""Player profiles: name, ratings and statistics per variant, the newest finished games."""

from __future__ import annotations

import json
from collections.abc import Mapping

from protocol.game import VARIANTS
from protocol.wire.error import ErrorCode, ProtocolError
from protocol.wire.message import Options, Profile, RatingInfo, RecentGame, VariantStats

from .daily import DailyService
from .game.live import now_ms
from .ratings import rating_info
from .store import Store

__all__ = ["RECENT_GAMES", "build_profile", "variant_stats"]

RECENT_GAMES = 20
"""Finished games shown on a profile."""


def variant_stats(variant: str, raw: Mapping[str, str]) -> VariantStats:
    """Return a player's statistics in a variant from their stored counters."""
    finished = int(raw.get("finished", 0))
    return VariantStats(
        variant=variant,
        started=int(raw.get("started", 0)),
        won=int(raw.get("won", 0)),
        best_score=max(0, int(raw.get("best_score", 0))),
        best_time=int(raw["best_time"]) if "best_time" in raw else None,
        average_score=int(raw.get("total_score", 0)) // finished if finished else 0,
        streak=int(raw.get("streak", 0)),
        longest_streak=int(raw.get("longest_streak", 0)),
        dailies=int(raw.get("dailies", 0)),
    )


async def build_profile(store: Store, daily: DailyService, player_id: str, asking: str) -> Profile:
    """Return a player's profile as ``asking`` sees it; ``no_such_player`` if there is none."""
    if not await store.player_exists(player_id):
        raise ProtocolError(ErrorCode.NO_SUCH_PLAYER, "no player has that id (or they asked to be forgotten)")
    name = (await store.player_names([player_id]))[0]
    now = now_ms()
    ratings: list[RatingInfo] = []
    for variant, record in sorted((await store.player_ratings(player_id)).items()):
        if variant in VARIANTS:
            rank = await store.rating_rank(variant, player_id)
            ratings.append(rating_info(variant, record, now, rank))
    stats = [variant_stats(v, raw) for v, raw in (await store.stats(player_id, list(VARIANTS))).items()]
    games = await store.recent_results(player_id, RECENT_GAMES)
    changes = await store.rating_changes(player_id, [g["game"] for g in games])
    recent = []
    for game in games:
        standings = json.loads(game["standings"])
        row = next((r for r in standings if r["player"] == player_id), None)
        if row is None:
            continue
        options = Options.from_dict(json.loads(game["options"] or "{}"))
        change = None
        if game["game"] in changes:
            delta = json.loads(changes[game["game"]])
            change = int(delta["after"]) - int(delta["before"])
        recent.append(
            RecentGame(
                game=game["game"],
                variant=game["variant"],
                mode=game["mode"] or "race",
                start=int(game["start"] or 0),
                racers=len(standings),
                rank=int(row["rank"]),
                score=int(row["score"]),
                status=row["status"],
                rated=options.rated,
                change=change,
                replayable=not game["daily"] or daily.is_over(game["daily"]),
            )
        )
    return Profile(
        player=player_id,
        name=name,
        ratings=tuple(ratings),
        stats=tuple(stats),
        recent=tuple(recent),
        me=player_id == asking,
    )
