"""Challenges: a deal and its recorded runs, raced later by friends against the ghosts.

A challenge is made from a finished game by one of its players (a race, a solo game, a
challenge game, which passes it on with the taker's run added, or a daily game once its
day is over), or by playing a fresh deal first (``challenge_new``). Taking it starts a
challenge game: the same deal on a fresh salt, the taker against the ghosts, which
:class:`~server.game.ghost.GhostDriver` moves at their recorded pace. Challenges are
unrated: their results go on the challenge's own board, never on ratings or the daily's.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from protocol.rating import standing_key
from protocol.wire import message as m
from protocol.wire.error import ErrorCode, ProtocolError

from .accounts import require_account
from .daily import DailyService
from .game.feed import GameFeed
from .game.ghost import GhostClock, GhostDriver, GhostRuns, ghost_id, record_run
from .game.live import GameSpec, LiveGame, now_ms
from .game.opening import restart, save_restart
from .game.race import RaceService
from .runtime.service import Plumbing, Service
from .session import Session
from .store import UNREACHABLE, is_ghost

__all__ = ["ChallengeService"]


def _ghost_record(index: int, ghost: dict[str, Any]) -> m.Ghost:
    moves = sum(1 for action in ghost["actions"] if action[1] == "move")
    return m.Ghost(
        player=ghost_id(index),
        name=ghost["name"],
        score=ghost["score"],
        elapsed=ghost["elapsed"],
        status=ghost["status"],
        moves=moves,
    )


def _challenge(code: str, settings: Mapping[str, Any], ghosts: list[dict[str, Any]], ref: Any) -> m.Challenge:
    """Return the ``challenge`` message of a challenge as stored."""
    return m.Challenge(
        code=code,
        variant=settings["variant"],
        options=m.Options.from_dict(json.loads(settings["options"])),
        owner=settings["owner"],
        ghosts=tuple(_ghost_record(i, g) for i, g in enumerate(ghosts)),
        expires=int(settings["expires"]),
        ref=ref,
    )


def board_key(entry: Mapping[str, Any]) -> tuple[int, int, int]:
    """Return a board entry's place as a sort key (lower is better), as a race's standings
    order its racers (:func:`protocol.rating.standing_key`): score, how the run ended, then
    the shorter time among those who finished and the longer stay among those who stopped."""
    return standing_key(entry["score"], entry["status"], entry["elapsed"])


def rank_board(results: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Return a board's entries ranked as a race's standings are (:func:`board_key`), then
    who finished first."""
    rows = sorted(results.values(), key=lambda e: (board_key(e), e["finished"]))
    return [{**row, "rank": rank} for rank, row in enumerate(rows, start=1)]


class ChallengeService(Service):
    """Make, take and rank challenges; drive the ghosts of the challenge games on this node."""

    def __init__(self, plumbing: Plumbing, race: RaceService, feed: GameFeed, daily: DailyService) -> None:
        super().__init__(plumbing)
        self.race = race
        self.feed = feed
        self.daily = daily
        self.ttl_ms = int(self.config.challenge_ttl * 1000)
        self.drivers: dict[str, GhostDriver] = {}
        self.reading: dict[str, asyncio.Future[tuple[dict[str, str], list[dict[str, Any]]] | None]] = {}
        """The challenges being read, by code: the takers asking meanwhile wait for the same read."""
        self.timer = GhostClock()
        """The one timer every ghost this node drives waits on."""
        self.runs = GhostRuns()
        """The runs those ghosts replay, each worked out once for all the games racing it."""

    # -- making --------------------------------------------------------------------------

    async def create(self, player: str, game_id: str, ref: Any = None) -> m.Challenge:
        """Make a challenge of one of ``player``'s finished games, every racer's run a ghost."""
        game = await self.race.load(game_id)
        if game is None:
            raise ProtocolError(ErrorCode.NO_SUCH_GAME, f"there is no game {game_id!r}")
        if player not in game.status or is_ghost(player):
            raise ProtocolError(ErrorCode.NOT_YOUR_GAME, "only a player of a game can make it a challenge")
        if not game.ended:
            raise ProtocolError(ErrorCode.NOT_ALLOWED, "that game is not over: finish it first")
        if game.daily and not self.daily.is_over(game.daily):
            raise ProtocolError(ErrorCode.NOT_ALLOWED, "a daily game makes a challenge once its day is over")
        # One challenge a game and player: asking again gives the same code while it is
        # kept, so a player's challenges are bounded by the games they finished.
        made = await self.store.challenge_made_from(player, game_id)
        stored = None if made is None else await self.store.challenge(made)
        if made and stored:
            return _challenge(made, *stored, ref)
        ghosts = await self._runs(game, player)
        return await self._store(player, game, ghosts, ref)

    async def _runs(self, game: LiveGame, player: str) -> list[dict[str, Any]]:
        """Return the ghosts a finished game gives: a challenge game's own ghosts then the
        player's run; any other game's racers' runs, the player's first (8 at most)."""
        events = [json.loads(raw) for _, raw in await self.store.events(game.game_id, 0)]
        ending = next((e for e in reversed(events) if e["type"] == "race_ended"), None)
        standings = {row["player"]: row for row in (ending or {}).get("standings", ())}
        names = dict(game.roster)
        mine = record_run(events, player, names[player], game.start, standings.get(player, {}))
        if game.challenge:
            stored = await self.store.challenge(game.challenge)
            if stored is not None:
                return [*stored[1][: m.MAX_GHOSTS - 1], mine]
        others = [
            record_run(events, pid, name, game.start, standings.get(pid, {}))
            for pid, name in game.roster
            if pid != player
        ]
        return [mine, *others][: m.MAX_GHOSTS]

    async def _store(
        self, owner: str, game: LiveGame, ghosts: list[dict[str, Any]], ref: Any = None
    ) -> m.Challenge:
        expires = now_ms() + self.ttl_ms
        options = m.Options(
            undo=game.options.undo,
            hints=game.options.hints,
            spectators=True,
            rated=False,
            reserve_rule=game.rule.value,
        )
        settings = {
            "variant": game.variant,
            "number": str(game.number),
            "options": json.dumps(options.to_dict()),
            "source": game.game_id,
            "created": now_ms(),
        }
        code = await self.store.create_challenge(owner, settings, ghosts, expires)
        return _challenge(code, {**settings, "owner": owner, "expires": str(expires)}, ghosts, ref)

    # -- taking --------------------------------------------------------------------------

    async def _load(self, code: str) -> tuple[dict[str, str], list[dict[str, Any]]]:
        """Return a challenge's settings and ghosts. Takers of one challenge asking at once
        share one read (a link shared widely is taken by many within the same second); the
        ghosts are only read, never changed, by whoever shares them."""
        code = code.upper()
        reading = self.reading.get(code)
        if reading is None:
            reading = self.reading[code] = asyncio.ensure_future(self.store.challenge(code))
            reading.add_done_callback(lambda _: self.reading.pop(code, None))
        stored = await asyncio.shield(reading)
        if stored is None:
            raise ProtocolError(
                ErrorCode.NO_SUCH_CHALLENGE, "no challenge has that code (it may have expired)"
            )
        return stored

    async def start_new(self, session: Session, message: m.ChallengeNew) -> None:
        """Start a fresh deal whose run becomes a challenge's first ghost when it ends."""
        options = m.Options(
            undo=message.undo, hints=message.hints, spectators=True, reserve_rule=message.reserve_rule
        )
        spec = GameSpec(variant=message.variant, options=options, mode="challenge", number=self._test_deal())
        await self._start(session, spec, [], message.ref)

    async def take(self, session: Session, message: m.ChallengeTake) -> None:
        """Start the taker's race against a challenge's ghosts."""
        settings, ghosts = await self._load(message.code)
        options = m.Options.from_dict(json.loads(settings["options"]))
        spec = GameSpec(
            variant=settings["variant"],
            options=options,
            mode="challenge",
            number=int(settings["number"]),
            challenge=message.code.upper(),
        )
        await self._start(session, spec, ghosts, message.ref)

    async def daily_ghost(self, session: Session, message: m.DailyGhost) -> None:
        """Start practice of today's deal against one board player's ranked run."""
        assert session.player is not None
        date, variant = self.daily.today(), message.variant
        # A guest is free to make: its practice would hand the leader's run to an account.
        require_account(session, "racing today's ghosts", "race them once the day is over, in its replays")
        _, done = await self.daily.attempt_over(date, variant, session.player)
        if not done:
            raise ProtocolError(
                ErrorCode.NOT_ALLOWED, "the daily's ghosts open once your ranked attempt of today is over"
            )
        target = message.player
        if target is None:
            _, top = await self.store.board_page(date, variant, 0, 1)
            if not top:
                raise ProtocolError(ErrorCode.NO_SUCH_PLAYER, "nobody is on today's board yet")
            target = top[0][0]
        game_id, over = await self.store.daily_attempt(date, variant, target)
        source = await self.race.load(game_id) if game_id and over else None
        if source is None or not source.ended:
            raise ProtocolError(ErrorCode.NO_SUCH_PLAYER, "that player has no finished run on today's board")
        ghosts = (await self._runs(source, target))[:1]
        deal = await self.daily.deal(date, variant)
        options = m.Options(undo=True, hints=True, spectators=True, reserve_rule=source.rule.value)
        spec = GameSpec(
            variant=variant, options=options, mode="practice", number=deal.number, salt=deal.salt, daily=date
        )
        await self._start(session, spec, ghosts, message.ref)

    def _test_deal(self) -> int | None:
        deals = [int(n) for n in self.config.test_deals.split(",") if n.strip()]
        return deals[0] if deals else None

    async def _start(self, session: Session, spec: GameSpec, ghosts: list[dict[str, Any]], ref: Any) -> None:
        """Start the taker's game and answer them with its first event as soon as its keys
        and the taker's place are written.

        The race starts as the answer leaves (:func:`~server.game.opening.restart`): the taker's
        clock, and so their time, and the ghosts' schedule count from that one moment, the
        ``start`` the answer carries. A burst of takers at once (the game written, the place)
        delays when each is answered, never gives the ghosts time the taker did not have.
        What the answer need not wait for (the live list, the start counted) follows it."""
        assert session.player is not None
        player = session.player
        racers = [(player, session.name)] + [(ghost_id(i), g["name"]) for i, g in enumerate(ghosts)]
        opened = await self.race.open_race(racers, spec, follow=True, announce=False)
        game = opened.game
        game_id = game.game_id
        restart(opened)
        await self.feed.attach_started(session, game, opened.first, ref)
        await save_restart(self.store, opened)  # queued in the same turn as the answer
        if ghosts:
            driver = GhostDriver(
                self.race,
                game_id,
                player,
                ghosts,
                timer=self.timer,
                runs=self.runs,
                spawn=self.tasks.spawn,
                on_done=lambda: self._driver_done(game),
            )
            self.drivers[game_id] = driver
            game.listeners.add(driver)
            driver.start(game)
        counted = spec.mode != "practice"  # a practice game counts no start
        self.tasks.spawn(self._started(game, player, opened.ttls.get(player, -1) if counted else None))

    async def _started(self, game: LiveGame, player: str, ttl_ms: int | None) -> None:
        """Put a challenge game on the live list and count its start (unless ``ttl_ms`` is
        ``None``), after the taker's answer; again once storage is back."""
        calls: list[Callable[[], Awaitable[None]]] = [
            lambda: self.store.announce_game(game.game_id, game.start)
        ]
        if ttl_ms is not None:
            calls.append(lambda: self.store.count_start(player, game.variant, ttl_ms))
        for call in calls:
            while True:
                try:
                    await call()
                    break
                except UNREACHABLE:
                    await self.store.health.wait_to_retry()

    def _driver_done(self, game: LiveGame) -> None:
        """Forget a game's ghosts once their part is over: the node keeps the game only while
        a connection here still follows it."""
        driver = self.drivers.pop(game.game_id, None)
        if driver is not None:
            self.tasks.spawn(self.feed.detach(driver, game.game_id))

    # -- results -------------------------------------------------------------------------

    async def race_done(
        self, game: LiveGame, standings: list[dict[str, Any]], finished: dict[str, int]
    ) -> None:
        """Record a challenge game's result: a fresh deal's run becomes a challenge; a taker's
        result goes on the challenge's board and its creator is told."""
        if game.mode != "challenge":
            return
        taker = next((pid for pid in game.racer_ids() if not is_ghost(pid)), None)
        if taker is None:
            return
        if game.challenge is None:
            made = await self.create(taker, game.game_id)
            await self.store.notify(taker, {"kind": "message", "message": made.to_dict()})
            return
        stored = await self.store.challenge(game.challenge)
        row = next((r for r in standings if r["player"] == taker), None)
        if stored is None or row is None:
            return
        settings, _ = stored
        entry = {
            "player": taker,
            "name": row["name"],
            "score": row["score"],
            "elapsed": row["elapsed"],
            "status": row["status"],
            "place": row["rank"],
            "game": game.game_id,
            "finished": finished.get(taker, now_ms()),
        }
        await self.store.record_challenge_result(
            game.challenge, taker, entry, int(settings["expires"]), rank_key=board_key
        )
        ranked = {e["player"]: e for e in rank_board(await self.store.challenge_results(game.challenge))}
        shown = {**entry, "rank": ranked.get(taker, {"rank": len(ranked) + 1})["rank"]}
        taken = m.ChallengeTaken(code=game.challenge, entry=m.ChallengeEntry(**shown))
        await self.store.notify(settings["owner"], {"kind": "message", "message": taken.to_dict()})

    async def board(self, code: str, ref: Any = None) -> m.ChallengeBoardInfo:
        """Return a challenge's ghosts and takers' results, best first."""
        settings, ghosts = await self._load(code)
        entries = rank_board(await self.store.challenge_results(code.upper()))[:200]
        return m.ChallengeBoardInfo(
            code=code.upper(),
            variant=settings["variant"],
            owner=settings["owner"],
            ghosts=tuple(_ghost_record(i, g) for i, g in enumerate(ghosts)),
            entries=tuple(m.ChallengeEntry(**e) for e in entries),
            expires=int(settings["expires"]),
            ref=ref,
        )

    async def mine(self, player: str, ref: Any = None) -> m.ChallengeListInfo:
        """Return the player's challenges still kept, newest first, each with its board."""
        boards = []
        for code in await self.store.challenges_of(player, now_ms(), 50):
            try:
                boards.append(await self.board(code))
            except ProtocolError:
                continue  # expired meanwhile
        return m.ChallengeListInfo(challenges=tuple(boards), ref=ref)
