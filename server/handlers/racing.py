"""A racer's actions in their game: move, deal, undo, hint, resign, and resume."""

from __future__ import annotations

import asyncio
from typing import cast

from protocol.wire.error import ErrorCode, ProtocolError
from protocol.wire.message import (
    Batch,
    DealReserve,
    HintRequest,
    PlayMove,
    RacerEvent,
    Resign,
    Resume,
    Undo,
)

from ..node import Node
from ..session import Session

__all__ = ["on_deal", "on_hint", "on_move", "on_resign", "on_resume", "on_undo"]


GameAction = PlayMove | DealReserve | Undo | HintRequest | Resign
"""A racer's request about their own board in a game: each names the game and the version seen."""


async def _action(node: Node, session: Session, message: GameAction, kind: str) -> None:
    assert session.player is not None
    started = asyncio.get_running_loop().time()
    game_id, seen = message.game, message.v
    if game_id not in session.games:
        game = await node.race.load(game_id)
        if game is None:
            raise ProtocolError(ErrorCode.NO_SUCH_GAME, f"there is no game {game_id!r}")
        if session.player not in game.status:
            raise ProtocolError(ErrorCode.NOT_YOUR_GAME, "you are not racing in that game")
        raise ProtocolError(ErrorCode.NOT_ALLOWED, "resume that game first")
    try:
        answer = await node.race.act(
            game_id,
            session.player,
            kind,
            seen,
            message.engine_move if isinstance(message, PlayMove) else None,
            session.id,
            message.ref,
        )
    except ProtocolError:
        node.metrics.moves.rejected += 1
        raise
    node.metrics.moves.accepted += 1
    version = getattr(answer, "v", 0)
    if kind != "hint":
        session.games[game_id] = max(session.games.get(game_id, 0), version)
    session.send(answer)
    node.metrics.moves.observe(asyncio.get_running_loop().time() - started)


async def on_move(node: Node, session: Session, message: PlayMove) -> None:
    """Play one move on the racer's own board."""
    await _action(node, session, message, "move")


async def on_deal(node: Node, session: Session, message: DealReserve) -> None:
    """Deal the reserve onto the racer's board."""
    await _action(node, session, message, "deal")


async def on_undo(node: Node, session: Session, message: Undo) -> None:
    """Take back the racer's last action, where the game allows it."""
    await _action(node, session, message, "undo")


async def on_hint(node: Node, session: Session, message: HintRequest) -> None:
    """Send the racer hints for their position, where the game allows them."""
    await _action(node, session, message, "hint")


async def on_resign(node: Node, session: Session, message: Resign) -> None:
    """Give up the game."""
    await _action(node, session, message, "resign")


async def on_resume(node: Node, session: Session, message: Resume) -> None:
    """Send a returning racer exactly what they missed (or a snapshot) and follow the game."""
    assert session.player is not None
    game = await node.own_game(session, message.game, "you are not racing in that game")
    missed = await node.feed.missed_events(game, message.v, session.player)
    if missed is None:
        await node.feed.resume_with_snapshot(session, game, message.ref)
        return
    events, last = missed
    await node.feed.listen_as_racer(session, game, last)
    session.send(
        Batch(
            game=game.game_id, v=last, events=cast("tuple[RacerEvent, ...]", tuple(events)), ref=message.ref
        )
    )
