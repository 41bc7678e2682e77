"""Spectating: the live games list, watching a race, and replays of finished games."""

from __future__ import annotations

from typing import Any, cast

from protocol.wire.error import ErrorCode, ProtocolError
from protocol.wire.message import (
    Games,
    GamesList,
    Ok,
    Replay,
    ReplayPositions,
    SpectateBatch,
    SpectatorEvent,
    Unwatch,
    Watch,
)

from ..accounts import require_account
from ..game.live import LiveGame
from ..game.replay import replay_log, replay_positions
from ..node import Node
from ..session import Session

__all__ = ["on_games_list", "on_replay", "on_replay_positions", "on_unwatch", "on_watch"]


async def on_games_list(node: Node, session: Session, message: GamesList) -> None:
    """Send the live games the player may watch; with ``subscribe``, their changes too."""
    infos = []
    for game_id in await node.store.live_games():
        game = await node.race.load(game_id)
        if game is None or game.ended:
            # Off the list at its end (a separate step from ending it, which a node
            # could die between): whoever lists the games next finishes the job.
            await node.store.drop_live(game_id)
            continue
        info = await node.feed.game_info(session, game, message.variant)
        if info is not None:
            infos.append(info)
        await node.feed.maybe_forget(game)
    session.send(Games(games=tuple(infos), ref=message.ref))
    if message.subscribe:
        await node.feed.follow_list(session, message.variant)
    else:
        await node.feed.stop_following_list(session)


async def on_watch(node: Node, session: Session, message: Watch) -> None:
    """Start watching a running race, by game id or room code: a snapshot, or what was missed."""
    game_id = message.game
    if game_id is None:
        await node.limits.check(session.address, "room_code")  # guessing codes: as room_join
        room = await node.store.room(message.room or "")
        if room is None:
            await node.limits.take(session.address, "room_code")
            raise ProtocolError(ErrorCode.NO_SUCH_ROOM, "no open room has that code")
        if not room.get("game"):
            raise ProtocolError(
                ErrorCode.NOT_STARTED,
                f"the race in room {message.room} has not started yet: watch it again once it has",
            )
        game_id = room["game"]
    game = await node.race.load(game_id)
    if game is None and message.game is None:  # the room's countdown is still running
        raise ProtocolError(ErrorCode.NOT_STARTED, f"the race in room {message.room} starts in a moment")
    if game is None:
        raise ProtocolError(ErrorCode.NO_SUCH_GAME, "no game with that id is running")
    if game.ended:
        raise ProtocolError(ErrorCode.NO_SUCH_GAME, f"that game is over: replay it instead (game {game_id})")
    if not game.options.spectators:
        raise ProtocolError(ErrorCode.SPECTATING_FORBIDDEN, "this race's host does not allow spectators")
    if session.player in game.status:
        raise ProtocolError(ErrorCode.SPECTATING_FORBIDDEN, "you cannot watch a race you are in")
    if game.daily is not None:
        # A guest is free to make: one watching today's deal could pass it on to an account.
        require_account(session, "watching a game of today's daily deal", "watch it once the day is over")
    if not await node.daily.may_see(session.player, game.daily, game.variant):
        # No ghosting (decision 14): a daily game shows the day's deal, which everyone plays.
        raise ProtocolError(
            ErrorCode.SPECTATING_FORBIDDEN,
            f"that is a game of the daily deal of {game.daily}: watch the day's games once "
            "your own ranked attempt of it is over",
        )
    await _not_on_the_deal_being_raced(node, session, game)
    game = await node.feed.watch(session, game)
    count = node.feed.total_spectators(game_id)
    if message.v is not None and not game.options.spectator_delay:
        batch = await _spectator_batch(node, game, message.v, count, message.ref)
        if batch is not None:
            session.watching[game_id] = batch.v
            session.send(batch)
            return
    delay_ms = game.options.spectator_delay * 1000
    snapshot = await node.race.spectator_snapshot(game, count, delay_ms)
    session.watching[game_id] = snapshot.v
    session.send(snapshot.answering(message.ref))


async def _spectator_batch(
    node: Node, game: LiveGame, since: int, count: int, ref: Any
) -> SpectateBatch | None:
    """Return the spectator events after version ``since``, or ``None`` (send a snapshot).

    ``None`` when too many were missed, or when ``since`` is ahead of the game; and in a
    rated race whose racers' uncovered cards this node has not all read yet (its copy was
    just loaded): the snapshot reads them from the log, and events masked without them
    would hide more than they need to (decision 14).
    """
    if game.options.rated and not game.ended and any(pid not in game.uncovered for pid in game.racer_ids()):
        return None
    missed = await node.feed.missed_events(game, since, None)
    if missed is None or (missed[1] == since and since > game.version):
        return None
    events, last = missed
    events_ = cast("tuple[SpectatorEvent, ...]", tuple(events))
    return SpectateBatch(game=game.game_id, v=last, spectators=count, events=events_, ref=ref)


async def on_unwatch(node: Node, session: Session, message: Unwatch) -> None:
    """Stop watching a game."""
    await node.feed.stop_watching(session, message.game)
    session.send(Ok(to="unwatch", ref=message.ref))


async def on_replay(node: Node, session: Session, message: Replay) -> None:
    """Send a finished game's whole log, to replay it move by move."""
    game = await _replayable(node, session, message.game)
    replay = await replay_log(node.store, game)
    await node.feed.maybe_forget(game)
    session.send(replay.answering(message.ref))


async def on_replay_positions(node: Node, session: Session, message: ReplayPositions) -> None:
    """Send one racer's positions through a finished game, to step through it on a board."""
    game = await _replayable(node, session, message.game)
    positions = await replay_positions(node.store, game, message.player)
    await node.feed.maybe_forget(game)
    session.send(positions.answering(message.ref))


async def _replayable(node: Node, session: Session, game_id: str) -> LiveGame:
    """Return a finished game whose replay may be shown now, or say why not."""
    game = await node.race.load(game_id)
    if game is None:
        raise ProtocolError(ErrorCode.NO_SUCH_GAME, "no game with that id is kept")
    if not game.ended:
        raise ProtocolError(ErrorCode.NOT_ALLOWED, "that game is still running: watch it instead")
    if game.daily and not node.daily.is_over(game.daily):
        raise ProtocolError(
            ErrorCode.SPECTATING_FORBIDDEN, "daily games are replayable once their day is over"
        )
    await _not_on_the_deal_being_raced(node, session, game)
    return game


async def _not_on_the_deal_being_raced(node: Node, session: Session, game: LiveGame) -> None:
    """Refuse to show another game on the deal the asker is racing now (no ghosting,
    decision 14). Every taker of a challenge races one known deal: its source game's
    replay, or another taker's game, would show cards the asker has not uncovered."""
    if session.player is None:
        return
    current = (await node.store.player_places(session.player)).get("game")
    if current is None or current == game.game_id:
        return
    mine = await node.race.load(current)
    if mine is None or mine.ended or mine.status.get(session.player) != "playing":
        return
    if (mine.variant, mine.number) == (game.variant, game.number):
        raise ProtocolError(
            ErrorCode.SPECTATING_FORBIDDEN,
            f"that game is on the deal you are racing (game {current}): "
            "watch or replay it once your own part is over",
        )
