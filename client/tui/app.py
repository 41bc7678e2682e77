"""The full-screen terminal client, built on textual: its keys, the mouse, typed commands.

Keys: ↑/↓ choose a column, ←/→ a card in it, Enter (or Space) picks the card and then drops
it on the column under the cursor; 1–9 and 0 jump to a column, or drop the picked card on
it. Legal targets of the picked card are highlighted. ``u`` undo and ``h`` hint where the
race allows them (never in a rated race or the daily's ranked attempt), ``d`` deal the
reserve, ``R`` twice resigns, ``:`` types a move (``7H:2-5``, ``deal``), Esc cancels, ``r``
ready and ``s`` start in a room, Tab shows the next racer when watching (a
spectator's only key but ``q``, with no command line), ``q`` quits.
In a solo game ``n`` starts a New Game (a fresh deal), ``p`` a Replay of the same deal, and
``w`` asks the server's solver whether the position can still be won. ``P`` shows the
player's profile (ratings and recent games) whenever no game of theirs is going on.
A hint (or the solver's winning move) puts the cursor on the card to move and highlights
its target column. What is drawn, and how, is :class:`client.tui.screen.ScreenApp`'s.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar

from textual import events
from textual.binding import Binding, BindingType
from textual.widgets import Input

from protocol.game import CELL_BASE, Move, MoveError, card_text, move_from_json, move_from_text

from ..api import ScorpionClient
from .render import has_stock, move_words, spot_at
from .screen import PROFILE_NOTE, ScreenApp, Starter

__all__ = ["ScorpionApp"]

GAME_ACTIONS = frozenset({"select", "undo", "hint", "deal", "resign"})
"""Keys that play the player's own game (shown in the key bar while it goes on)."""


class ScorpionApp(ScreenApp):
    """Race, play or watch Scorpion in the terminal."""

    ENABLE_COMMAND_PALETTE = False  # its key would take room in the key bar; nothing is in it

    BINDINGS: ClassVar[list[BindingType]] = [
        # Leaving and typing a move come first: a key bar too long for the terminal is cut
        # on the right, and these two must stay at 80 columns.
        Binding("q", "quit", "quit"),
        Binding("colon", "type", "type move"),
        Binding("up", "column(-1)", "column", show=False),
        Binding("down", "column(1)", "column", show=False),
        Binding("left", "card(-1)", "card", show=False),
        Binding("right", "card(1)", "card", show=False),
        Binding("enter,space", "select", "pick"),
        *[Binding(str(n % 10), f"jump({(n - 1) % 10})", show=False) for n in range(1, 11)],
        Binding("u", "undo", "undo"),
        Binding("h", "hint", "hint"),
        Binding("d", "deal", "deal"),
        Binding("R", "resign", "resign"),
        Binding("n", "new_game", "new"),
        Binding("p", "replay", "replay"),
        Binding("a", "rematch", "race again"),
        Binding("m", "watch_rematch", "watch the rematch"),
        Binding("w", "winnable", "win?"),
        Binding("P", "profile", "profile"),
        Binding("escape", "cancel", "cancel", show=False),
        Binding("r", "ready", "ready", show=False),
        Binding("s", "start", "start", show=False),
        Binding("tab", "next_racer", "next racer"),
    ]

    def __init__(self, client: ScorpionClient, start: Starter | None = None) -> None:
        super().__init__(client, start)
        self.resign_window = 3.0
        self._resign_armed_until = 0.0
        self.quit_asked = False  # q was pressed once in a game of the player's: q again, R or Esc

    async def run_async(self, *args: Any, **kwargs: Any) -> int | None:
        """Run the app; once it closed, print the ids of the player's games that ended in it
        and how to replay or analyse them (the screen that showed them is gone)."""
        result = await super().run_async(*args, **kwargs)
        if farewell := self.farewell_text():
            print(farewell)
        return result

    # -- the cursor -----------------------------------------------------------------------

    def action_column(self, step: int) -> None:
        columns = self._columns()
        if not columns:
            return
        column = (self.cursor[0] + step) % len(columns)
        self.cursor = (column, len(columns[column]) - 1)
        self.redraw()

    def action_card(self, step: int) -> None:
        self.cursor = (self.cursor[0], self.cursor[1] + step)
        self.redraw()

    def action_jump(self, column: int) -> None:
        columns = self._columns()
        if column >= len(columns):
            return
        if self.picked is not None:
            self._drop(column)
            return
        cards = columns[column]
        # Land on the card of this column that can move, the exposed one otherwise.
        row = len(cards) - 1
        for candidate in range(len(cards)):
            if cards[candidate] is not None and self._targets((column, candidate)):
                row = candidate
                break
        self.cursor = (column, row)
        self.redraw()

    def action_select(self) -> None:
        race = self.race
        if race is None or race.spectating:
            return
        if self.picked is None:
            columns = self._columns()
            if not columns or not columns[self.cursor[0]]:
                return
            card = columns[self.cursor[0]][self.cursor[1]]
            if card is None:
                self.say("that card is face down")
                return
            if not self._targets(self.cursor):
                self.say(f"{card} has no legal move now")
                return
            self.picked = self.cursor
            targets = ", ".join(str(t + 1) for t in sorted(self._targets(self.cursor)))
            self.say(f"{card} picked: it can go to column {targets} (Esc to cancel)")
            self.redraw()
            return
        self._drop(self.cursor[0])

    def _drop(self, column: int) -> None:
        assert self.picked is not None
        targets = self._targets(self.picked)
        move = targets.get(column)
        if move is None:
            self.say(
                f"column {column + 1} is not a legal target; legal: "
                + ", ".join(str(t + 1) for t in sorted(targets))
            )
            return
        self.picked = None
        self.cursor = (column, self.cursor[1])
        self._play(move)

    def _play(self, move: Move) -> None:
        if not self.client.connected:
            # Sent later, it would land on a board the player no longer looks at: refuse it now.
            self.say(f"not connected: {move_words(move)} was not sent; play it again once reconnected")
            return

        async def play() -> None:
            await self.client.move(move)
            self.say(f"{move_words(move)} accepted")

        self._run(play)

    # -- the mouse ------------------------------------------------------------------------

    def on_click(self, event: events.Click) -> None:
        """Play with the mouse: click a card to pick it, then a column to drop it there.

        Clicking the picked card again puts it down; clicking another card picks that one;
        a double click moves a card that fits in one place only.
        """
        widget = event.widget
        race = self.race
        if widget is None or widget.id != "board" or race is None or race.spectating or not race.playing:
            return
        offset = event.get_content_offset(widget)
        view = self.shown_view()
        if offset is None or view is None:
            return
        spot = spot_at(view, offset.x, offset.y, max(40, self.size.width - 2))
        if spot is None:
            return
        column, row = spot
        cards = self._columns()[column]
        face_up = row is not None and cards[row] is not None
        if event.chain >= 2 and face_up and row is not None:
            targets = self._targets((column, row))
            if len(targets) == 1:
                self.picked = None
                self.cursor = (column, row)
                self._play(next(iter(targets.values())))
                return
        if self.picked is not None:
            if (column, row) == self.picked:
                self.action_cancel()
                return
            if column in self._targets(self.picked) or not face_up:
                self._drop(column)
                return
            self.picked = None  # another card: pick that one instead
        if row is None:
            self.action_jump(column)
            return
        self.cursor = (column, row)
        self.action_select()
        self.redraw()

    def on_key(self, event: events.Key) -> None:
        """Say why ``u`` or ``h`` does nothing where the race has undo or hints off (their keys
        are not in the key bar there, and a key that does nothing says nothing)."""
        if isinstance(self.focused, Input) or event.key not in ("u", "h"):
            return
        race = self.race
        if race is None or not race.playing:
            return
        what = "undo" if event.key == "u" else "hint"
        if not (race.options.undo if what == "undo" else race.options.hints):
            self.say(self.off_reason(what))

    def say(self, note: str) -> None:
        """Show a one-line message; one that replaces the question ``q`` asked withdraws it
        (the next ``q`` asks again)."""
        if self.quit_asked and not note.startswith("leave game"):
            self.quit_asked = False
        super().say(note)

    def off_reason(self, what: str) -> str:
        """Say why ``what`` (``undo`` or ``hint``) is off in the race on screen."""
        race = self.race
        said = "undo is off" if what == "undo" else "hints are off"
        if race is not None and race.options.rated:
            return f"{said} in a rated race: every racer plays without them"
        if race is not None and race.mode == "daily":
            return f"{said} in the daily's ranked attempt: every player plays it without them"
        return f"{said} in this race: its room was opened without them"

    def action_cancel(self) -> None:
        if self.quit_asked:
            self.quit_asked = False
            self.say("")
        self.picked = None
        self.hinted = None
        self._close_profile()
        self.set_focus(None)
        self.redraw()

    # -- commands -------------------------------------------------------------------------

    def action_undo(self) -> None:
        self._run(lambda: self._simple(self.client.undo, "undone"))

    def action_deal(self) -> None:
        self._play(move_from_text("deal"))

    def action_resign(self) -> None:
        """Resign on a second ``R`` within ``resign_window`` seconds: it cannot be undone.

        Asked whether to leave (``q`` once), one ``R`` resigns and leaves.
        """
        if self.quit_asked:
            self.quit_asked = False

            async def resign_and_leave() -> None:
                await self.client.resign()
                self._quit()

            self._run(resign_and_leave)
            return
        now = time.monotonic()
        if now > self._resign_armed_until:
            self._resign_armed_until = now + self.resign_window
            self.say("press R again to resign: it cannot be undone")
            return
        self._resign_armed_until = 0.0
        self._resign_now()

    def _resign_now(self) -> None:
        self._run(lambda: self._simple(self.client.resign, "you resigned"))

    async def _simple(self, request: Callable[[], Awaitable[Any]], done: str) -> None:
        await request()
        self.say(done)

    def action_hint(self) -> None:
        async def hint() -> None:
            answer = await self.client.hint()
            if not answer.moves:
                self.say("no move left")
                return
            best = move_from_json(answer.moves[0])
            self._point_at(answer.game, answer.v, best)
            self.say("hint: " + ", ".join(move_words(move_from_json(m)) for m in answer.moves[:5]))

        self._run(hint)

    def _point_at(self, game: str, v: int, move: Move) -> None:
        """Highlight ``move`` as the hint: the cursor on its card, its target column marked."""
        self.picked = None
        self.hinted = (game, v, move)
        if move.is_deal:
            return
        view = self.shown_view() or {}
        count = len(view.get("columns", []))
        column = move.source if move.source < CELL_BASE else count + move.source - CELL_BASE
        columns = self._columns()
        if column >= len(columns):
            return
        cards = columns[column]
        row = cards.index(card_text(move.card)) if card_text(move.card) in cards else 0
        self.cursor = (column, row)

    def action_winnable(self) -> None:
        race = self.race
        if race is None or race.mode != "solo" or not race.playing:
            return

        async def winnable() -> None:
            self.say("asking the solver…")
            info = await self.client.winnable()
            if info.verdict == "winnable" and info.move is not None:
                move = move_from_json(info.move)
                self._point_at(info.game, info.v, move)
                self.say(f"still winnable: yes; a winning move is {move_words(move)}")
            elif info.verdict == "winnable":
                self.say("still winnable: yes")
            elif info.verdict == "unwinnable" and info.deal == "unwinnable":
                self.say("still winnable: no, this deal cannot be won (it never could)")
            elif info.verdict == "unwinnable" and info.deal == "winnable":
                self.say("still winnable: no, this game can no longer be won")
            elif info.verdict == "unwinnable":
                self.say("still winnable: no, this position cannot be won")
            else:
                self.say("still winnable: unknown (the solver gave up)")

        self._run(winnable)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Show the solo keys in solo games only, and undo and hint only where the race allows them.

        A rated race and the daily's ranked attempt have neither (decision 13): their keys are
        not in the key bar at all, as the browser shows no such buttons. A spectator's key bar
        holds only what a spectator can do: the next racer, and quit.
        """
        race = self.race
        watching = race is not None and race.spectating
        if action == "watch_rematch":
            return self._rematch_to_watch() is not None
        if action == "profile":
            return self._profile_allowed()
        if action == "next_racer" or watching:
            return watching and action in ("next_racer", "quit")
        if action in ("new_game", "replay"):
            return race is not None and race.mode == "solo"
        if action == "rematch":
            return self._can_rematch()
        if action == "winnable":
            if race is None or race.mode != "solo" or race.ended is not None:
                return False
            return True if race.playing else None
        if action in GAME_ACTIONS and (race is None or not race.playing):
            return False  # no game of the player's going on: nothing to play
        if action == "deal" and race is not None and not has_stock({"variant": race.variant}):
            return False  # Three Blind Mice has no reserve to deal
        if action in ("undo", "hint") and race is not None:
            return race.options.undo if action == "undo" else race.options.hints
        return True

    def action_profile(self) -> None:
        """Show this player's profile in place of the main area, or close it (``P`` again, Esc)."""
        if self.profile is not None:
            self._close_profile()
            self.redraw()
            return
        if not self._profile_allowed():
            return

        async def show() -> None:
            self.profile = await self.client.profile()
            self.say(PROFILE_NOTE)

        self._run(show)

    def action_watch_rematch(self) -> None:
        game = self._rematch_to_watch()
        if game is None:
            return

        async def watch() -> None:
            await self.client.watch(game=game)
            await self.client.games_list(subscribe=False)
            self.watched = 0
            self.say(f"watching the rematch {game}")

        self._run(watch)

    def action_rematch(self) -> None:
        race = self.race
        if race is None or not self._can_rematch():
            return
        game = race.game

        async def rematch() -> None:
            room = await self.client.rematch(game)
            self._fresh_board()
            others = [p.name for p in room.players if p.player != self.client.player]
            self.say(
                f"rematch room {room.room}"
                + (f" with {', '.join(others)}" if others else ": the others are told")
            )

        self._run(rematch)

    def action_new_game(self) -> None:
        race = self.race
        if race is None or race.mode != "solo":
            return
        variant, rule = race.variant, race.rule

        async def new_game() -> None:
            started = await self.client.solo_new(variant, rule)
            self._fresh_board()
            self.say(f"new game {started.game}")

        self._run(new_game)

    def action_replay(self) -> None:
        race = self.race
        if race is None or race.mode != "solo":
            return
        game = race.game

        async def replay() -> None:
            started = await self.client.solo_replay(game)
            self._fresh_board()
            self.say(f"replaying the deal of {game} as {started.game}")

        self._run(replay)

    def _fresh_board(self) -> None:
        self.picked = None
        self.hinted = None
        self.cursor = (0, 0)

    def action_ready(self) -> None:
        room = self.client.room
        if room is None:
            return
        mine = next((p for p in room.players if p.player == self.client.player), None)
        ready = not (mine.ready if mine else False)
        self._run(lambda: self.client.ready(ready))

    def action_start(self) -> None:
        if self.client.room is not None:
            self._run(self.client.room_start)

    def action_next_racer(self) -> None:
        self.watched += 1
        self.redraw()

    def action_type(self) -> None:
        self.query_one("#command", Input).focus()

    async def action_quit(self) -> None:
        self._ask_quit()

    def _ask_quit(self) -> None:
        """Quit, asking first while a game of the player's goes on: leaving it does not end it.

        A solo game left stays saved (``scorpion play --resume``); a race goes on without the
        player, who is out of it once the server's grace period is over, and until then
        cannot open a room or join a queue. ``q`` again leaves, ``R`` resigns and leaves,
        Esc stays.
        """
        race = self.race
        if self.quit_asked or self.quitting or race is None or race.spectating or not race.playing:
            self._quit()
            return
        self.quit_asked = True
        if race.mode == "solo":
            self.say(f"leave game {race.game}? q: leave it saved · R: resign · Esc: stay")
        else:
            self.say(f"leave game {race.game}? q: leave (it goes on) · R: resign · Esc: stay")

    def _quit(self) -> None:
        """Close the app; keys already typed after this start no request."""
        self.quitting = True
        self.exit(0)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        event.input.value = ""
        self.set_focus(None)
        self.command(text)

    def command(self, text: str) -> None:
        """Run one typed command: a move in notation, or a word."""
        word = text.lower()
        actions: dict[str, Callable[[], Any]] = {
            "undo": self.action_undo,
            "hint": self.action_hint,
            "resign": self._resign_now,  # typed in full: no second confirmation
            "ready": self.action_ready,
            "start": self.action_start,
        }
        if not text:
            return
        if word in ("quit", "q"):
            self._ask_quit()
            return
        if word in ("undo", "hint") and self.race is not None and not self.check_action(word, ()):
            self.say(self.off_reason(word))
            return
        if word in actions:
            actions[word]()
            return
        try:
            move = move_from_text(text)
        except MoveError as exc:
            self.say(str(exc))
            return
        self._play(move)
