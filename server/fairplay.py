"""Fair play: every ranked game analysed after it ends, the review queue, and bans.

After a rated race or a ranked daily attempt ends, each racer's actions and move times go
through the pure analysis (:func:`protocol.fairplay.game_evidence`) in the node's solver
worker; the evidence is kept with the player's last ranked games, and a player whose score
over them reaches the threshold goes to the review queue (decision 16). An operator reviews
it with ``scorpion-admin`` (:mod:`server.admin`), and bans or lets go; a banned player gets
``banned`` for every ranked request. The moderation itself (:func:`ban`, :func:`unban`)
works on a bare :class:`~server.store.Store`, so the console script needs no node.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from protocol.fairplay import NODES, PLAYER_THRESHOLD, game_evidence, player_score
from protocol.wire.error import ErrorCode, ProtocolError

from .runtime.service import Plumbing, Service
from .solver import SolverPool
from .store import Store

__all__ = ["PRIOR_GAMES", "REFUND_DAYS", "FairPlay", "ban", "dismiss", "unban"]

log = logging.getLogger("scorpion.fairplay")

REFUND_DAYS = 30
"""A ban gives back the rating points opponents lost to the player in this many days."""
DAY_MS = 24 * 3600 * 1000
PRIOR_GAMES = 200
"""A ranked daily attempt is compared with up to this many other games of the day's deal."""


class FairPlay(Service):
    """Analyse finished ranked games, and refuse ranked play to banned players."""

    def __init__(self, plumbing: Plumbing, solver: SolverPool) -> None:
        super().__init__(plumbing)
        self.solver = solver

    async def check_ranked(self, player: str) -> None:
        """Refuse a ranked request of a banned player with ``banned`` and the ban's reason."""
        record = await self.store.banned(player)
        if record is not None:
            raise ProtocolError(ErrorCode.BANNED, f"banned from ranked play: {record.get('reason', '')}")

    async def review(
        self,
        game_id: str,
        mode: str,
        variant: str,
        number: int,
        rule: str,
        start: int,
        player: str,
        opponents: list[str],
        daily: str | None = None,
    ) -> None:
        """Analyse one racer's finished ranked game and update their fair-play record.

        A daily attempt (``daily``: its day) is also compared with the other games of the
        day's deal: the other players' ranked attempts and guests' practice."""
        racer = await self.store.racer(game_id, player)
        if racer is None:
            return
        now = int(time.time() * 1000)
        if mode == "race" and opponents:
            await self.store.remember_rated_race(player, game_id, opponents, now)
        times: list[int] = []
        for _, raw in await self.store.events(game_id, 0):
            event = json.loads(raw)
            if event["type"] == "move" and event.get("player") == player:
                times.append(max(0, int(event.get("at", start)) - start))
        earlier = await self.store.daily_games(daily, variant, player, PRIOR_GAMES) if daily else []
        evidence = await self.solver.run(
            game_evidence, variant, number, rule, racer.moves, times, NODES, None, [e[2] for e in earlier]
        )
        match = evidence["prior"].pop("match")
        if match is not None:  # the earlier game the attempt follows most, for the operator
            evidence["prior"]["game"], evidence["prior"]["player"] = earlier[match][:2]
        entry = {"game": game_id, "mode": mode, "variant": variant, "at": now, **evidence}
        games = await self.store.add_fairplay_game(player, entry)
        if await self.store.drop_fairplay_if_forgotten(player):
            return  # forgotten meanwhile: nothing of them is kept (decision 15)
        score = player_score([g["score"] for g in games])
        if score >= PLAYER_THRESHOLD and await self.store.banned(player) is None:
            await self.store.put_in_review(player, score)
            log.warning("player in fair-play review", extra={"player": player, "score": score})


async def ban(store: Store, player: str, reason: str, by: str, now_ms: int) -> dict[str, Any]:
    """Ban a player from ranked play: off every rating and daily board, opponents refunded
    the points they lost to them in the last ``REFUND_DAYS`` days; logged. Return what was done."""
    record = {"reason": reason, "by": by, "at": now_ms}
    first = await store.ban(player, record)
    variants, boards = await store.drop_from_boards(player)
    refunds: list[dict[str, Any]] = []
    since = now_ms - REFUND_DAYS * DAY_MS
    for game, race in sorted((await store.rated_races(player)).items()):
        opponents = [o for o in race["opponents"] if o != player]
        if race["at"] < since or not opponents:
            continue
        for opponent in opponents:
            stored = (await store.rating_changes(opponent, [game])).get(game)
            if not stored:
                continue
            change = json.loads(stored)
            lost = int(change["before"]) - int(change["after"])
            if lost <= 0:
                continue
            points = round(lost / len(opponents), 1)
            rating = await store.refund(opponent, change["variant"], game, points, player)
            if rating is not None:
                refunds.append({"player": opponent, "game": game, "points": points, "rating": round(rating)})
    done = {
        "action": "ban",
        "player": player,
        "reason": reason,
        "by": by,
        "at": now_ms,
        "already": not first,
        "rating_boards": variants,
        "daily_boards": boards,
        "refunds": refunds,
    }
    await store.log_action(done)
    return done


async def unban(store: Store, player: str, reason: str, by: str, now_ms: int) -> dict[str, Any]:
    """Lift a player's ban (ranked play allowed again; boards and refunds stay as they are); logged."""
    lifted = await store.unban(player)
    done = {
        "action": "unban",
        "player": player,
        "reason": reason,
        "by": by,
        "at": now_ms,
        "was_banned": lifted,
    }
    await store.log_action(done)
    return done


async def dismiss(store: Store, player: str, reason: str, by: str, now_ms: int) -> dict[str, Any]:
    """Take a player off the review queue without a ban (their next games count as before:
    they come back if their score stays over the threshold); logged."""
    listed = await store.dismiss(player)
    done = {
        "action": "dismiss",
        "player": player,
        "reason": reason,
        "by": by,
        "at": now_ms,
        "was_listed": listed,
    }
    await store.log_action(done)
    return done
