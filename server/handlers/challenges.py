"""Challenges: making one, taking one, its board, the player's list, the daily's ghosts."""

from __future__ import annotations

from protocol.wire import message as m

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


async def on_challenge_take(node: Node, session: Session, message: m.ChallengeTake) -> None:
    """Race a challenge's ghosts on its deal."""
    await node.challenges.take(session, message)


async def on_challenge_board(node: Node, session: Session, message: m.ChallengeBoard) -> None:
    """Send a challenge's ghosts and its takers' results."""
    session.send(await node.challenges.board(message.code, message.ref))


async def on_challenge_list(node: Node, session: Session, message: m.ChallengeList) -> None:
    """Send the player's own challenges with their boards."""
    assert session.player is not None
    session.send(await node.challenges.mine(session.player, message.ref))


async def on_daily_ghost(node: Node, session: Session, message: m.DailyGhost) -> None:
    """Practise today's daily deal against a board player's ranked run."""
    await node.challenges.daily_ghost(session, message)
