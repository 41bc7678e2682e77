"""Solo play: new games, replays of a deal, saved games and their resumption."""

from __future__ import annotations

import json
import secrets

from protocol.game.deal import draw_competitive_number
from protocol.wire import message as m
from protocol.wire.error import ErrorCode, ProtocolError

from ..game.clock import back_to_saved
from ..game.live import GameSpec, LiveGame, now_ms
from ..launch import start_single
from ..node import Node
from ..session import Session
from ..solver import winnable_deal

__all__ = [
    "on_saved_delete",
    "on_saved_games",
    "on_solo_leave",
    "on_solo_new",
    "on_solo_replay",
    "on_solo_resume",
]


async def on_solo_new(node: Node, session: Session, message: m.SoloNew) -> None:
    """Start a solo game on a fresh deal, saved for later if asked."""
    options = m.Options(undo=True, hints=True, spectators=False, reserve_rule=message.reserve_rule)
    number = await _winnable_number(node, message) if message.winnable else node.next_test_deal()
    await _leave_other_solo_games(node, session)
    spec = GameSpec(variant=message.variant, options=options, mode="solo", number=number, saved=message.save)
    await start_single(node, session, spec, message.ref)


WINNABLE_CANDIDATES = 60
"""Fresh deals the solver tries for a solo game on a winnable deal (about one in eight is)."""
WINNABLE_SECONDS = 4.0
"""How long it looks before giving up (``unavailable``: the player may ask again)."""


async def _winnable_number(node: Node, message: m.SoloNew) -> int:
    """Return a fresh secret deal the solver proves winnable, vetted in the solver worker as
    the daily's deal is; a test run's fixed deals are the candidates, in order."""
    candidates = list(node.test_deals) or [
        draw_competitive_number(secrets.randbelow) for _ in range(WINNABLE_CANDIDATES)
    ]
    number = await node.solver.run(
        winnable_deal, message.variant, message.reserve_rule, candidates, WINNABLE_SECONDS
    )
    if number is None:
        raise ProtocolError(
            ErrorCode.UNAVAILABLE,
            f"the solver proved none of the deals it tried winnable in {WINNABLE_SECONDS:.0f} s: "
            "ask again, or start a game on any deal",
        )
    return int(number)


async def _own_solo_game(node: Node, session: Session, game_id: str) -> LiveGame:
    game = await node.race.load(game_id)
    if game is None:
        raise ProtocolError(ErrorCode.NO_SUCH_GAME, f"there is no game {game_id!r}")
    if session.player not in game.status or game.mode != "solo":
        raise ProtocolError(ErrorCode.NOT_YOUR_GAME, "that is not one of your solo games")
    return game


async def on_solo_replay(node: Node, session: Session, message: m.SoloReplay) -> None:
    """Start a new solo game on the deal of one of the player's solo games."""
    game = await _own_solo_game(node, session, message.game)
    spec = GameSpec(
        variant=game.variant, options=game.options, mode="solo", number=game.number, saved=game.saved
    )
    await _leave_other_solo_games(node, session)
    await start_single(node, session, spec, message.ref)


async def on_solo_resume(node: Node, session: Session, message: m.SoloResume) -> None:
    """Go on with one of the player's solo games that is not over; the time it was left
    (:func:`on_solo_leave`, or the player away) is left out of its clock."""
    assert session.player is not None
    game = await _own_solo_game(node, session, message.game)
    if game.ended:
        raise ProtocolError(ErrorCode.GAME_OVER, "that game is over: replay it or start a new one")
    await _leave_other_solo_games(node, session, keep=game.game_id)
    await back_to_saved(node.store, game)
    await node.store.set_player_place(session.player, game=game.game_id)
    await node.feed.resume_with_snapshot(session, game, message.ref)


async def on_solo_leave(node: Node, session: Session, message: m.SoloLeave) -> None:
    """Leave a saved solo game for now: it stays saved (``saved_games``, ``solo_resume``)
    and its clock stops until the player is back; the connection is free for anything."""
    assert session.player is not None
    game = await _own_solo_game(node, session, message.game)
    if game.ended:
        raise ProtocolError(ErrorCode.GAME_OVER, "that game is over")
    if not game.saved:
        raise ProtocolError(
            ErrorCode.NOT_ALLOWED,
            "that game is not saved: resign it, or start a saved one (solo_new with save)",
        )
    await _leave_saved(node, session, game)
    session.send(m.Ok(to="solo_leave", ref=message.ref))


async def _leave_saved(node: Node, session: Session, game: LiveGame) -> None:
    """Stop the connection playing a saved solo game, its clock stopped till it is back."""
    assert session.player is not None
    await node.store.leave_saved_game(game.game_id, now_ms())
    await node.feed.detach(session, game.game_id)
    if (await node.store.player_places(session.player)).get("game") == game.game_id:
        await node.store.set_player_place(session.player, game="")


async def _leave_other_solo_games(node: Node, session: Session, keep: str = "") -> None:
    """Leave the saved solo games the connection plays (New game, Replay or Continue
    another): they stay saved, their clocks stopped."""
    for game_id in list(session.games):
        game = node.race.games.get(game_id)
        if game_id != keep and game is not None and game.mode == "solo" and game.saved and not game.ended:
            await _leave_saved(node, session, game)


async def on_saved_delete(node: Node, session: Session, message: m.SavedDelete) -> None:
    """Delete one of the player's saved solo games, left first; it counts as no game played."""
    assert session.player is not None
    if message.game not in await node.store.saved_games(session.player):
        raise ProtocolError(ErrorCode.NO_SUCH_GAME, f"you have no saved game {message.game!r}")
    if message.game in session.games:
        raise ProtocolError(ErrorCode.NOT_ALLOWED, "you are playing that game: leave it first (solo_leave)")
    game = node.race.games.get(message.game)
    if game is not None and game.listeners:  # another connection of the player plays it
        raise ProtocolError(ErrorCode.NOT_ALLOWED, "that game is being played on another connection")
    await node.store.delete_saved_game(session.player, message.game)
    node.race.games.pop(message.game, None)
    if (await node.store.player_places(session.player)).get("game") == message.game:
        await node.store.set_player_place(session.player, game="")
    session.send(m.Ok(to="saved_delete", ref=message.ref))


async def on_saved_games(node: Node, session: Session, message: m.SavedGames) -> None:
    """List the player's saved solo games that are still going."""
    assert session.player is not None
    games = []
    for game_id in await node.store.saved_games(session.player):
        record = await node.store.game(game_id, with_moves=False)
        mine = [r for r in record.racers if r.player_id == session.player] if record else []
        if record is None or not mine or record.meta.get("state") != "racing":
            await node.store.unsave_game(session.player, game_id)
            continue
        summary = json.loads(mine[0].fields.get("summary", "{}"))
        games.append(
            m.SavedGame(
                game=game_id,
                variant=record.meta["variant"],
                start=int(record.meta["start"]),
                summary=summary,
            )
        )
    session.send(m.SavedGamesList(games=tuple(games), ref=message.ref))
