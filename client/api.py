"""The asyncio client library of Scorpion Race.

:class:`ScorpionClient` opens a websocket to a server (msgpack by default, JSON on request),
says ``hello`` with the stored token, and offers one typed method per request; each returns
the server's answer or raises :class:`~client.errors.ServerError`. Everything the server
sends, answers included, is also delivered by the async iterator
:meth:`ScorpionClient.events`, together with the notices of :mod:`client.errors`. The race
being played or watched is tracked in :attr:`ScorpionClient.race` (a
:class:`~client.state.RaceState`), which also checks moves locally with the shared engine.
Reconnecting, busy retries and the settling of game actions are the connection's
(:mod:`client.connection`).

Example (runnable against a local server)::

    import asyncio
    from client.api import ScorpionClient

    async def main() -> None:
        async with ScorpionClient("ws://127.0.0.1:8765/", name="Ann") as client:
            room = await client.room_create("scorpion")
            print("share the code", room.room)

    asyncio.run(main())
"""

from __future__ import annotations

import asyncio
import contextlib
from urllib.parse import urlsplit, urlunsplit

from protocol.game import Move, move_from_text
from protocol.wire.codec import JSON, MSGPACK
from protocol.wire.error import ErrorCode
from protocol.wire.message import (
    Accepted,
    Analysis,
    Analyze,
    AroundMe,
    Batch,
    Challenge,
    ChallengeBoard,
    ChallengeBoardInfo,
    ChallengeCreate,
    ChallengeList,
    ChallengeListInfo,
    ChallengeNew,
    ChallengeTake,
    Countdown,
    Daily,
    DailyGhost,
    DailyInfo,
    DailyStart,
    DealReserve,
    ForgetMe,
    Forgotten,
    Games,
    GamesList,
    GamesUpdate,
    HintRequest,
    Hints,
    Leaderboard,
    LeaderboardPage,
    Message,
    Ok,
    Options,
    Ping,
    PlayMove,
    Pong,
    Profile,
    ProfileRequest,
    QueueCancel,
    Queued,
    QueueJoin,
    RaceEnded,
    RaceStarted,
    RatingBoard,
    RatingChange,
    RatingPage,
    Ready,
    Rematch,
    RematchOffered,
    Replay,
    ReplayLog,
    ReplayPositions,
    ReplayPositionsInfo,
    Resign,
    RoomCreate,
    RoomJoin,
    RoomLeave,
    RoomStart,
    RoomState,
    SavedDelete,
    SavedGames,
    SavedGamesList,
    Snapshot,
    SoloLeave,
    SoloNew,
    SoloReplay,
    SoloResume,
    SpectateBatch,
    SpectatorSnapshot,
    Stats,
    StatsInfo,
    Undo,
    Unwatch,
    Watch,
    Winnable,
    WinnableInfo,
    WireMove,
)

from .accounts import AccountClient
from .errors import ClientError, IllegalLocally, ServerError
from .state import RaceState, final_line

__all__ = ["JSON", "MSGPACK", "ScorpionClient", "challenge_link", "room_link"]


def room_link(server: str, code: str) -> str:
    """Return the browser link of a room on ``server``: the web client is served at ``/``."""
    parts = urlsplit(server)
    scheme = {"ws": "http", "wss": "https"}.get(parts.scheme, parts.scheme)
    return urlunsplit((scheme, parts.netloc, "/", f"room={code}", ""))


def challenge_link(server: str, code: str) -> str:
    """Return the browser link of a challenge on ``server``: it opens the challenge's board."""
    parts = urlsplit(server)
    scheme = {"ws": "http", "wss": "https"}.get(parts.scheme, parts.scheme)
    return urlunsplit((scheme, parts.netloc, "/", f"challenge={code}", ""))


class ScorpionClient(AccountClient):
    """One player's (or spectator's) session with a Scorpion Race server: the typed requests."""

    # -- the session's state --------------------------------------------------------------

    def _track(self, message: Message) -> None:
        me = self.player
        batched = isinstance(message, Batch | SpectateBatch) and message.events
        ended = message.events[-1] if batched else message  # type: ignore[attr-defined]
        if isinstance(ended, RaceEnded):
            self.results[ended.game] = ended
            while len(self.results) > 64:
                del self.results[next(iter(self.results))]
        if isinstance(message, RoomState):
            self.room = message
            if self.race is not None and self.race.ended is not None:
                self.race = None  # in a room again (a rematch, say): the lobby, not the old board
        elif isinstance(message, RematchOffered):
            self.rematch_offers[message.game] = message
            while len(self.rematch_offers) > 64:
                del self.rematch_offers[next(iter(self.rematch_offers))]
        elif isinstance(message, Ok) and message.to == "room_leave":
            self.room = None
        elif isinstance(message, Games):
            self.games = {info.game: info for info in message.games}
        elif isinstance(message, GamesUpdate):
            for game in message.removed:
                self.games.pop(game, None)
            self.games.update((info.game, info) for info in message.added)
        elif isinstance(message, LeaderboardPage):
            self.leaderboard_page = message
        elif isinstance(message, Analysis):
            self.analyses[message.game] = message
        elif isinstance(message, RatingChange):
            self.rating_changes[message.game] = message
        elif isinstance(message, RaceStarted):
            if self.race is None or self.race.game != message.game or self.race.ended is not None:
                self.race = RaceState.from_started(message, me)
                self.room = None
                return
        elif isinstance(message, Snapshot):
            self.race = RaceState.from_snapshot(message, me)
            return
        elif isinstance(message, SpectatorSnapshot):
            self.race = RaceState.from_spectate(message)
            return
        elif isinstance(message, Batch) and (self.race is None or self.race.game != message.game):
            first = message.events[0] if message.events else None
            if isinstance(first, RaceStarted):
                self.race = RaceState.from_started(first, me)
        if self.race is not None:
            result = self.race.apply(message)
            if result.gap and not self.race.spectating and not self._gap_timer:
                self._gap_timer = True
                self._spawn(self._fill_gap(self.race))
            self._version_changed()

    def _version_changed(self) -> None:
        race = self.race
        for waiter in list(self._version_waiters):
            game, v, future = waiter
            if future.done():
                self._version_waiters.remove(waiter)
            elif race is not None and race.game == game and (race.v >= v or race.ended is not None):
                future.set_result(None)
                self._version_waiters.remove(waiter)

    async def _fill_gap(self, race: RaceState) -> None:
        """Give late events a moment to arrive, then ``resume`` if the gap is still open."""
        try:
            await asyncio.sleep(self.gap_wait)
            if self.race is race and race.missing:
                await self._resume_quietly(race.game, race.v)
        finally:
            self._gap_timer = False

    async def caught_up(self, v: int, timeout: float = 10.0) -> None:
        """Wait until the tracked race has applied version ``v`` (or ended)."""
        race = self.race
        if race is None or race.v >= v or race.ended is not None:
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        entry = (race.game, v, future)
        self._version_waiters.append(entry)
        try:
            await asyncio.wait_for(future, timeout)
        finally:
            if entry in self._version_waiters:
                self._version_waiters.remove(entry)

    async def race_ended(self, game: str, timeout: float = 30.0) -> RaceEnded:
        """Return the ``race_ended`` of ``game``: at once if it has come already, else when it does."""
        known = self.results.get(game)
        if known is not None:
            return known
        return await self.wait_for(RaceEnded, timeout=timeout, game=game)

    async def _act(self, action: PlayMove | DealReserve | Undo | Resign) -> Accepted:
        answer = await self._settled(action)
        # The answer may overtake other racers' events; the local state follows once they arrive.
        with contextlib.suppress(TimeoutError):
            await self.caught_up(answer.v, timeout=self.request_timeout)
        return answer

    # -- requests -------------------------------------------------------------------------

    async def ping(self) -> Pong:
        """Ask for the server's clock."""
        return await self._typed(Ping(), Pong)

    # rooms
    async def room_create(
        self, variant: str = "scorpion", max_players: int = 2, options: Options | None = None
    ) -> RoomState:
        """Open a room (this player is host); the answer holds the code to share."""
        message = RoomCreate(variant=variant, max_players=max_players, options=options or Options())
        return await self._typed(message, RoomState)

    async def room_join(self, room: str) -> RoomState:
        """Join a room by its code."""
        return await self._typed(RoomJoin(room=room.upper()), RoomState)

    async def ready(self, ready: bool = True) -> RoomState:
        """Set this player's ready flag."""
        return await self._typed(Ready(ready=ready), RoomState)

    async def room_leave(self) -> Ok:
        """Leave the room."""
        return await self._typed(RoomLeave(), Ok)

    async def room_start(self) -> Countdown:
        """Start the race (host only, everyone ready); ``race_started`` follows as an event."""
        return await self._typed(RoomStart(), Countdown)

    async def rematch(self, game: str | None = None) -> RoomState:
        """Race the same players again after a race (the current one by default).

        The first racer to ask opens the room and hosts it, the others get
        ``rematch_offered`` and join it by asking too; the race starts as in any room.
        """
        if game is None:
            if self.race is None:
                raise ValueError("no race to ask a rematch of: name its game id")
            game = self.race.game
        return await self._typed(Rematch(game=game), RoomState)

    # quick match
    async def queue_join(self, variant: str = "scorpion", *, rated: bool = True) -> Queued:
        """Wait for a quick match; ``match_found`` and ``race_started`` follow as events.

        A rated match (the default) pairs players of close ratings and changes their
        ratings; ``rated=False`` joins the casual queue.
        """
        return await self._typed(QueueJoin(variant=variant, rated=rated), Queued)

    async def queue_cancel(self) -> Ok:
        """Leave the quick-match queue."""
        return await self._typed(QueueCancel(), Ok)

    # racing
    def _game(self, game: str | None, v: int | None) -> tuple[str, int]:
        race = self.race
        if game is None:
            if race is None:
                raise ClientError("no race is going on: pass the game id")
            game = race.game
        if v is None:
            v = race.v if race is not None and race.game == game else 0
        return game, v

    async def move(
        self, move: Move | str, *, game: str | None = None, v: int | None = None, check: bool = True
    ) -> Accepted:
        """Play a move (a :class:`Move` or text such as ``7H:2-5``); return ``accepted``.

        With ``check`` the shared engine checks the move on the local model first and
        raises :class:`IllegalLocally` instead of sending a move the server would refuse.
        """
        if isinstance(move, str):
            move = move_from_text(move)
        if check and self.race is not None and (game is None or game == self.race.game):
            reason = self.race.explain(move)
            if reason is not None:
                raise IllegalLocally(reason)
        game, v = self._game(game, v)
        if move.is_deal:
            return await self._act(DealReserve(game=game, v=v))
        return await self._act(PlayMove(game=game, v=v, move=WireMove.of(move)))

    async def deal(self, *, game: str | None = None, v: int | None = None) -> Accepted:
        """Deal the reserve."""
        game, v = self._game(game, v)
        return await self._act(DealReserve(game=game, v=v))

    async def undo(self, *, game: str | None = None, v: int | None = None) -> Accepted:
        """Take back this player's last move (when the race allows undo)."""
        game, v = self._game(game, v)
        return await self._act(Undo(game=game, v=v))

    async def hint(self, *, game: str | None = None, v: int | None = None) -> Hints:
        """Ask for hints: legal moves, best first (when the race allows hints)."""
        game, v = self._game(game, v)
        return await self._typed(HintRequest(game=game, v=v), Hints)

    async def resign(self, *, game: str | None = None, v: int | None = None) -> Accepted:
        """Give up this race."""
        game, v = self._game(game, v)
        return await self._act(Resign(game=game, v=v))

    # spectating
    async def games_list(self, variant: str | None = None, subscribe: bool = False) -> Games:
        """List the live races that may be watched.

        With ``subscribe`` the server then pushes ``games_update`` messages; :attr:`games`
        follows them (game id to game info). ``subscribe=False`` ends a subscription.
        """
        return await self._typed(GamesList(variant=variant, subscribe=subscribe), Games)

    async def watch(self, *, game: str | None = None, room: str | None = None) -> SpectatorSnapshot:
        """Watch a race by game id or room code."""
        return await self._typed(Watch(game=game, room=room.upper() if room else None), SpectatorSnapshot)

    async def unwatch(self, game: str | None = None) -> Ok:
        """Stop watching."""
        if game is None:
            game, _ = self._game(None, None)
        return await self._typed(Unwatch(game=game), Ok)

    async def replay(self, game: str) -> ReplayLog:
        """Return the move log of a finished game (every racer's moves and their times)."""
        return await self._typed(Replay(game=game), ReplayLog)

    # solo play
    async def solo_new(
        self,
        variant: str = "scorpion",
        reserve_rule: str = "any-time",
        *,
        save: bool = True,
        winnable: bool = False,
    ) -> RaceStarted:
        """Start a solo game on a fresh secret deal (New Game); undo and hints are allowed.

        With ``save`` the server keeps the game as it goes: :meth:`saved_games` lists it and
        :meth:`solo_resume` continues it, from any device with this player's token. With
        ``winnable`` the deal is one the solver has proved winnable (a few seconds at most).
        """
        request = SoloNew(variant=variant, reserve_rule=reserve_rule, save=save, winnable=winnable)
        return await self._typed(request, RaceStarted)

    async def solo_replay(self, game: str | None = None) -> RaceStarted:
        """Play the deal of one of this player's solo games again from the start, as a new game.

        ``game`` defaults to the game being played (or just finished).
        """
        if game is None:
            game, _ = self._game(None, None)
        return await self._typed(SoloReplay(game=game), RaceStarted)

    async def solo_resume(self, game: str) -> Snapshot:
        """Continue a saved solo game; the answer (and :attr:`race`) is its full state."""
        return await self._typed(SoloResume(game=game), Snapshot)

    async def saved_games(self) -> SavedGamesList:
        """Return this player's saved solo games in progress, newest first."""
        return await self._typed(SavedGames(), SavedGamesList)

    async def solo_leave(self, game: str | None = None) -> Ok:
        """Leave a saved solo game for now (default: the one being played); its clock stops."""
        game = game if game is not None else self._game(None, None)[0]
        answer = await self._typed(SoloLeave(game=game), Ok)
        if self.race is not None and self.race.game == game:
            self.race = None
        return answer

    async def saved_delete(self, game: str) -> Ok:
        """Delete one of this player's saved solo games (left first)."""
        return await self._typed(SavedDelete(game=game), Ok)

    # daily tournament, leaderboards, statistics, account
    async def daily_info(self, variant: str = "scorpion") -> Daily:
        """Return today's daily deal: date, commitment, whether played and finished, yesterday's reveal."""
        return await self._typed(DailyInfo(variant=variant), Daily)

    async def daily_start(self, variant: str = "scorpion", *, practice: bool = False) -> RaceStarted:
        """Start today's daily deal: the ranked attempt (once a day), or with ``practice`` an unranked replay.

        Raises ``ServerError`` ``daily_already_played`` for a second ranked attempt and
        ``not_allowed`` for practice before the ranked attempt is over.
        """
        return await self._typed(DailyStart(variant=variant, practice=practice), RaceStarted)

    async def daily_ghost(self, variant: str = "scorpion", player: str | None = None) -> RaceStarted:
        """Practise today's deal against a board player's run (the leader's without ``player``).

        Raises ``ServerError`` ``not_allowed`` before this player's ranked attempt is over.
        """
        return await self._typed(DailyGhost(variant=variant, player=player), RaceStarted)

    # -- challenges ---------------------------------------------------------------------------

    async def challenge_create(self, game: str | None = None) -> Challenge:
        """Make a challenge of one of this player's finished games (default: the last one)."""
        if game is None:
            game, _ = self._game(None, None)
        return await self._typed(ChallengeCreate(game=game), Challenge)

    async def challenge_new(
        self,
        variant: str = "scorpion",
        reserve_rule: str = "any-time",
        *,
        undo: bool = True,
        hints: bool = True,
    ) -> RaceStarted:
        """Play a fresh deal first; the server sends ``challenge`` (an event) when it ends."""
        message = ChallengeNew(variant=variant, reserve_rule=reserve_rule, undo=undo, hints=hints)
        return await self._typed(message, RaceStarted)

    async def challenge_take(self, code: str) -> RaceStarted:
        """Race a challenge's ghosts; their progress comes as a live rival's does."""
        return await self._typed(ChallengeTake(code=code.upper()), RaceStarted)

    async def challenge_board(self, code: str) -> ChallengeBoardInfo:
        """Return a challenge's ghosts and its takers' results."""
        return await self._typed(ChallengeBoard(code=code.upper()), ChallengeBoardInfo)

    async def challenge_list(self) -> ChallengeListInfo:
        """Return this player's challenges, each with its board."""
        return await self._typed(ChallengeList(), ChallengeListInfo)

    async def leaderboard(
        self,
        variant: str = "scorpion",
        date: str | None = None,
        *,
        offset: int = 0,
        limit: int = 20,
        subscribe: bool = False,
    ) -> LeaderboardPage:
        """Return ranks ``offset + 1`` to ``offset + limit`` of a day's board (today by default).

        With ``subscribe`` the server pushes a fresh first page (without ``ref``) whenever the
        board changes; :attr:`leaderboard_page` is always the latest page received.
        """
        message = Leaderboard(variant=variant, date=date, offset=offset, limit=limit, subscribe=subscribe)
        return await self._typed(message, LeaderboardPage)

    async def around_me(
        self, variant: str = "scorpion", date: str | None = None, radius: int = 5
    ) -> LeaderboardPage:
        """Return this player's rank with ``radius`` neighbours above and below (empty when absent)."""
        return await self._typed(AroundMe(variant=variant, date=date, radius=radius), LeaderboardPage)

    async def stats(self, variant: str | None = None) -> StatsInfo:
        """Return this player's statistics, per variant (every variant played when ``variant`` is None)."""
        return await self._typed(Stats(variant=variant), StatsInfo)

    # the solver: post-game analysis and practice hints
    async def analyze(self, game: str | None = None) -> Analysis:
        """Return the analysis of one of this player's finished games (the tracked race by default).

        Raises ``ServerError`` ``not_allowed`` while the game runs (or for a daily game
        before its day is over) and ``unavailable`` while it is still being computed (the
        server then pushes it when ready: see :meth:`analysis`).
        """
        if game is None:
            game, _ = self._game(None, None)
        return await self._typed(Analyze(game=game), Analysis)

    async def analysis(self, game: str | None = None, timeout: float = 30.0) -> Analysis:
        """Return the analysis of a finished game, waiting for the server's push if needed.

        The analysis already pushed is returned at once; otherwise it is asked for with
        ``analyze``, and while the server is still computing it (``unavailable``) the push
        is awaited for up to ``timeout`` seconds (``TimeoutError`` then). For the race being
        played, its end is awaited first.
        """
        if game is None:
            game, _ = self._game(None, None)
        known = self.analyses.get(game)
        if known is not None:
            return known
        race = self.race
        if race is not None and race.game == game and not race.spectating and race.ended is None:
            await self.wait_for(RaceEnded, timeout=timeout, game=game)  # analysed once it is over
        pushed = asyncio.ensure_future(self.wait_for(Analysis, timeout=timeout, game=game))
        try:
            try:
                return await self.analyze(game)
            except ServerError as exc:
                if exc.code != ErrorCode.UNAVAILABLE.value or exc.retryable:
                    raise  # refused, or the storage stayed out of reach: not still being computed
            known = self.analyses.get(game)  # pushed before the waiter was in place
            return known if known is not None else await pushed
        finally:
            pushed.cancel()
            with contextlib.suppress(asyncio.CancelledError, ClientError, TimeoutError):
                await pushed

    # ratings and profiles
    async def profile(self, player: str | None = None) -> Profile:
        """Return a player's profile (this player's own by default): ratings, statistics, recent games."""
        return await self._typed(ProfileRequest(player=player), Profile)

    async def rating_board(
        self, variant: str = "scorpion", *, offset: int = 0, limit: int = 20, around_me: bool = False
    ) -> RatingPage:
        """Return a page of a variant's rating board, or (``around_me``) the page around this player."""
        request = RatingBoard(variant=variant, offset=offset, limit=limit, around_me=around_me)
        return await self._typed(request, RatingPage)

    async def rating_change(self, game: str | None = None, timeout: float = 30.0) -> RatingChange:
        """Return how a rated race changed its racers' ratings, waiting for the server's push.

        The tracked race by default. Raises ``TimeoutError`` if none comes (the race was
        not rated).
        """
        if game is None:
            game, _ = self._game(None, None)
        known = self.rating_changes.get(game)
        if known is not None:
            return known
        return await self.wait_for(RatingChange, timeout=timeout, game=game)

    async def replay_positions(self, game: str, player: str) -> ReplayPositionsInfo:
        """Return every position one racer of a finished game went through, move by move."""
        return await self._typed(ReplayPositions(game=game, player=player), ReplayPositionsInfo)

    async def winnable(self, *, game: str | None = None, v: int | None = None) -> WinnableInfo:
        """Ask, in a solo game only, whether the position can still be won, and a winning move.

        The answer's ``move`` (wire form, see :func:`protocol.game.move_from_json`) is a
        first move of a winning line when the verdict is ``winnable``. Races and daily
        games refuse it with ``not_allowed``. :attr:`RaceState.winnable
        <client.state.RaceState.winnable>` keeps the answer while the board is unchanged.
        """
        game, v = self._game(game, v)
        limit = max(self.request_timeout, 30.0)  # the solver may take a few seconds
        return await self._typed(Winnable(game=game, v=v), WinnableInfo, timeout=limit)

    async def slipped_move(self, analysis: Analysis) -> Move | None:
        """Return the player's move after which the game could no longer be won (``None`` if none).

        The analysis gives its index in the player's final line; the line comes from the
        game's ``replay_log`` (undos taken back).
        """
        if analysis.slipped is None:
            return None
        line = final_line(await self.replay(analysis.game), analysis.player)
        return line[analysis.slipped] if 0 <= analysis.slipped < len(line) else None

    async def forget_me(self) -> Forgotten:
        """Erase this player on the server (saved games, statistics, leaderboard entries, identity).

        Returns ``forgotten`` with what was removed; the stored token is deleted and the
        server then closes the session (code 1000: no reconnect).
        """
        answer = await self._typed(ForgetMe(), Forgotten)
        if self.store is not None:
            self.store.forget(self.urls[0])
        self.token = None
        return answer
