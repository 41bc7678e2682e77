"""The solver's help: a finished game's analysis, "is this still winnable?" in solo play, and
auto-finish (the rest of a winning line played for the player, once every card is known)."""

from __future__ import annotations

import json

from protocol.game import move_from_text, move_text
from protocol.wire.error import ErrorCode, ProtocolError
from protocol.wire.message import (
    Analysis,
    Analyze,
    DealReserve,
    Finish,
    FinishInfo,
    PlayMove,
    Winnable,
    WinnableInfo,
    WireMove,
)

from ..node import Node
from ..session import Session
from ..solver import check_position, finish_line

__all__ = ["on_analyze", "on_finish", "on_winnable"]


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


async def on_finish(node: Node, session: Session, message: Finish) -> None:
    """Play the rest of a winning line for the player, once no card is face down and the
    reserve is dealt (the position is then fully known to the player too).

    Each move goes the way a player's own does (``RaceService.act``: checked, committed,
    timed by the game's clock, sent to the other racers and spectators) and is answered
    with its own ``accepted``; ``finish_info`` ends the answer. It is the solver's help:
    only where hints are allowed, so never in a rated race (decision 13) nor in the daily's
    ranked attempt.
    """
    assert session.player is not None
    game = await node.own_game(session, message.game, "you are not playing that game")
    if message.game not in session.games:
        raise ProtocolError(ErrorCode.NOT_ALLOWED, "resume that game first")
    if game.ended:
        raise ProtocolError(ErrorCode.GAME_OVER, "that game is over")
    if game.options.rated or not game.options.hints:
        raise ProtocolError(
            ErrorCode.NOT_ALLOWED,
            "Finish is the solver's help: a rated race gives none, nor a game without hints "
            "(the daily's ranked attempt)",
        )
    board = await node.race.board_of(game, session.player)
    if board.face_down_left or board.stock:
        raise ProtocolError(
            ErrorCode.NOT_ALLOWED, "Finish comes once every card is face up and the reserve is dealt"
        )
    actions = [move_text(m) for m in board.move_stack]
    answer = await node.solver.run(finish_line, game.variant, game.number, game.rule.value, actions)
    version = message.v
    played = 0
    for text in answer["line"]:
        move = move_from_text(text)
        action: PlayMove | DealReserve = (
            DealReserve(game=game.game_id, v=version)
            if move.is_deal
            else PlayMove(game=game.game_id, v=version, move=WireMove.of(move))
        )
        accepted = await node.race.act(session.player, action, session.id)
        node.metrics.moves.accepted += 1
        session.games[game.game_id] = max(session.games.get(game.game_id, 0), accepted.v)
        session.send(accepted)
        version = accepted.v
        played += 1
    session.send(
        FinishInfo(game=game.game_id, v=version, verdict=answer["verdict"], moves=played, ref=message.ref)
    )
