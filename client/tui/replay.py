"""The full-screen replay of a finished game: one racer's positions, stepped through move by move.

As the browser's replay viewer does: ← and → step one move (Home and End jump to the deal
and the last position), Tab shows the next racer (each racer's positions are asked for once,
then kept), ``q`` quits. A timeline under the board marks where the player is, and, when the
solver's analysis found one, the move after which the win slipped away; on that move the
message line says so.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar

from rich.console import Console
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.css.query import NoMatches
from textual.widgets import Footer, Static

from protocol.game import MoveError, card_text, move_from_json, move_text
from protocol.wire.message import ReplayLog, ReplayPositionsInfo

from ..errors import ClientError
from .render import card_label, render_board

__all__ = ["ReplayApp", "move_words", "render_timeline"]

Fetch = Callable[[str], Awaitable[ReplayPositionsInfo]]


def move_words(data: dict[str, Any]) -> str:
    """Return a replayed move as shown: ``7♥ 7H:2-5``, ``deal`` or ``undo``."""
    if data.get("undo"):
        return "undo"
    try:
        move = move_from_json(data)
    except MoveError:
        return str(data)
    return "deal" if move.is_deal else f"{card_label(card_text(move.card))} {move_text(move)}"


def render_timeline(step: int, moves: int, slipped: int | None, width: int) -> Text:
    """Return the timeline: one cell per position (scaled down to ``width``), ``●`` the one
    shown, ``✗`` the position right after the move that let the win slip away."""
    cells = max(1, min(moves + 1, width))

    def cell(position: int) -> int:
        return position * (cells - 1) // max(1, moves)

    out = Text(no_wrap=True)
    marks = {cell(slipped + 1): ("✗", "bold red")} if slipped is not None else {}
    marks[cell(step)] = ("●", "bold cyan")
    for index in range(cells):
        char, style = marks.get(index, ("─", "grey50"))
        out.append(char, style=style)
    return out


class ReplayApp(App[int]):
    """Step through one finished game in the terminal."""

    TITLE = "Scorpion Race replay"
    AUTO_FOCUS = None
    CSS = """
    Screen { layout: vertical; }
    #status { height: 1; background: $primary-background; color: $text; padding: 0 1; }
    #board-scroll { height: 1fr; }
    #board { padding: 0 1; }
    #message { height: 1; padding: 0 1; color: $warning; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left", "step(-1)", "back"),
        Binding("right", "step(1)", "forward"),
        Binding("home", "jump(0)", "deal", show=False),
        Binding("end", "jump(-1)", "end", show=False),
        Binding("tab", "next_racer", "next racer"),
        Binding("q", "quit", "quit"),
    ]

    def __init__(self, log: ReplayLog, shown: ReplayPositionsInfo, fetch: Fetch) -> None:
        super().__init__()
        self.game_log = log
        self.positions: dict[str, ReplayPositionsInfo] = {shown.player: shown}
        self.player = shown.player
        self.fetch = fetch
        self.step = 0
        self.note = ""

    @property
    def shown(self) -> ReplayPositionsInfo | None:
        """Return the positions of the racer shown (``None`` while they are being asked for)."""
        return self.positions.get(self.player)

    def compose(self) -> ComposeResult:
        yield Static(id="status")
        with VerticalScroll(id="board-scroll"):
            yield Static(id="board")
        yield Static(id="message")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one("#board-scroll").can_focus = False
        self.redraw()

    def on_resize(self) -> None:
        self.call_after_refresh(self.redraw)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Offer Tab only when several raced."""
        return len(self.game_log.logs) > 1 if action == "next_racer" else True

    def action_step(self, by: int) -> None:
        shown = self.shown
        if shown is not None:
            self.step = min(max(self.step + by, 0), len(shown.moves))
        self.redraw()

    def action_jump(self, to: int) -> None:
        shown = self.shown
        if shown is not None:
            self.step = len(shown.moves) if to < 0 else to
        self.redraw()

    def action_next_racer(self) -> None:
        racers = [racer.player for racer in self.game_log.logs]
        if len(racers) < 2:
            return
        self.player = (
            racers[(racers.index(self.player) + 1) % len(racers)] if self.player in racers else racers[0]
        )
        self.step = 0
        if self.player not in self.positions:
            player = self.player

            async def ask() -> None:
                try:
                    self.positions[player] = await self.fetch(player)
                except (ClientError, TimeoutError) as exc:
                    self.note = f"error: {exc}"
                self.redraw()

            self.run_worker(ask(), group="requests")
        self.redraw()

    def status_text(self) -> Text:
        """Return the status line: game, variant, racer, and which move is shown."""
        out = Text(no_wrap=True, overflow="ellipsis")
        out.append(f"replay {self.game_log.game} ", style="bold")
        out.append(f"{self.game_log.variant} ", style="bold")
        shown = self.shown
        if shown is None:
            return out
        out.append(f"{shown.name}  ", style="bold cyan")
        out.append("deal" if self.step == 0 else f"move {self.step}/{len(shown.moves)}")
        return out

    def board_text(self) -> Text:
        """Return the position shown, the move that led to it, and the timeline."""
        shown = self.shown
        if shown is None:
            return Text("asking the server for this racer's moves…")
        width = max(40, self.size.width - 2)
        out = render_board(shown.views[self.step], width=width)
        out.append("\n\n")
        if self.step == 0:
            out.append("the deal", style="bold")
        else:
            out.append(f"move {self.step}: ", style="bold")
            out.append(move_words(shown.moves[self.step - 1]))
            seconds = shown.times[self.step - 1] / 1000  # from the start of the game
            out.append(f"  at {int(seconds // 60)}:{seconds % 60:04.1f}", style="dim")
        out.append("\n")
        out.append(render_timeline(self.step, len(shown.moves), shown.slipped, width))
        out.append("\n")
        if shown.verdict is not None:
            out.append(
                f"deal winnable: {dict(winnable='yes', unwinnable='no').get(shown.verdict, 'unknown')}"
            )
            if shown.slipped is not None:
                out.append(f"; the win slipped away at move {shown.slipped + 1} (✗)", style="red")
        return out

    def message_text(self) -> str:
        """Return the message line: the slipped move said in words when it is the one shown."""
        shown = self.shown
        if self.note:
            return self.note
        if shown is not None and shown.slipped is not None and self.step == shown.slipped + 1:
            return "✗ with this move the win slipped away: the deal could no longer be won"
        return "← → step · Home/End: the deal, the end"

    def redraw(self) -> None:
        """Draw the replay again (nothing before the widgets are mounted)."""
        with contextlib.suppress(NoMatches):
            self.query_one("#status", Static).update(self.status_text())
            self.query_one("#board", Static).update(self.board_text())
            self.query_one("#message", Static).update(Text(self.message_text()[:200]))

    def screen_text(self) -> str:
        """Return the whole screen as plain text (as a terminal of this size shows it)."""
        width, height = self.size
        console = Console(width=width, height=height, file=io.StringIO(), record=True, legacy_windows=False)
        console.print(self.screen._compositor.render_update(full=True))
        return console.export_text()
