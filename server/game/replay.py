"""Replays of finished games: every racer's log, and one racer's positions move by move.

Both are read from the game's record in Redis and rebuilt with the engine, so a replay
shows exactly what the racers played. They are served once a game is over (a daily game's
once its day is over), when nothing they contain is secret any more.
"""

from __future__ import annotations

import json
from typing import Any

from protocol.game import Board, move_from_text, move_json, player_view
from protocol.wire.error import ErrorCode, ProtocolError
from protocol.wire.message import PlayerLog, ReplayLog, ReplayPositionsInfo, Standing

from ..store import Store
from .live import LiveGame

__all__ = ["final_line_steps", "replay_log", "replay_positions"]


async def replay_log(store: Store, game: LiveGame) -> ReplayLog:
    """Return a finished game's deal and every racer's moves with their times."""
    moves: dict[str, list[dict[str, Any]]] = {pid: [] for pid, _ in game.roster}
    times: dict[str, list[int]] = {pid: [] for pid, _ in game.roster}
    standings: tuple[Standing, ...] = ()
    for _, raw in await store.events(game.game_id, 0):
        event = json.loads(raw)
        if event["type"] == "move":
            moves[event["player"]].append(_move_entry(event["move"]))
            times[event["player"]].append(max(0, int(event.get("at", game.start)) - game.start))
        elif event["type"] == "race_ended":
            standings = tuple(Standing(**row) for row in event["standings"])
    return ReplayLog(
        game=game.game_id,
        variant=game.variant,
        options=game.options,
        start=game.start,
        number=str(game.number),
        salt=game.salt,
        logs=tuple(
            PlayerLog(player=pid, name=name, moves=tuple(moves[pid]), times=tuple(times[pid]))
            for pid, name in game.roster
        ),
        standings=standings,
    )


async def replay_positions(store: Store, game: LiveGame, player: str) -> ReplayPositionsInfo:
    """Return one racer's positions from the deal on, and where the analysis says the win slipped."""
    names = dict(game.roster)
    if player not in names:
        raise ProtocolError(ErrorCode.NOT_YOUR_GAME, "that player did not race in that game")
    racer = await store.racer(game.game_id, player)
    if racer is None:
        raise ProtocolError(ErrorCode.NO_SUCH_GAME, "that game's record is no longer kept")
    times: list[int] = []
    for _, raw in await store.events(game.game_id, 0):
        event = json.loads(raw)
        if event["type"] == "move" and event["player"] == player:
            times.append(max(0, int(event.get("at", game.start)) - game.start))
    board = Board.new(game.variant, game.number, game.rule)
    views = [player_view(board).as_dict()]
    for text in racer.moves:
        if text == "undo":
            board.pop()
        else:
            board.push(move_from_text(text))
        views.append(player_view(board).as_dict())
    times = (times + [times[-1] if times else 0] * len(racer.moves))[: len(racer.moves)]
    verdict: str | None = None
    slipped: int | None = None
    stored = await store.analysis(game.game_id, player)
    if stored is not None:
        analysis = json.loads(stored)
        verdict = analysis.get("verdict")
        if analysis.get("slipped") is not None:
            steps = final_line_steps(racer.moves)
            index = int(analysis["slipped"])
            slipped = steps[index] if index < len(steps) else None
    return ReplayPositionsInfo(
        game=game.game_id,
        player=player,
        name=names[player],
        variant=game.variant,
        views=tuple(views),
        moves=tuple(_move_entry(text) for text in racer.moves),
        times=tuple(times),
        verdict=verdict,
        slipped=slipped,
    )


def final_line_steps(actions: list[str]) -> list[int]:
    """Return, for each move of the final line (undos applied), its index in ``actions``.

    The analysis numbers the moves of the line a racer ended with; a replay steps through
    everything played, undos included. This maps the one onto the other.
    """
    stack: list[int] = []
    for index, text in enumerate(actions):
        if text == "undo":
            if stack:
                stack.pop()
        else:
            stack.append(index)
    return stack


def _move_entry(text: str) -> dict[str, Any]:
    return {"undo": True} if text == "undo" else move_json(move_from_text(text))
