"""The solver's help: a finished game's analysis, and "is this still winnable?" in solo play."""

from __future__ import annotations

import json

from protocol.game import move_text
from protocol.wire.error import ErrorCode, ProtocolError
from protocol.wire.message import Analysis, Analyze, Winnable, WinnableInfo

from ..node import Node
from ..session import Session
from ..solver import check_position

__all__ = ["on_analyze", "on_winnable"]


async def on_analyze(node: Node, session: Session, message: Analyze) -> None:
    """Send a racer the analysis of their finished game ("where the win slipped away")."""
    assert session.player is not None
    game = await node.own_game(session, message.game, "only the game's own racers get its analysis")
    if not game.ended:
        raise ProtocolError(ErrorCode.NOT_ALLOWED, "the analysis comes when the game is over")
    if game.daily and not node.daily.is_over(game.daily):
        raise ProtocolError(ErrorCode.NOT_ALLOWED, "a daily game's analysis opens when its day is over")
    stored = await node.store.analysis(game.game_id, session.player)
    await node.feed.maybe_forget(game)
    if stored is None:
        raise ProtocolError(
            ErrorCode.UNAVAILABLE, "the analysis is still being computed; it is sent when ready"
        )
    session.send(Analysis(game=game.game_id, player=session.player, **json.loads(stored), ref=message.ref))


async def on_winnable(node: Node, session: Session, message: Winnable) -> None:
    """Tell a solo player whether their position can still be won.

    Never in a race (rated or not) nor in the daily, ranked or practice: the solver sees
    the face-down cards, and its help would be a move chosen with them.
    """
    assert session.player is not None
    game = await node.own_game(session, message.game, "you are not playing that game")
    if game.mode != "solo":
        raise ProtocolError(
            ErrorCode.NOT_ALLOWED, "the solver's help is for solo games only, never in a race or the daily"
        )
    if game.ended:
        raise ProtocolError(ErrorCode.GAME_OVER, "that game is over")
    board = await node.race.board_of(game, session.player)
    actions = [move_text(m) for m in board.move_stack]
    answer = await node.solver.run(check_position, game.variant, game.number, game.rule.value, actions)
    session.send(WinnableInfo(game=game.game_id, v=game.version, ref=message.ref, **answer))
