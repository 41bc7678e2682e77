"""Races: the node's running games, the move path and snapshots.

A node keeps, for each game one of its clients is in, a :class:`~server.game.live.LiveGame`: the
game's settings and, per racer, a :class:`~protocol.game.Board` rebuilt from the racer's
move list in Redis. Those boards are caches: a racer's board is validated against locally,
committed through :meth:`Store.act`, and reloaded whenever the store says another node
changed it. What each recipient receives of an event is :func:`server.game.live.project`.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from typing import Any

import orjson

from protocol.game import (
    DEAL,
    Board,
    Move,
    ReserveRule,
    hints,
    move_from_text,
    move_json,
    move_text,
    player_view,
    summarize,
    summary_data,
    view_data,
)
from protocol.wire.error import ErrorCode, ProtocolError
from protocol.wire.message import (
    Accepted,
    DealReserve,
    HintRequest,
    Hints,
    Options,
    PlayMove,
    RacerBoard,
    Resign,
    Snapshot,
    SpectatorSnapshot,
    Undo,
)

from ..store import UNREACHABLE, NotSent, Store, Unreplicated
from .clock import count_outages, paused_spans
from .fairness import hides_cards, masked_view, note_event_uncovered, spectator_cards
from .live import (
    DONE,
    RACER_STATUS,
    GameSpec,
    LiveGame,
    game_event,
    now_ms,
    race_ended_event,
    racer_fields,
    rank_racers,
)
from .opening import OpenedRace, open_game

__all__ = ["NOT_RACING", "BoardAction", "RaceService", "own"]

log = logging.getLogger("scorpion.race")

BoardAction = PlayMove | DealReserve | Undo | Resign
"""A racer's request that changes their own board (or their part in the race)."""

NOT_RACING = "you are not racing in that game"
"""What a player is told of a game they are not a racer of."""
_ENDED_AS = {"finished": "finished", "stuck": "got stuck", "resigned": "resigned", "left": "left"}
"""How ``game_over`` says a racer's part ended (their status as words)."""


def own(game: LiveGame | None, game_id: str, player_id: str | None, stranger: str = NOT_RACING) -> LiveGame:
    """Return ``game`` if ``player_id`` races in it; else raise ``no_such_game`` or ``not_your_game``.

    The one answer to "is this your game?", wherever it is asked.
    """
    if game is None:
        raise ProtocolError(ErrorCode.NO_SUCH_GAME, f"there is no game {game_id!r}")
    if player_id not in game.status:
        raise ProtocolError(ErrorCode.NOT_YOUR_GAME, stranger)
    return game


class RaceService:
    """Start races, apply racers' actions, end races; all state goes through the store."""

    def __init__(
        self,
        store: Store,
        *,
        node_name: str,
        time_limit: float,
        keep_finished: float,
    ) -> None:
        self.store = store
        self.node_name = node_name
        self.time_limit_ms = int(time_limit * 1000)
        self.keep_ms = int(keep_finished * 1000)
        self.games: dict[str, LiveGame] = {}
        self.on_game_loaded: Callable[[LiveGame], Any] | None = None
        self.on_race_done: Callable[[LiveGame, list[dict[str, Any]], dict[str, int]], Any] | None = None
        self.on_event: Callable[[str, int, dict[str, Any]], None] = lambda game_id, version, event: None
        self._loading: dict[str, asyncio.Future[LiveGame | None]] = {}
        self._ending: set[asyncio.Task[None]] = set()

    def listen(
        self,
        *,
        on_game_loaded: Callable[[LiveGame], Any],
        on_race_done: Callable[[LiveGame, list[dict[str, Any]], dict[str, int]], Any],
        on_event: Callable[[str, int, dict[str, Any]], None],
    ) -> None:
        """Say who hears of a game loaded, an event committed here, and a race done."""
        self.on_game_loaded = on_game_loaded
        self.on_race_done = on_race_done
        self.on_event = on_event

    # -- starting -----------------------------------------------------------------------

    async def start_race(
        self, racers: list[tuple[str, str]], spec: GameSpec, game_id: str | None = None
    ) -> str:
        """Create a game on a fresh secret deal (or the spec's) and publish its first event.

        A solo game is a race of one. Return the game id.
        """
        return (await self.open_race(racers, spec, game_id)).game.game_id

    async def open_race(
        self,
        racers: list[tuple[str, str]],
        spec: GameSpec,
        game_id: str | None = None,
        *,
        follow: bool = False,
        announce: bool = True,
    ) -> OpenedRace:
        """Create a game as :meth:`start_race` does; return it as :func:`open_game` does."""
        limit_ms = self.time_limit_ms if spec.time_limit is None else int(spec.time_limit * 1000)
        return await open_game(self.store, racers, spec, game_id, limit_ms, follow=follow, announce=announce)

    # -- loading ------------------------------------------------------------------------

    async def load(self, game_id: str) -> LiveGame | None:
        """Return the node's live copy of a game, loading it from the store when needed."""
        game = self.games.get(game_id)
        if game is not None:
            return game
        pending = self._loading.get(game_id)
        if pending is not None:
            return await pending
        future: asyncio.Future[LiveGame | None] = asyncio.get_running_loop().create_future()
        self._loading[game_id] = future
        try:
            game = await self._fetch(game_id)
            if game is not None:
                self.games[game_id] = game
                if self.on_game_loaded:
                    self.on_game_loaded(game)
            future.set_result(game)
            return game
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # mark retrieved
            raise
        finally:
            del self._loading[game_id]

    def adopt(self, game: LiveGame) -> LiveGame:
        """Return the node's cached copy of ``game``, caching this one if none is.

        A copy loaded for a short look (a list entry) may be evicted while another task
        still holds it; whoever attaches followers re-adopts it so events find it.
        """
        cached = self.games.get(game.game_id)
        if cached is not None:
            return cached
        self.games[game.game_id] = game
        if game.timer is None and self.on_game_loaded:
            self.on_game_loaded(game)  # the eviction cancelled its time limit: set it again
        return game

    async def _fetch(self, game_id: str) -> LiveGame | None:
        record = await self.store.game(game_id, with_moves=False)
        if record is None:
            return None
        meta = record.meta
        game = LiveGame(
            game_id=game_id,
            variant=meta["variant"],
            rule=ReserveRule.parse(meta["rule"]),
            options=Options.from_dict(json.loads(meta["options"])),
            start=int(meta["start"]),
            number=int(meta["number"]),
            salt=meta["salt"],
            commitment=meta["commitment"],
            roster=[(r["id"], r["name"]) for r in record.roster],
            room=meta.get("room") or None,
            time_limit_ms=int(meta.get("limit", self.time_limit_ms)),
            mode=meta.get("mode", "race"),
            daily=meta.get("daily") or None,
            saved=meta.get("saved") == "1",
            rematch_of=meta.get("rematch_of") or None,
            challenge=meta.get("challenge") or None,
            version=record.version,
            ended=meta.get("state") != "racing",
            paused=paused_spans(meta),
        )
        for racer in record.racers:
            game.boards[racer.player_id] = None
            game.changed[racer.player_id] = racer.changed
            game.status[racer.player_id] = racer.status
            game.summary[racer.player_id] = json.loads(racer.fields.get("summary", "{}"))
            game.locks[racer.player_id] = asyncio.Lock()
        return game

    async def board_of(self, game: LiveGame, player_id: str) -> Board:
        """Return a racer's board, rebuilding it from the stored move list when not cached."""
        board = game.boards.get(player_id)
        if board is not None:
            return board
        racer = await self.store.racer(game.game_id, player_id)
        if racer is None:
            raise ProtocolError(ErrorCode.INTERNAL, "the racer's record is missing")
        board = Board.new(game.variant, game.number, game.rule)
        for text in racer.moves:
            if text == "undo":
                board.pop()
            else:
                board.push(move_from_text(text))
        game.boards[player_id] = board
        game.changed[player_id] = racer.changed
        game.status[player_id] = racer.status
        return board

    def note_event(
        self, game: LiveGame, version: int, event: dict[str, Any], cards: frozenset[str] | None = None
    ) -> None:
        """Update the node's copy of a game from an event committed by any node (``cards``:
        the cards its view shows, when the caller knows them already).

        The one writer of a racer's state in the node's copy (version, status, summary):
        its own commits come here as other nodes' events do.
        """
        game.version = max(game.version, version)
        player = event.get("player")
        if hides_cards(game):  # what each racer has uncovered: their spectators' mask
            note_event_uncovered(game.uncovered, game.racer_ids(), version, event, cards)
        if player is not None and event["type"] in ("move", "status"):
            if game.changed.get(player, 0) < version and not str(event.get("origin", "")).startswith(
                self.node_name + "/"
            ):
                game.boards[player] = None  # another node changed it: rebuild on next use
            game.changed[player] = max(game.changed.get(player, 0), version)
            game.status[player] = event["status"]
            game.summary[player] = event["summary"]
            self.end_when_all_done(game)
        elif event["type"] == "race_ended":
            game.ended = True
            # The names as the standings have them: a racer forgotten during the race is
            # the neutral name there, and so in this node's replays too (decision 15).
            names = {row["player"]: row["name"] for row in event.get("standings", ())}
            game.roster = [(pid, names.get(pid, name)) for pid, name in game.roster]

    def end_when_all_done(self, game: LiveGame) -> None:
        """End the race once every racer is done, however this node learnt the last of it (its
        own commit, another node's event, or the log read after an action of unknown outcome)."""
        if game.ended or game.ending or not all(game.status[pid] in DONE for pid in game.racer_ids()):
            return
        game.ending = True
        task = asyncio.get_running_loop().create_task(self._end_when_reachable(game))
        self._ending.add(task)
        task.add_done_callback(self._ending.discard)

    async def _end_when_reachable(self, game: LiveGame) -> None:
        try:
            while True:
                try:
                    return await self.end_race(game.game_id)
                except UNREACHABLE:
                    await self.store.health.wait_to_retry()
        finally:
            game.ending = False

    # -- the move path ------------------------------------------------------------------

    async def act(self, player_id: str, action: BoardAction, origin: str = "") -> Accepted:
        """Apply a racer's action to their board and commit it; return the answer (with its ``ref``)."""
        game = own(await self.load(action.game), action.game, player_id)
        if game.ended:
            raise ProtocolError(ErrorCode.GAME_OVER, "that race is over")
        await count_outages(self.store, game)
        async with game.locks[player_id]:
            for _attempt in range(3):
                board = await self._playing_board(game, player_id)
                if action.v < game.changed[player_id]:
                    # The board changed after the version the client saw (another tab, or
                    # another node, moved it): the request is stale, whatever it asks. Checked
                    # before the move is, which would otherwise be judged on a board the
                    # client has not seen.
                    raise ProtocolError(
                        ErrorCode.STALE_VERSION,
                        f"your board changed at version {game.changed[player_id]}; you sent {action.v}. "
                        "Resume to catch up.",
                    )
                answer = await self._commit(game, player_id, board, action, origin)
                if answer is not None:
                    return answer
                game.boards[player_id] = None  # conflict: another node moved this board
            raise ProtocolError(ErrorCode.INTERNAL, "the move could not be committed; try again")

    async def hint(self, player_id: str, request: HintRequest) -> Hints:
        """Return hints for the racer's board, where the race allows them."""
        game = own(await self.load(request.game), request.game, player_id)
        if game.ended:
            raise ProtocolError(ErrorCode.GAME_OVER, "that race is over")
        if not game.options.hints:
            raise ProtocolError(ErrorCode.HINTS_FORBIDDEN, "this race does not allow hints")
        async with game.locks[player_id]:
            board = await self._playing_board(game, player_id)
            found = hints(board)[:64]
        return Hints(
            game=game.game_id, v=game.version, moves=tuple(move_json(m) for m in found), ref=request.ref
        )

    async def _playing_board(self, game: LiveGame, player_id: str) -> Board:
        """Return the racer's board, or raise ``game_over`` when their part is over."""
        board = await self.board_of(game, player_id)
        if game.status[player_id] != "playing":
            ended = _ENDED_AS.get(game.status[player_id], game.status[player_id])
            raise ProtocolError(ErrorCode.GAME_OVER, f"your race is over: you {ended}")
        return board

    async def _commit(
        self, game: LiveGame, player_id: str, board: Board, action: BoardAction, origin: str
    ) -> Accepted | None:
        now = now_ms()
        elapsed = game.elapsed_seconds(now)
        undone: Move | None = None
        pushed = False
        match action:
            case Resign():
                status, op, text = "resigned", "none", ""
            case Undo():
                if not game.options.undo:
                    raise ProtocolError(ErrorCode.UNDO_FORBIDDEN, "this race does not allow undo")
                if not board.depth:
                    raise ProtocolError(ErrorCode.ILLEGAL_MOVE, "there is no move to undo")
                op, text = "push", "undo"
                undone = board.pop()
            case DealReserve() | PlayMove():
                chosen = DEAL if isinstance(action, DealReserve) else action.engine_move
                reason = board.explain(chosen)
                if reason is not None:
                    raise ProtocolError(ErrorCode.ILLEGAL_MOVE, reason)
                board.push(chosen)
                pushed = True
                op, text = "push", move_text(chosen)
        state = board.status()
        if not isinstance(action, Resign):
            status = RACER_STATUS.get(state, "playing")
        summary = summary_data(board, elapsed, state)
        record = game_event(
            "status" if isinstance(action, Resign) else "move",
            player=player_id,
            action=action.TYPE,
            move=text,
            view=view_data(board),
            summary=summary,
            status=status,
            origin=origin or self.node_name + "/",
            at=now,
        )
        view = record["view"]
        event = orjson.dumps(record)
        try:
            outcome = await self.store.act(
                game.game_id,
                player_id,
                seen_version=action.v,
                based_on=game.changed[player_id],
                op=op,
                move=text,
                event=event,
                summary=orjson.dumps(summary),
                status=status,
                finished=now if status in DONE else None,
            )
        except BaseException as exc:
            # No answer from Redis (connection lost, cancelled): the action may or may not
            # have been applied, so the cached board, already changed, is not to be trusted.
            game.boards[player_id] = None
            if isinstance(exc, Unreplicated):
                raise ProtocolError(
                    ErrorCode.OUTCOME_UNKNOWN,
                    "the action was made but its replicas did not confirm it in time: resume to see it",
                    retry_after_ms=100,
                ) from exc
            if isinstance(exc, UNREACHABLE) and not isinstance(exc, NotSent):
                self.store.health.failed()
                raise ProtocolError(
                    ErrorCode.OUTCOME_UNKNOWN,
                    "storage did not confirm the action: resume to see whether it was made",
                    retry_after_ms=self.store.health.retry_after_ms(),
                ) from exc
            raise
        if outcome.result != "ok":
            # Put the cached board back as it was before this attempt.
            if undone is not None:
                board.push(undone)
            elif pushed:
                board.pop()
        if outcome.result == "conflict":
            return None
        if outcome.result == "stale":
            raise ProtocolError(
                ErrorCode.STALE_VERSION,
                f"your board changed at version {outcome.value}; you sent {action.v}. Resume to catch up.",
            )
        if outcome.result in ("over", "done"):
            raise ProtocolError(ErrorCode.GAME_OVER, "your race is over")
        self._committed(game, outcome.version, record)
        return Accepted(
            game=game.game_id, v=outcome.version, view=view, summary=summary, status=status, ref=action.ref
        )

    def _committed(self, game: LiveGame, version: int, record: dict[str, Any]) -> None:
        """Take an event committed here into the node's copy of the game, then deliver it."""
        self.note_event(game, version, record)
        self.on_event(game.game_id, version, record)

    async def mark_left(self, game_id: str, player_id: str) -> None:
        """Mark a racer who stayed away past the grace period as having left."""
        game = await self.load(game_id)
        if game is None or game.ended or game.status.get(player_id) != "playing":
            return
        board = await self.board_of(game, player_id)
        now = now_ms()
        summary = summarize(board, game.elapsed_seconds(now)).as_dict()
        record = game_event(
            "status",
            player=player_id,
            action="left",
            move="",
            view=view_data(board),
            summary=summary,
            status="left",
            origin=self.node_name + "/",
            at=now,
        )
        version = await self.store.set_racer_status(
            game_id, player_id, json.dumps(record), racer_fields(summary, "left", {"finished": now})
        )
        if version:
            self._committed(game, version, record)  # the last racer out ends the race

    # -- ending -------------------------------------------------------------------------

    async def end_race(self, game_id: str) -> None:
        """End a race (once across all nodes): standings, reveal the deal, keep the log."""
        game = await self.load(game_id)
        if game is None or game.ended:
            return
        await count_outages(self.store, game)
        version = -1
        while version < 0:  # another node added an outage to the clock meanwhile: score again
            record = await self.store.game(game_id, with_moves=False)
            if record is None or record.meta.get("state") != "racing":
                return
            game.paused = paused_spans(record.meta)  # as every node reported them
            now = now_ms()
            standings, finished_at = rank_racers(game, record.racers, now)
            ending = race_ended_event(game, standings, now)
            version = await self.store.end_game(
                game_id,
                game.racer_ids(),
                json.dumps(ending),
                now,
                json.dumps(standings),
                self.keep_ms,
                paused=record.meta.get("paused", ""),
            )
        if version:
            self._committed(game, version, ending)
            log.info("race ended", extra={"game": game_id, "version": version})
            if self.on_race_done:
                result = self.on_race_done(game, standings, finished_at)
                if asyncio.iscoroutine(result):
                    await result

    # -- snapshots ----------------------------------------------------------------------

    async def snapshot(self, game: LiveGame, player_id: str) -> Snapshot:
        """Return a racer's full resync: own board, everyone's progress, clock."""
        board = await self.board_of(game, player_id)
        now = now_ms()
        return Snapshot(
            game=game.game_id,
            v=game.version,
            variant=game.variant,
            options=game.options,
            start=game.start,
            now=now,
            commitment=game.commitment,
            roster=game.racers(),
            view=player_view(board).as_dict(),
            summary=summarize(board, game.elapsed_seconds(now)).as_dict(),
            status=game.status[player_id],
            racers=game.progress(),
            mode=game.mode,
            daily=game.daily,
        )

    async def spectator_snapshot(
        self, game: LiveGame, spectators: int, delay_ms: int = 0
    ) -> SpectatorSnapshot:
        """Return every racer's board as a spectator sees it, built from the event log.

        The snapshot is the state at the last version whose event is at least ``delay_ms``
        old, so a delayed stream starts from a consistent point, and the stream that
        follows continues from exactly that version: nothing missed, nothing doubled.
        """
        cutoff = now_ms() - delay_ms
        version = 0
        opening: dict[str, Any] = {}
        latest: dict[str, dict[str, Any]] = {}
        delayed = False
        for number, raw in await self.store.events(game.game_id, 0):
            event = json.loads(raw)
            if hides_cards(game):  # the whole log, past the delay too: the mask is as of now
                note_event_uncovered(game.uncovered, game.racer_ids(), number, event)
            if delayed := delayed or (number > 1 and event.get("at", 0) > cutoff):
                continue
            version = number
            if event["type"] == "race_started":
                opening = event["view"]
            elif event["type"] in ("move", "status"):
                latest[event["player"]] = event
        shown = spectator_cards(game)
        boards = []
        for pid, name in game.roster:
            last = latest.get(pid)
            view = last["view"] if last else opening
            boards.append(
                RacerBoard(
                    player=pid,
                    name=name,
                    view=view if shown is None else masked_view(view, shown),  # decision 14
                    summary=last["summary"] if last else _opening_summary(opening),
                    status=last["status"] if last else "playing",
                )
            )
        return SpectatorSnapshot(
            game=game.game_id,
            v=max(version, 1),
            variant=game.variant,
            options=game.options,
            start=game.start,
            now=now_ms(),
            spectators=spectators,
            racers=tuple(boards),
            room=game.room,
        )


def _opening_summary(view: dict[str, Any]) -> dict[str, Any]:
    """Return the summary of an untouched opening position, from its view alone."""
    face_down = sum(1 for col in view.get("columns", ()) for card in col if card is None)
    reserve = view.get("reserve_left", 0) + sum(1 for c in view.get("cells", ()) if c is not None)
    return {
        "score": 0,
        "runs": 0,
        "face_down_left": face_down,
        "moves": 0,
        "reserve_left": reserve,
        "state": "in_play",
    }
