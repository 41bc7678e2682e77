"""The screen of the full-screen terminal client, built on textual.

One screen, from top to bottom: a status line (variant, score, moves, clock, spectators),
the tableau (or the room lobby, or the standings), the racers' progress bars, a message
line, a command line for typed notation, and the key bindings. Everything shown is
redrawn from the client's tracked state (:class:`client.state.RaceState`) whenever the
server says something, so the screen is always what the server last confirmed.
When a game is over the solver's analysis follows: whether the deal was winnable, and
after which move the win slipped away. A rated race says so on the status line, and its
standings show each racer's rating before and after it once the server's
``rating_change`` arrives.
While the server is busy (its storage out of reach for a moment) the message line says
"server busy, retrying…" until the client's request is answered again.

The keys, the mouse and typed commands are :class:`client.tui.app.ScorpionApp`'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from rich.console import Console
from rich.text import Text
from textual import events
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.css.query import NoMatches
from textual.widgets import Footer, Input, Static
from textual.worker import Worker

from protocol.game import CELL_BASE, Move
from protocol.solver import Budget, solve_deal
from protocol.wire.message import (
    Analysis,
    Countdown,
    Games,
    GamesUpdate,
    MatchFound,
    Profile,
    Queued,
    QueueTimeout,
    RaceEnded,
    RatingChange,
    RematchOffered,
)

from ..api import ScorpionClient, room_link
from ..errors import (
    Busy,
    ClientError,
    Closed,
    Disconnected,
    IllegalLocally,
    Reconnected,
    Recovered,
    ServerError,
)
from ..state import RaceState
from .render import (
    card_names,
    rating_label,
    render_analysis,
    render_board,
    render_profile,
    render_racer,
    render_room,
    render_standings,
    render_status,
)

__all__ = ["BUSY_NOTE", "PROFILE_NOTE", "ScreenApp", "Starter", "server_error_text"]

Starter = Callable[[ScorpionClient], Awaitable[Any]]

BUSY_NOTE = "server busy, retrying…"
"""The message line while the client sends a request again that the busy server refused."""

LOCAL_BUDGET = (20_000_000, 8.0)
"""Nodes and seconds this client's own solver may spend on a deal the server left undecided."""

PROFILE_NOTE = "your profile: P or Esc to go back"
"""The message line while the player's profile is on screen."""


def server_error_text(exc: ServerError, mode: str | None = None) -> str:
    """Return the message line for a request the server refused (a game or room in the way
    said in words; ``mode`` is that game's when known)."""
    words = exc.in_the_way(mode)
    if words is not None:
        return words
    if exc.retryable:
        return f"server busy, gave up retrying: {exc.message}; try again in a moment"
    return f"server: {exc.message}" if exc.message else f"server: {exc.code}"


class ScreenApp(App[int]):
    """The terminal client without its keys: the layout, the server's events, and all it draws."""

    TITLE = "Scorpion Race"
    AUTO_FOCUS = None
    CSS = """
    Screen { layout: vertical; }
    #status { height: 1; background: $primary-background; color: $text; padding: 0 1; }
    #board-scroll { height: 1fr; }
    #board { padding: 0 1; }
    #racers { height: auto; max-height: 9; padding: 0 1; border-top: solid $primary-background; }
    #message { height: 1; padding: 0 1; color: $warning; }
    #command { height: 1; border: none; padding: 0 1; background: $boost; }
    #command:focus { border: none; }
    """

    def __init__(self, client: ScorpionClient, start: Starter | None = None) -> None:
        super().__init__()
        self.client = client
        self.starter = start
        self.cursor: tuple[int, int] = (0, 0)
        self.picked: tuple[int, int] | None = None
        self.watched = 0
        self.note = ""
        self.queued: str | None = None
        self.queue_waited: int | None = None  # seconds the queue was waited in vain
        self.hinted: tuple[str, int, Move] | None = None  # game, version, best move
        self.slipped: dict[str, Move | None] = {}  # game -> the move after which the win slipped away
        self.decided: dict[str, str | None] = {}  # game -> the verdict solved here (None: solving)
        self._mode: tuple[object, ...] | None = None
        self.quitting = False
        self._announced: str | None = None  # the rematch last announced to this spectator
        self.profile: Profile | None = None  # the profile on screen in place of the main area
        self.countdown: int | None = None  # server time the announced race starts at
        self.clock_stop: int | None = None  # server time the shown clock stopped at (an outage)
        self.clock_paused: dict[str, int] = {}  # game -> ms of storage outages left out of its clock
        self.finished: list[str] = []  # the player's games that ended on screen, oldest first

    # -- layout ---------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Static(id="status")
        with VerticalScroll(id="board-scroll"):
            yield Static(id="board")
        yield Static(id="racers")
        yield Static(id="message")
        yield Input(placeholder=self.command_placeholder(), id="command")
        yield Footer(compact=True)

    async def on_mount(self) -> None:
        self.query_one("#board-scroll").can_focus = False
        self.set_focus(None)
        self._spawn(self._pump, "events")
        self.set_interval(0.25, self._tick)
        if self.starter is not None:
            starter = self.starter
            self._run(lambda: starter(self.client))
        self.redraw()

    def on_resize(self, event: events.Resize) -> None:
        """Lay the board and the racers out again for the terminal's new size."""
        self.call_after_refresh(self.redraw)

    async def _pump(self) -> None:
        async for event in self.client.events():
            if isinstance(event, Disconnected):
                self._stop_clock()
                self.say(f"connection lost ({event.code}); reconnecting…")
            elif isinstance(event, Reconnected):
                self._start_clock(paused=False)  # the server's clock went on: so does this one
                self.say(f"reconnected to {event.url}")
            elif isinstance(event, Closed):
                self.say(f"disconnected: {event.reason}")
            elif isinstance(event, Busy):
                self._stop_clock()  # the storage is out of reach: the game's clock stands still
                self.say(BUSY_NOTE)
            elif isinstance(event, Recovered):
                self._start_clock(paused=True)
                if self.note == BUSY_NOTE:
                    self.say("")
            elif isinstance(event, Queued):
                self.queued = event.variant
            elif isinstance(event, Countdown):
                self.countdown = event.start
            elif isinstance(event, MatchFound):
                self.countdown = event.start
                self.queued = self.queue_waited = None
                self.say("match found: " + ", ".join(p.name for p in event.players))
            elif isinstance(event, QueueTimeout):
                self.queued = None
                self.queue_waited = event.waited
                self.say(f"nobody came in {event.waited} s: press q and try again later")
            elif isinstance(event, RaceEnded):
                self.picked = None
                race = self.race
                if race is not None and race.game == event.game and not race.spectating:
                    self.finished += [] if event.game in self.finished else [event.game]
                if self.race is not None and self.race.spectating and self.race.game == event.game:
                    # Follow the live list under the result: the racers may race again.
                    self._run(lambda: self.client.games_list(subscribe=True))
            elif isinstance(event, Games | GamesUpdate) and (rematch := self._rematch_to_watch()):
                if self._announced != rematch:
                    self._announced = rematch
                    names = " and ".join(p.name for p in self.client.games[rematch].players)
                    self.say(f"{names} are racing again: press m to watch")
            elif isinstance(event, RematchOffered):
                shown = self.race is not None and self.race.game == event.game and self._can_rematch()
                self.say(
                    f"{event.name} wants a rematch"
                    + (": press a to race again" if shown else f" of {event.game}")
                )
            elif isinstance(event, Analysis):
                self._on_analysis(event)
            elif isinstance(event, RatingChange):
                self._on_rating_change(event)
            self.redraw()

    def _tick(self) -> None:
        if self.countdown is not None:
            self.redraw()  # the countdown's number on the board
            if self.countdown_left() == 0:
                self.countdown = None
            return
        with contextlib.suppress(NoMatches):  # the screen is going away
            self.query_one("#status", Static).update(self.status_text())

    def countdown_left(self) -> int:
        """Return the whole seconds (rounded up) until the announced race starts, 0 when none is."""
        if self.countdown is None:
            return 0
        return max(0, -((self.client.server_now() - self.countdown) // 1000))

    def _spawn(self, job: Callable[[], Coroutine[Any, Any, None]], group: str) -> Worker[None]:
        """Run ``job()`` in a textual worker, called only once the worker starts.

        Given the function rather than a coroutine, a worker cancelled before it starts
        (the app closing) leaves no coroutine behind that was never awaited.
        """
        return self.run_worker(job, group=group)

    def _run(self, request: Callable[[], Awaitable[Any]]) -> None:
        """Run ``request()`` in a worker, its errors shown on the message line.

        The request is made only when the worker starts, and not at all once the app is
        quitting: keys typed just after ``q`` send nothing to the server.
        """
        if self.quitting:
            return

        async def guarded() -> None:
            try:
                await request()
            except IllegalLocally as exc:
                self.say(f"illegal: {exc}")
            except ServerError as exc:
                self.say(server_error_text(exc, self.race.mode if self.race is not None else None))
            except (ClientError, TimeoutError) as exc:
                self.say(f"error: {exc}")
            self.redraw()

        self._spawn(guarded, "requests")

    def say(self, note: str) -> None:
        """Show a one-line message, its cards named as the board draws them (``3♠``, not ``3S``)."""
        note = card_names(note)
        self.note = note
        with contextlib.suppress(NoMatches):
            self.query_one("#message", Static).update(Text(note[:200]))

    # -- drawing --------------------------------------------------------------------------

    @property
    def race(self) -> RaceState | None:
        """Return the race on screen."""
        return self.client.race

    def shown_view(self) -> dict[str, Any] | None:
        """Return the board on screen: the player's own, or the watched racer's."""
        race = self.race
        if race is None:
            return None
        if race.spectating:
            racers = [r for r in race.racers.values() if r.view is not None]
            if not racers:
                return None
            return racers[self.watched % len(racers)].view
        return race.view

    def status_text(self) -> Text:
        """Return the status line (a shorter form, the status first, where the full one does not fit)."""
        race = self.race
        out = Text(no_wrap=True, overflow="ellipsis")
        if (left := self.countdown_left()) and (race is None or race.ended is not None):
            out.append(f"Scorpion Race  the race starts in {left}…", style="bold green")
            return out
        if race is None:
            where = {"in_room": "in a room", "queued": "waiting for a match"}.get(self.client.state.value, "")
            out.append(f"Scorpion Race  {self.client.name}  {where}", style="bold")
            return out
        full = self._status_line(race, compact=False)
        return full if full.cell_len <= self.size.width - 2 else self._status_line(race, compact=True)

    def _status_line(self, race: RaceState, *, compact: bool) -> Text:
        return render_status(race, compact=compact, watched=self.watched, elapsed=self.elapsed_ms(race))

    def elapsed_ms(self, race: RaceState) -> int | None:
        """Return the race's clock as this client shows it: the time since its start, less
        the storage outages seen while it ran (the game's own clock leaves them out), stopped
        while the server is busy or out of reach; ``None`` once it is over."""
        if race.ended is not None:
            return None
        now = self.client.server_now() if self.clock_stop is None else self.clock_stop
        return max(0, now - race.start - self.clock_paused.get(race.game, 0))

    def _stop_clock(self) -> None:
        if self.clock_stop is None:
            self.clock_stop = self.client.server_now()

    def _start_clock(self, *, paused: bool) -> None:
        """Let the shown clock run again; ``paused``: the time it stood still is left out."""
        race = self.race
        if self.clock_stop is not None and race is not None and paused:
            stood = max(0, self.client.server_now() - max(self.clock_stop, race.start))
            self.clock_paused[race.game] = self.clock_paused.get(race.game, 0) + stood
        self.clock_stop = None

    def board_text(self) -> Text:
        """Return the main area: board, lobby, queue or standings."""
        race = self.race
        width = max(40, self.size.width - 2)
        if self.profile is not None:
            return render_profile(self.profile)
        if (left := self.countdown_left()) and (race is None or race.ended is not None):
            out = Text(f"The race starts in {left}…\n\n", style="bold green")
            if self.client.room is not None:
                room = self.client.room
                out.append(render_room(room, self.client.player, room_link(self.client.url, room.room)))
            return out
        if race is None:
            if self.client.room is not None:
                room = self.client.room
                return render_room(room, self.client.player, room_link(self.client.url, room.room))
            if self.queued or self.client.state.value == "queued":
                return Text(f"Waiting for a quick match ({self.queued or '…'}) — q to give up")
            if self.queue_waited is not None:
                return Text(f"No quick match: nobody else came within {self.queue_waited} s — q to quit")
            return Text("connecting…" if not self.client.connected else "waiting for the server…")
        view = self.shown_view()
        if view is None:
            return Text("waiting for the board…")
        targets: list[int] = []
        if self.picked is not None and not race.spectating:
            targets = list(self._targets(self.picked))
        elif (hint := self.current_hint()) is not None and not hint.is_deal:
            targets = [hint.target]
        text = render_board(
            view,
            width=width,
            cursor=None if race.spectating else self.cursor,
            picked=self.picked,
            targets=targets,
        )
        if race.ended is not None:
            text.append("\n")
            changes = self.client.rating_changes.get(race.game)
            text.append(
                render_standings(
                    race.ended,
                    race.mode,
                    rated=race.options.rated,
                    changes=changes,
                    awaited=not race.spectating,
                )
            )
            if race.analysis is not None:
                text.append(
                    render_analysis(
                        race.analysis,
                        self.slipped.get(race.game),
                        decided=self.decided.get(race.game, ""),
                    )
                )
            elif not race.spectating and race.mode in ("solo", "race"):
                text.append("analysing the deal…\n", style="dim")
            if not race.spectating:
                text.append(f"game {race.game}: ", style="bold cyan")
                text.append(f"scorpion replay {race.game} · scorpion analyze {race.game}\n", style="cyan")
            if race.mode == "solo":
                text.append("n: new game · p: replay this deal · q: quit", style="dim")
            elif self._can_rematch():
                text.append("a: race again (a rematch with the same players) · q: quit", style="dim")
        return text

    def farewell_text(self) -> str:
        """Return what the terminal says once the app closed: each game of the player's that
        ended, with the commands that step through it and analyse it."""
        return "\n".join(
            f"game {game} is over: `scorpion replay {game}` steps through it, "
            f"`scorpion analyze {game}` shows the solver's winning line"
            for game in self.finished
        )

    def current_hint(self) -> Move | None:
        """Return the hinted move while the board is still the one it was given for."""
        race = self.race
        if self.hinted is None or race is None:
            return None
        game, v, move = self.hinted
        return move if (race.game, race.v) == (game, v) and race.playing else None

    def racers_text(self) -> Text:
        """Return the racers' progress bars."""
        race = self.race
        out = Text(no_wrap=True, overflow="ellipsis")
        if race is None:
            return out
        width = max(20, self.size.width - 2)  # inside the panel's padding
        for index, racer in enumerate(race.racers.values()):
            if index:
                out.append("\n")
            mine = racer.player == race.me
            summary = race.summary if mine and race.summary else racer.summary
            out.append(render_racer(racer.name, summary, racer.status, race.variant, me=mine, width=width))
        return out

    def command_placeholder(self) -> str:
        """Return the command line's prompt: ``undo`` and ``hint`` only where the race allows
        them (never in a rated race or the daily's ranked attempt)."""
        race = self.race
        words = ["deal"]
        if race is None or race.options.undo:
            words.append("undo")
        if race is None or race.options.hints:
            words.append("hint")
        return f": type a move (7H:2-5, {', '.join(words)}, resign)"

    def redraw(self) -> None:
        """Redraw everything from the tracked state (nothing before the widgets are mounted)."""
        with contextlib.suppress(NoMatches):  # the screen is going away
            self._redraw()

    def _redraw(self) -> None:
        self._clamp_cursor()
        if self.profile is not None and not self._profile_allowed():
            self._close_profile()  # a game of the player's began: its board, not the profile
        race = self.race
        watching = race is not None and race.spectating
        running = race is not None and race.ended is None
        playing = race is not None and race.playing  # this player's part goes on
        follow = self._rematch_to_watch() is not None
        allows = (race.options.undo, race.options.hints) if race else None
        kind = (race.mode, race.variant) if race else ("", "")
        mode = (*kind, running, playing, watching, follow, allows)
        if mode != self._mode:
            self._mode = mode
            self.refresh_bindings()
            # A spectator has no moves to type: the prompt would only invite refusals.
            command = self.query_one("#command", Input)
            command.display = not watching
            command.placeholder = self.command_placeholder()
        self.query_one("#status", Static).update(self.status_text())
        self.query_one("#board", Static).update(self.board_text())
        self.query_one("#racers", Static).update(self.racers_text())

    def screen_text(self) -> str:
        """Return the whole screen as plain text (as a terminal of this size shows it)."""
        width, height = self.size
        console = Console(width=width, height=height, file=io.StringIO(), record=True, legacy_windows=False)
        console.print(self.screen._compositor.render_update(full=True))
        return console.export_text()

    # -- the cursor -----------------------------------------------------------------------

    def _columns(self) -> list[list[str | None]]:
        view = self.shown_view() or {}
        columns = [list(col) for col in view.get("columns", [])]
        columns += [[card] for card in (view.get("cells") or [])]
        return columns

    def _clamp_cursor(self) -> None:
        columns = self._columns()
        if not columns:
            return
        column = min(max(self.cursor[0], 0), len(columns) - 1)
        cards = columns[column]
        first = next((i for i, c in enumerate(cards) if c is not None), len(cards))
        row = min(max(self.cursor[1], first), max(len(cards) - 1, 0))
        self.cursor = (column, row)

    def _source(self, column: int) -> int:
        view = self.shown_view() or {}
        count = len(view.get("columns", []))
        return column if column < count else CELL_BASE + column - count

    def _targets(self, spot: tuple[int, int]) -> dict[int, Move]:
        race = self.race
        if race is None:
            return {}
        return race.targets(self._source(spot[0]), spot[1])

    # -- analysis, ratings, the profile, rematches ----------------------------------------

    def _on_analysis(self, analysis: Analysis) -> None:
        """Find the move the analysis says the win slipped away after (from the replay log);
        decide here a deal the server's solver left undecided."""
        self._decide(analysis)
        if analysis.slipped is None or analysis.game in self.slipped:
            return
        self.slipped[analysis.game] = None

        async def find() -> None:
            with contextlib.suppress(ClientError, TimeoutError):
                self.slipped[analysis.game] = await self.client.slipped_move(analysis)
            self.redraw()

        self._spawn(find, "requests")

    def _decide(self, analysis: Analysis) -> None:
        """Solve the deal here, within :data:`LOCAL_BUDGET`, when the server's analysis says
        ``unknown`` and the deal's number is known: the end screen shows this verdict then."""
        race = self.race
        if (
            analysis.verdict != "unknown"
            or analysis.game in self.decided
            or race is None
            or race.game != analysis.game
            or race.ended is None
            or race.ended.number is None
        ):
            return
        variant, number, rule = race.variant, int(race.ended.number), race.options.reserve_rule
        self.decided[analysis.game] = None

        async def decide() -> None:
            budget = Budget(nodes=LOCAL_BUDGET[0], seconds=LOCAL_BUDGET[1], clock=time.monotonic)
            solution = await asyncio.to_thread(solve_deal, variant, number, rule, budget)
            self.decided[analysis.game] = solution.verdict.value
            self.redraw()

        self._spawn(decide, "solver")

    def _profile_allowed(self) -> bool:
        """Tell whether the profile may cover the main area: no game of the player's goes on."""
        race = self.race
        return race is None or (not race.spectating and race.ended is not None)

    def _close_profile(self) -> None:
        self.profile = None
        if self.note == PROFILE_NOTE:
            self.say("")

    def _on_rating_change(self, change: RatingChange) -> None:
        """Say how the race just rated changed this player's rating."""
        mine = next((c for c in change.changes if c.player == self.client.player), None)
        if mine is None:
            return
        self._close_profile()  # out of date: P fetches it again
        delta = mine.after - mine.before
        after = rating_label(mine.after, mine.provisional)
        self.say(f"your {change.variant} rating: {mine.before} → {after} ({delta:+d})")

    def _can_rematch(self) -> bool:
        """Tell whether the race on screen is a finished race between players."""
        race = self.race
        return (
            race is not None
            and race.mode == "race"
            and race.ended is not None
            and not race.spectating
            and len(race.racers) > 1
        )

    def _rematch_to_watch(self) -> str | None:
        """Return the live rematch of the race this spectator watched end, if it started."""
        race = self.race
        if race is None or not race.spectating or race.ended is None:
            return None
        return next((g.game for g in self.client.games.values() if g.rematch_of == race.game), None)
