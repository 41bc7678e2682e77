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
Every taker of one challenge races the same runs: :class:`GhostRuns` works out each action's
board once per node for all of their games.
"""

from __future__ import annotations

import asyncio
import heapq
import logging
from collections import OrderedDict
from collections.abc import Callable, Coroutine, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from protocol.game import Board, ReserveRule, move_from_text, view_data

from ..store import UNREACHABLE
from ..store.keys import GHOST_PREFIX
from .fairness import uncovered_cards
from .live import DONE, LiveGame, game_event, now_ms
from .race import RaceService

__all__ = ["GhostClock", "GhostDriver", "GhostPacer", "GhostRun", "GhostRuns", "ghost_id", "record_run"]

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


@dataclass
class GhostRun:
    """One recorded run's boards on its deal, worked out as far as some game has needed them:
    after each action, the ghost's view (as its player saw it) and the cards that view shows
    (what spectators' masks are worked out from). Shared, and only read, by every game racing
    the run on a node."""

    board: Board
    actions: list[list[Any]]
    views: list[tuple[Mapping[str, Any], frozenset[str]]] = field(default_factory=list)

    def after(self, step: int) -> tuple[Mapping[str, Any], frozenset[str]]:
        """Return the view and its cards after the run's action number ``step`` (from 0)."""
        while len(self.views) <= step:
            _, kind, _, move, _, _ = self.actions[len(self.views)]
            if kind == "move":
                if move == "undo":
                    self.board.pop()
                elif move:
                    self.board.push(move_from_text(move))
            view = view_data(self.board)
            self.views.append((view, uncovered_cards(view)))
        return self.views[step]


class GhostRuns:
    """The runs a node's ghosts replay, each worked out once (:class:`GhostRun`) however many
    games race it: the takers of one shared link race the same runs on the same deal. The
    runs used least recently are dropped past ``steps`` actions in all (an action's view and
    its cards take about 3.5 KB: 14 MB at the most); a game holds on to its own runs
    meanwhile, whether or not the node still shares them."""

    def __init__(self, steps: int = 4_000) -> None:
        self.limit = steps
        self.size = 0
        self.runs: OrderedDict[tuple[Any, ...], GhostRun] = OrderedDict()

    def run(self, variant: str, number: int, rule: ReserveRule, ghost: Mapping[str, Any]) -> GhostRun:
        """Return the shared run of ``ghost`` on the deal ``number``."""
        actions = ghost["actions"]
        key = (variant, number, rule, tuple((action[1], action[3]) for action in actions))
        run = self.runs.get(key)
        if run is not None:
            self.runs.move_to_end(key)
            return run
        run = self.runs[key] = GhostRun(Board.new(variant, number, rule), actions)
        self.size += len(actions)
        while self.size > self.limit and len(self.runs) > 1:
            _, dropped = self.runs.popitem(last=False)
            self.size -= len(dropped.actions)
        return run


class GhostClock:
    """One timer for every ghost a node drives: a heap of ``(due ms, seq, driver)`` under a
    single ``call_at`` handle, instead of a sleeping task (and a timeout task per wait) per
    game. When an entry falls due, its driver takes one step (:meth:`GhostDriver.step`)."""

    def __init__(self, clock: Callable[[], int] = now_ms, batch: int = 32) -> None:
        self.clock = clock
        self.batch = batch
        """How many drivers step in one loop turn (when more are due, the rest follow)."""
        self.heap: list[tuple[int, int, GhostDriver]] = []
        self.seq = 0
        self.handle: asyncio.Handle | None = None
        self.armed_at: int | None = None

    def __len__(self) -> int:
        return len(self.heap)

    def wake(self, driver: GhostDriver, at_ms: int) -> int:
        """Have ``driver`` take a step once the clock reads ``at_ms`` (now if it has); return
        the entry's ticket (a driver steps only for its latest)."""
        self.seq += 1
        heapq.heappush(self.heap, (at_ms, self.seq, driver))
        if self.armed_at is None or at_ms < self.armed_at:
            self._arm()
        return self.seq

    def _arm(self) -> None:
        if self.handle is not None:
            self.handle.cancel()
            self.handle, self.armed_at = None, None
        if not self.heap:
            return
        first = self.heap[0][0]
        loop = asyncio.get_running_loop()
        self.handle = loop.call_later(max(0, first - self.clock()) / 1000, self._fire)
        self.armed_at = first

    def _fire(self) -> None:
        self.handle, self.armed_at = None, None
        now = self.clock()
        for _ in range(self.batch):
            if not self.heap or self.heap[0][0] > now:
                break
            _, ticket, driver = heapq.heappop(self.heap)
            driver.due(ticket)
        else:
            if self.heap and self.heap[0][0] <= now:
                # More are due: the rest in the next loop turn, after this batch's commits
                # have left, so that their answers are delivered as they come instead of
                # all together behind the last of them.
                self.handle = asyncio.get_running_loop().call_soon(self._fire)
                self.armed_at = self.heap[0][0]
                return
        self._arm()


class GhostDriver:
    """Replay a challenge game's ghosts: each action committed at its recorded time.

    No task of its own while it waits: the node's :class:`GhostClock` wakes it when its next
    action falls due, and it commits what is due in one short-lived task. It follows the game
    as a racer's connection does (one of the game's ``listeners``), so every event of the
    game, whichever node committed it, reaches it: the taker's part ending wakes it at once
    (the ghosts' remaining actions follow at once, and the race ends), and the node keeps
    the game and its channel while the ghosts race, whoever else leaves."""

    player: str | None = None
    """A game listener with no player of its own (no place to clear when the race ends)."""

    WAIT_MS = 30_000
    """How long it waits for the taker once the ghosts are done, before it looks again
    (their part's end wakes it before then: this covers only a wake that never came)."""

    def __init__(
        self,
        race: RaceService,
        game_id: str,
        taker: str,
        ghosts: list[dict[str, Any]],
        *,
        timer: GhostClock,
        runs: GhostRuns,
        spawn: Callable[[Coroutine[Any, Any, None]], object],
        clock: Callable[[], int] = now_ms,
        on_done: Callable[[], object] | None = None,
    ) -> None:
        self.race = race
        self.game_id = game_id
        self.taker = taker
        self.pacer = GhostPacer(ghosts)
        self.timer = timer
        self.runs = runs
        self.spawn = spawn
        self.clock = clock
        self.on_done = on_done
        self.played: dict[int, tuple[GhostRun, int]] = {}
        """By ghost: its shared run, and how many of its actions this game has played."""
        self.game: LiveGame | None = None
        self.busy = False
        self.again = False
        self.finished = False
        self.ticket = 0
        """The timer entry this driver waits for; older ones are stale."""
        self.games: dict[str, int] = {game_id: 0}

    def start(self, game: LiveGame) -> None:
        """Wait on the timer for the first action of ``game`` (the node's copy of it, just
        started here: its ``start`` is the taker's too)."""
        self.game = game
        first = self.pacer.next_at()
        if first is None:
            self.due()
        else:
            self.ticket = self.timer.wake(self, game.start + first)

    def send(self, message: object) -> None:
        """Take a notice meant for the game's connections (a spectator count): none matters."""

    def deliver(self, game_id: str, version: int, event: dict[str, Any], spectator: bool) -> None:
        """Take in one of the game's events, already noted in the node's copy: step at once
        when the taker's part may be over or the race has ended."""
        self.games[game_id] = version
        if event.get("type") == "race_ended" or (
            event.get("player") == self.taker and event.get("status") in DONE
        ):
            self.due()

    def due(self, ticket: int = 0) -> None:
        """Take a step now: for the timer's latest entry (``ticket``), or the taker's end
        (none). One task at a time."""
        if self.finished or (ticket and ticket != self.ticket):
            return
        self.ticket = 0
        if self.busy:
            self.again = True
            return
        self.busy = True
        self.spawn(self._run_step())

    async def _run_step(self) -> None:
        try:
            while True:
                self.again = False
                wait_until = await self.step()
                if wait_until is None or not self.again:
                    break
        except BaseException:
            self._finish()
            raise
        finally:
            self.busy = False
        if wait_until is None:
            self._finish()
        else:
            self.ticket = self.timer.wake(self, wait_until)

    def _finish(self) -> None:
        if not self.finished:
            self.finished = True
            if self.on_done is not None:
                self.on_done()

    async def step(self) -> int | None:
        """Commit every action due (all that are left once the taker is done); return when
        to step next (ms, the clock's), or ``None`` once the ghosts' part is over."""
        game = self.game
        if game is None:
            return None
        while not game.ended:
            taker_done = game.status.get(self.taker) in DONE
            next_at = self.pacer.next_at()
            if next_at is None and taker_done:
                break
            if not taker_done:
                # The next action's time, or, once every ghost has played its run (one still
                # playing at its recorded end stays so), the taker's end, which wakes it.
                now = self.clock()
                due_at = now + self.WAIT_MS if next_at is None else game.start + next_at
                if due_at > now:
                    return due_at
            elapsed = None if taker_done else self.clock() - game.start
            for index, action in self.pacer.due(elapsed):
                if not await self._commit(game, index, action):
                    return None
        if not game.ended:
            await self.race.end_race(self.game_id)  # a ghost still playing at its recorded end
        return None

    async def _commit(self, game: LiveGame, index: int, action: list[Any]) -> bool:
        offset, kind, verb, move, summary, status = action
        player = ghost_id(index)
        run, step = self.played.get(index) or (
            self.runs.run(game.variant, game.number, game.rule, self.pacer.ghosts[index]),
            0,
        )
        view, cards = run.after(step)
        now = self.clock()
        record = game_event(
            kind,
            player=player,
            action=verb,
            move=move,
            view=view,
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
        self.played[index] = (run, step + 1)
        self.race.note_event(game, outcome.version, record, cards)
        self.race.on_event(game.game_id, outcome.version, record)
        return True
