"""Ghosts: a recorded run raced again, its actions replayed at the pace they were played.

A ghost is one racer's run of a finished game: their name, how it ended, and each of their
actions with its time from the start of that game. In a challenge game the ghost races under
its own id (``ghost-1`` ...); :class:`GhostDriver` commits each action as the game's
event when the same time has passed since the start of the taker's race, through the store's
action script, so every node delivers it as it delivers a live racer's: ``progress`` to the
taker (a summary and a status, never a card), ``spectate_event`` to spectators (masked, as
:mod:`server.game.fairness` says). Once the taker's part is over, the ghosts' remaining
actions are committed at once and the race ends as a race does.

:func:`record_run` and :class:`GhostPacer` are pure; the driver's clock is given to it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from protocol.game import Board, move_from_text

from ..store import UNREACHABLE
from ..store.keys import GHOST_PREFIX
from .live import DONE, LiveGame, game_event, now_ms
from .race import RaceService

__all__ = ["GhostDriver", "GhostPacer", "ghost_id", "record_run"]

log = logging.getLogger("scorpion.ghost")


def ghost_id(index: int) -> str:
    """Return the racer id of a challenge's ghost number ``index`` (from 0)."""
    return f"{GHOST_PREFIX}{index + 1}"


def record_run(
    events: Iterable[Mapping[str, Any]], player: str, name: str, start: int, standing: Mapping[str, Any]
) -> dict[str, Any]:
    """Return one racer's run of a finished game as a ghost: their name, final result, and
    each action (``[ms from the start, kind, action, move, summary, status]``), from the log."""
    actions: list[list[Any]] = []
    for event in events:
        if event.get("type") in ("move", "status") and event.get("player") == player:
            offset = max(0, int(event.get("at", start)) - start)
            actions.append(
                [offset, event["type"], event["action"], event["move"], event["summary"], event["status"]]
            )
    return {
        "name": name,
        "score": int(standing.get("score", 0)),
        "elapsed": int(standing.get("elapsed", 0)),
        "status": str(standing.get("status", "resigned")),
        "actions": actions,
    }


@dataclass
class GhostPacer:
    """Which ghost actions are due when: every ghost's actions merged in time order (a ghost's
    own in the order played). Pure: the caller says how long the race has run."""

    ghosts: list[dict[str, Any]]
    queue: list[tuple[int, int, int]] = field(default_factory=list)
    """``(offset ms, ghost index, action index)``, in the order they are due."""
    position: int = 0

    def __post_init__(self) -> None:
        self.queue = sorted(
            (int(action[0]), index, step)
            for index, ghost in enumerate(self.ghosts)
            for step, action in enumerate(ghost["actions"])
        )

    def next_at(self) -> int | None:
        """Return the offset (ms from the race's start) of the next action, or ``None`` when done."""
        return self.queue[self.position][0] if self.position < len(self.queue) else None

    def due(self, elapsed_ms: int | None) -> list[tuple[int, list[Any]]]:
        """Take the actions due once ``elapsed_ms`` has passed (``None``: all that are left),
        each as ``(ghost index, action)``."""
        out: list[tuple[int, list[Any]]] = []
        while self.position < len(self.queue):
            offset, index, step = self.queue[self.position]
            if elapsed_ms is not None and offset > elapsed_ms:
                break
            out.append((index, self.ghosts[index]["actions"][step]))
            self.position += 1
        return out


class GhostDriver:
    """Replay a challenge game's ghosts: each action committed at its recorded time."""

    def __init__(
        self,
        race: RaceService,
        game_id: str,
        taker: str,
        ghosts: list[dict[str, Any]],
        *,
        clock: Callable[[], int] = now_ms,
        on_late: Callable[[int], None] | None = None,
    ) -> None:
        self.race = race
        self.game_id = game_id
        self.taker = taker
        self.pacer = GhostPacer(ghosts)
        self.clock = clock
        self.on_late = on_late
        self.wake = asyncio.Event()
        self.boards: dict[int, Board] = {}

    def taker_done(self) -> None:
        """Say the taker's part may be over (checked on the game's copy)."""
        self.wake.set()

    async def run(self) -> None:
        """Commit every ghost action at its time, then at once once the taker is done."""
        game = await self.race.load(self.game_id)
        if game is None:
            return
        while not game.ended:
            taker_done = game.status.get(self.taker) in DONE
            next_at = self.pacer.next_at()
            if next_at is None and taker_done:
                break
            if not taker_done:
                # Every ghost has played its run (one still playing at its recorded end stays
                # so): wait for the taker.
                wait_ms = 1000 if next_at is None else game.start + next_at - self.clock()
                if wait_ms > 0:
                    await self._sleep_or_wake(wait_ms)
                    continue
            elapsed = None if taker_done else self.clock() - game.start
            for index, action in self.pacer.due(elapsed):
                if not await self._commit(game, index, action, late=not taker_done):
                    return
        if not game.ended:
            await self.race.end_race(self.game_id)  # a ghost still playing at its recorded end

    async def _sleep_or_wake(self, wait_ms: int) -> None:
        """Wait ``wait_ms``, at most a second (the taker may end their part on another node,
        whose event this node's copy of the game takes in without waking the driver)."""
        self.wake.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.wake.wait(), min(wait_ms, 1000) / 1000)

    async def _commit(self, game: LiveGame, index: int, action: list[Any], *, late: bool) -> bool:
        offset, kind, verb, move, summary, status = action
        player = ghost_id(index)
        board = self.boards.get(index)
        if board is None:
            board = self.boards[index] = Board.new(game.variant, game.number, game.rule)
        if kind == "move":
            if move == "undo":
                board.pop()
            elif move:
                board.push(move_from_text(move))
        now = self.clock()
        record = game_event(
            kind,
            player=player,
            action=verb,
            move=move,
            board=board,
            summary=summary,
            status=status,
            origin=self.race.node_name + "/",
            at=now,
        )
        based_on = game.changed.get(player, 1)
        for _attempt in range(20):
            try:
                outcome = await self.race.store.act(
                    game.game_id,
                    player,
                    seen_version=based_on,
                    based_on=based_on,
                    op="push" if kind == "move" else "none",
                    move=move,
                    event=orjson.dumps(record),
                    summary=orjson.dumps(summary),
                    status=status,
                    finished=game.start + int(offset) if status in DONE else None,
                )
                break
            except UNREACHABLE:
                await self.race.store.health.wait_to_retry()
        else:
            return False
        if outcome.result != "ok":
            log.info("ghost stopped", extra={"game": game.game_id, "result": outcome.result})
            return False
        if late and self.on_late is not None:
            self.on_late(now - (game.start + int(offset)))
        self.race.note_event(game, outcome.version, record)
        self.race.on_event(game.game_id, outcome.version, record)
        return True
