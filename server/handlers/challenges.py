"""Challenges: making one, taking one, its board, the player's list, the daily's ghosts."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from protocol.wire import message as m
from protocol.wire.error import ErrorCode, ProtocolError

from ..node import Node
from ..session import Session

__all__ = [
    "on_challenge_board",
    "on_challenge_create",
    "on_challenge_list",
    "on_challenge_new",
    "on_challenge_take",
    "on_daily_ghost",
]


async def on_challenge_create(node: Node, session: Session, message: m.ChallengeCreate) -> None:
    """Make a challenge of one of the player's finished games."""
    assert session.player is not None
    session.send(await node.challenges.create(session.player, message.game, message.ref))


async def on_challenge_new(node: Node, session: Session, message: m.ChallengeNew) -> None:
    """Start a fresh deal whose run becomes a challenge when it ends."""
    await node.challenges.start_new(session, message)


T = TypeVar("T")


async def by_code(node: Node, session: Session, call: Callable[[], Awaitable[T]]) -> T:
    """Await ``call``, a request by challenge code, counted as room codes are: a code that
    names no challenge counts against the client's address (``room_code``), and past the
    limit every code is refused for a while, so that codes cannot be found by guessing."""
    await node.limits.check(session.address, "room_code")
    try:
        return await call()
    except ProtocolError as exc:
        if exc.code is ErrorCode.NO_SUCH_CHALLENGE:
            await node.limits.take(session.address, "room_code")
        raise


async def on_challenge_take(node: Node, session: Session, message: m.ChallengeTake) -> None:
    """Race a challenge's ghosts on its deal."""
    await by_code(node, session, lambda: node.challenges.take(session, message))


async def on_challenge_board(node: Node, session: Session, message: m.ChallengeBoard) -> None:
    """Send a challenge's ghosts and its takers' results."""
    session.send(await by_code(node, session, lambda: node.challenges.board(message.code, message.ref)))


async def on_challenge_list(node: Node, session: Session, message: m.ChallengeList) -> None:
    """Send the player's own challenges with their boards."""
    assert session.player is not None
    session.send(await node.challenges.mine(session.player, message.ref))


async def on_daily_ghost(node: Node, session: Session, message: m.DailyGhost) -> None:
    """Practise today's daily deal against a board player's ranked run."""
    await node.challenges.daily_ghost(session, message)
