"""The daily tournament: the day's deal, the ranked attempt and practice, the leaderboards."""

from __future__ import annotations

import dataclasses

from protocol.wire import message as m
from protocol.wire.error import ErrorCode, ProtocolError

from ..accounts import require_account
from ..game.live import GameSpec, new_game_id
from ..launch import start_single
from ..node import Node
from ..session import Session

__all__ = [
    "DAILY_OPTIONS",
    "PRACTICE_OPTIONS",
    "on_around_me",
    "on_daily_info",
    "on_daily_start",
    "on_leaderboard",
]

DAILY_OPTIONS = m.Options(undo=False, hints=False, spectators=True)
"""The ranked attempt: no undo and no hints, as in a rated race (decision 13), and
spectators once their own attempt is over."""
PRACTICE_OPTIONS = m.Options(undo=True, hints=False, spectators=False)
"""Practice on the day's deal, after the ranked attempt: unranked and unwatched, with undo."""


async def on_daily_info(node: Node, session: Session, message: m.DailyInfo) -> None:
    """Say what today's deal is (its commitment), whether the player has played it, and yesterday's."""
    assert session.player is not None
    daily = node.daily
    date = daily.today()
    deal = await daily.deal(date, message.variant)
    attempt, done = await daily.attempt_over(date, message.variant, session.player)
    previous = None
    before = daily.previous_day(date)
    revealed = await node.store.daily_deal(before, message.variant)
    if "commitment" in revealed:
        previous = {"date": before, **revealed}
    session.send(
        m.Daily(
            date=date,
            variant=message.variant,
            commitment=deal.commitment,
            ends=daily.bounds(date)[1],
            played=attempt is not None,
            finished=done,
            previous=previous,
            ref=message.ref,
        )
    )


async def on_daily_start(node: Node, session: Session, message: m.DailyStart) -> None:
    """Start the player's one ranked attempt of today's deal, or practice once it is over."""
    assert session.player is not None
    daily = node.daily
    date = daily.today()
    variant = message.variant
    deal = await daily.deal(date, variant)
    attempt, done = await daily.attempt_over(date, variant, session.player)
    day = GameSpec(
        variant=variant, options=DAILY_OPTIONS, mode="daily", number=deal.number, salt=deal.salt, daily=date
    )
    if session.username is None and not message.practice:
        require_account(
            session,
            "the daily's ranked attempt",
            "play the day's deal unranked, with undo: daily_start with practice: true",
        )
    if message.practice:
        if session.username is None:
            # A guest's unranked attempt: the day's ranked attempt is used by it, so that a
            # guest who practised the deal and then registers cannot rank on it.
            practice = new_game_id()
            await node.store.claim_daily_attempt(date, variant, session.player, practice, daily.keep_ms)
            spec = dataclasses.replace(day, mode="practice", options=PRACTICE_OPTIONS)
            await start_single(node, session, spec, message.ref, practice)
            return
        if not done:
            raise ProtocolError(
                ErrorCode.NOT_ALLOWED, "practice opens once your ranked attempt of today is over"
            )
        await start_single(
            node, session, dataclasses.replace(day, mode="practice", options=PRACTICE_OPTIONS), message.ref
        )
        return
    await node.fairplay.check_ranked(session.player)
    if await _made_again_today(node, session, date):
        raise ProtocolError(
            ErrorCode.DAILY_ALREADY_PLAYED,
            "today's ranked attempt was played from your address by a player since forgotten: "
            "an account made here today ranks from tomorrow (practice is open)",
        )
    game_id = new_game_id()
    if attempt is not None or not await node.store.claim_daily_attempt(
        date, variant, session.player, game_id, daily.keep_ms
    ):
        raise ProtocolError(
            ErrorCode.DAILY_ALREADY_PLAYED,
            "you have used today's ranked attempt: resume it, "
            "or ask with practice: true to replay the deal unranked",
        )
    await start_single(node, session, day, message.ref, game_id)


async def on_leaderboard(node: Node, session: Session, message: m.Leaderboard) -> None:
    """Send one page of a day's leaderboard; with ``subscribe``, push it again as it changes."""
    date = message.date or node.daily.today()
    page = await node.leaderboards.page(
        session.player, message.variant, date, message.offset, message.limit, message.ref
    )
    session.send(page)
    if message.subscribe:
        await node.leaderboards.follow(session, date, message.variant, message.limit)


async def on_around_me(node: Node, session: Session, message: m.AroundMe) -> None:
    """Send the rows of a day's leaderboard around the player's own."""
    assert session.player is not None
    date = message.date or node.daily.today()
    rank = await node.store.board_rank(date, message.variant, session.player)
    if rank is None:
        total, _ = await node.store.board_page(date, message.variant, 0, 0)
        session.send(
            m.LeaderboardPage(
                variant=message.variant, date=date, offset=0, total=total, entries=(), ref=message.ref
            )
        )
        return
    offset = max(0, rank - message.radius)
    limit = rank - offset + message.radius + 1
    session.send(
        await node.leaderboards.page(session.player, message.variant, date, offset, limit, message.ref)
    )


async def _made_again_today(node: Node, session: Session, date: str) -> bool:
    """Tell whether the session's account was made today, from an address where a player
    was forgotten today after a ranked attempt (forget_me, then a new account)."""
    assert session.player is not None
    made = (await node.store.account(session.player)).get("made")
    return made == date and await node.daily.used_by_the_forgotten(date, session.address)
