"""Pure rendering of boards, racers and rooms as rich ``Text`` (no textual, no I/O).

Columns are drawn as rows, left to right from the first card dealt to the exposed one,
so a whole Scorpion tableau fits an 80×24 terminal however long the columns grow.
Suits use a four-colour deck (spades white, hearts red, diamonds blue, clubs green) since
Scorpion is built down in suit; face-down cards are drawn as grey backs, unlike any suit.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from rich.text import Text

from protocol.game import Move, VariantError, card_text, get_variant, move_text
from protocol.wire.message import Analysis, Profile, RaceEnded, RatingChange, RoomState

from ..state import RaceState

__all__ = [
    "BOARD_INDENT",
    "SUIT_STYLE",
    "SUIT_SYMBOL",
    "card_label",
    "card_names",
    "card_step",
    "has_stock",
    "move_words",
    "progress_bar",
    "progress_fraction",
    "rating_label",
    "render_analysis",
    "render_board",
    "render_profile",
    "render_racer",
    "render_room",
    "render_standings",
    "render_status",
    "spot_at",
]

SUIT_SYMBOL = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}
SUIT_STYLE = {"S": "bold bright_white", "H": "bold red", "D": "bold dodger_blue1", "C": "bold green"}
"""A four-colour deck. Diamonds are a plain blue (``dodger_blue1``, #0087ff), never the
terminal's "bright blue", which many colour schemes draw purple."""
BACK = "░░"
BACK_STYLE = "grey62 on grey23"
"""Face-down cards: grey on dark grey, a colour no suit has."""


def card_label(card: str) -> str:
    """Return a card as shown: rank then suit symbol (``T♥``)."""
    return card[0] + SUIT_SYMBOL.get(card[1].upper(), card[1])


_CARD = re.compile(r"(?<![A-Za-z0-9])([A2-9TJQK])([SHDC])(?![A-Za-z0-9])")


def card_names(text: str) -> str:
    """Return ``text`` with every card written as the board draws it (``3S`` → ``3♠``)."""
    return _CARD.sub(lambda found: found[1] + SUIT_SYMBOL[found[2]], text)


def move_words(move: Move) -> str:
    """Return a move as the board names its card: ``7♥ 2→5`` for ``7H:2-5`` (``deal the reserve``)."""
    if move.is_deal:
        return "deal the reserve"
    _, _, where = move_text(move).partition(":")
    return f"{card_label(card_text(move.card))} {where.replace('-', '→')}"


def has_stock(view: Mapping[str, Any]) -> bool:
    """Tell whether the view's variant deals a reserve stock (Three Blind Mice has cells)."""
    try:
        return get_variant(str(view.get("variant", ""))).stock > 0
    except VariantError:  # not one this client knows: go by what the view says
        return bool(view.get("reserve_left"))


BOARD_INDENT = 4
"""Cells before a line's first card: the column number, the target arrow and a space."""


def card_step(view: Mapping[str, Any], width: int = 80) -> int:
    """Return the cells from one card to the next on a board line: 3, or 2 when lines are long."""
    longest = max((len(col) for col in view.get("columns", [])), default=0)
    return 3 if BOARD_INDENT + 3 * longest <= width else 2


def spot_at(view: Mapping[str, Any], x: int, y: int, width: int = 80) -> tuple[int, int | None] | None:
    """Return what lies at cell ``x`` of line ``y`` of :func:`render_board`'s drawing.

    ``(column, row)`` on a card, ``(column, None)`` elsewhere on a column's line (its
    number, or past its last card); reserve cells are the columns after the tableau's, as
    in :func:`render_board`. ``None`` below them.
    """
    columns = [list(col) for col in view.get("columns", [])]
    cells = list(view.get("cells") or [])
    if y < 0 or y >= len(columns) + len(cells) or x < 0:
        return None
    if y >= len(columns):  # a reserve cell's line: "R1  " then its card
        return (y, 0) if BOARD_INDENT <= x < BOARD_INDENT + 2 and cells[y - len(columns)] else (y, None)
    row = (x - BOARD_INDENT) // card_step(view, width)  # the space after a card counts as the card
    return (y, row) if x >= BOARD_INDENT and row < len(columns[y]) else (y, None)


def render_board(
    view: Mapping[str, Any],
    *,
    width: int = 80,
    cursor: tuple[int, int] | None = None,
    picked: tuple[int, int] | None = None,
    targets: Sequence[int] = (),
) -> Text:
    """Return the tableau: one line per column (``cursor``/``picked`` are column, row from 0).

    Reserve cells (Three Blind Mice) are the rows after the columns, as pseudo-columns
    ``len(columns) + i``. ``targets`` lists the columns a picked card may go to.
    """
    columns: list[list[str | None]] = [list(col) for col in view.get("columns", [])]
    cells: list[str | None] = list(view.get("cells") or [])
    step = card_step(view, width)
    out = Text()
    for index, col in enumerate(columns):
        is_target = index in targets
        label = f"{index + 1:>2}"
        out.append(label, style="bold black on green" if is_target else "bold")
        out.append("→" if is_target else " ", style="bold green")
        out.append(" ")
        if not col:
            out.append("··", style="dim")
        for row, card in enumerate(col):
            style = BACK_STYLE if card is None else SUIT_STYLE.get(card[1].upper(), "")
            shown = BACK if card is None else card_label(card)
            if picked == (index, row) or (picked is not None and picked[0] == index and row > picked[1]):
                style += " reverse"
            if cursor == (index, row):
                style += " underline bold on grey37"
            out.append(shown, style=style)
            if step == 3:
                out.append(" ")
        out.append("\n")
    for cell_index, card in enumerate(cells):
        index = len(columns) + cell_index
        out.append(f"R{cell_index + 1} ", style="bold")
        out.append(" ")
        if card is None:
            out.append("--", style="dim")
        else:
            style = SUIT_STYLE.get(card[1].upper(), "")
            if picked == (index, 0):
                style += " reverse"
            if cursor == (index, 0):
                style += " underline bold on grey37"
            out.append(card_label(card), style=style)
        out.append("\n")
    reserve = int(view.get("reserve_left", 0))
    foundations = list(view.get("foundations") or [])
    if has_stock(view):
        out.append("reserve ", style="dim")
        out.append(f"{reserve} cards" if reserve else "dealt", style="bold" if reserve else "dim")
        out.append("   ")
    out.append("runs ", style="dim")
    if foundations:
        for suit in foundations:
            out.append(f"K{SUIT_SYMBOL.get(suit, suit)}", style=SUIT_STYLE.get(suit, ""))
            out.append(" ")
    else:
        out.append("none", style="dim")
    return out


PROGRESS_MOVES = 56
"""Moves over which the move count fills its part of a progress bar: each of them moves a
20-cell bar by one eighth of a cell."""


def progress_fraction(summary: Mapping[str, Any] | None, variant: str) -> float:
    """Return how far a racer got, 0 to 1: half finished runs, a little cards turned face up,
    and the rest moves played (up to :data:`PROGRESS_MOVES`), so that the bar moves with every
    move early on, not only when a run is finished; a won game is full."""
    if not summary:
        return 0.0
    rules = get_variant(variant)
    face_down = max(1, rules.face_down_rows * len(rules.face_down_columns))
    if summary.get("state") == "won":
        return 1.0
    revealed = max(0, face_down - int(summary.get("face_down_left", face_down)))
    moves = min(PROGRESS_MOVES, max(0, int(summary.get("moves", 0))))
    runs = int(summary.get("runs", 0)) / 4
    return min(1.0, 0.5 * runs + 0.15 * revealed / face_down + 0.35 * moves / PROGRESS_MOVES)


EIGHTHS = " ▏▎▍▌▋▊▉"
"""A bar cell filled to 0 to 7 eighths."""


def progress_bar(fraction: float, cells: int) -> tuple[str, str]:
    """Return a bar of ``cells`` as its filled part (eighths of a cell) and its empty part."""
    eighths = round(max(0.0, min(1.0, fraction)) * cells * 8)
    full, part = divmod(eighths, 8)
    filled = "█" * full + (EIGHTHS[part] if part else "")
    return filled, "░" * (cells - len(filled))


def render_racer(
    name: str,
    summary: Mapping[str, Any] | None,
    status: str,
    variant: str,
    *,
    me: bool = False,
    bar: int = 20,
    width: int | None = None,
) -> Text:
    """Return one racer's line: a progress bar, score, runs, moves and status.

    Given a ``width``, the line fits it: the bar shrinks first (to 4 cells), then the name
    and the figures take a shorter form, so that a racer stays on one line.
    """
    fraction = progress_fraction(summary, variant)
    summary = summary or {}
    score, runs, moves = (int(summary.get(key, 0)) for key in ("score", "runs", "moves"))
    name_cells, tail = 12, f" {score:>5} pts {runs} runs {moves:>3} mv  {status}"
    if width is not None and 2 + name_cells + 1 + 4 + len(tail) > width:
        name_cells, tail = 8, f" {score:>4}p {runs}r {moves:>3}mv {status}"
    if width is not None:
        bar = max(4, min(bar, width - (2 + name_cells + 1) - len(tail)))
    filled, empty = progress_bar(fraction, bar)
    out = Text(no_wrap=True, overflow="ellipsis")
    out.append(("▶ " if me else "  ") + f"{name[:name_cells]:<{name_cells}} ", style="bold" if me else "")
    out.append(filled, style="green" if status != "resigned" else "red")
    out.append(empty, style="grey37")
    out.append(tail)
    if width is not None:
        out.truncate(width, overflow="ellipsis")
    return out


def render_status(race: RaceState, *, compact: bool, watched: int = 0, elapsed: int | None = None) -> Text:
    """Return the status line of a race: the full form, or with ``compact`` a shorter one
    (the status first). ``watched`` picks the racer a spectator sees; ``elapsed`` is the
    clock to show in milliseconds (none once the race is over)."""
    out = Text(no_wrap=True, overflow="ellipsis")
    gap = " " if compact else "  "
    summary = race.summary or {}
    status = (
        None
        if race.spectating
        else (race.status, "bold green" if race.status == "playing" else "bold yellow")
    )
    if compact and status is not None:
        out.append(status[0] + " ", style=status[1])
    if race.spectating:
        racers = [r for r in race.racers.values() if r.view is not None]
        shown = racers[watched % len(racers)] if racers else None
        summary = (shown.summary or {}) if shown else {}
        out.append(f"watching {shown.name if shown else '?'} ", style="bold")
    out.append(f"{race.variant} ", style="bold")
    out.append(f"{race.game} " if compact else f"game {race.game}  ", style="cyan")
    if race.options.rated:
        out.append("rated ", style="bold cyan")
    if race.mode == "daily":
        out.append(f"daily {race.daily} ", style="bold magenta")
    elif race.mode == "practice":
        out.append(f"practice {race.daily} ", style="magenta")
    elif race.mode == "solo":
        out.append("solo ", style="magenta")
    score, runs, moves = (int(summary.get(key, 0)) for key in ("score", "runs", "moves"))
    if compact:
        out.append(f"{score}p {runs}/4 {moves}mv ")
    else:
        out.append(f"score {score}  runs {runs}/4  moves {moves}  ")
    if elapsed is not None:
        seconds = elapsed // 1000
        out.append(f"⏱ {seconds // 60:02}:{seconds % 60:02}{gap}")
    if race.options.spectators:
        out.append(f"👁 {race.spectators}{gap}", style="dim")
    if not compact and status is not None:
        out.append(status[0], style=status[1])
    out.rstrip()
    return out


def render_room(room: RoomState, me: str | None, link: str | None = None) -> Text:
    """Return a room's lobby: code, link, players and their ready flags."""
    out = Text()
    out.append("Room ", style="bold")
    out.append(room.room, style="bold reverse")
    out.append(f"  {room.variant}, up to {room.max_players} players\n")
    if link:
        out.append(f"share: {link}\n", style="cyan")
    options = room.options
    out.append(
        f"undo {'on' if options.undo else 'off'} · hints {'on' if options.hints else 'off'} · "
        f"reserve {options.reserve_rule} · spectators {'on' if options.spectators else 'off'}"
        + (" · rated" if options.rated else "")
        + "\n",
        style="dim",
    )
    for player in room.players:
        flag = "host " if player.player == room.host else ("ready" if player.ready else "     ")
        out.append(f"  [{flag}] {player.name}{' (you)' if player.player == me else ''}\n")
    if me == room.host:
        out.append("\ns: start the race when everyone is ready", style="dim")
    else:
        out.append("\nr: ready / not ready", style="dim")
    return out


def rating_label(rating: int, provisional: bool) -> str:
    """Return a rating as shown: ``1523``, or ``1523?`` while it is provisional."""
    return f"{rating}?" if provisional else str(rating)


def render_standings(
    ended: RaceEnded,
    mode: str = "race",
    *,
    rated: bool = False,
    changes: RatingChange | None = None,
    awaited: bool = True,
) -> Text:
    """Return the final standings of a race (or the result of a one-racer game) and its deal.

    A rated race shows each racer's rating before and after it and the change once
    ``changes`` has come (``rating 1500 → 1662? +162``; ``?`` marks a provisional rating),
    and ``rating …`` until then while it is ``awaited`` (a spectator is sent none).
    """
    title = "Rated race over\n" if rated else "Race over\n" if mode == "race" else "Game over\n"
    out = Text(title, style="bold")
    by_player = {c.player: c for c in changes.changes} if changes is not None else {}
    for standing in ended.standings:
        minutes, seconds = divmod(standing.elapsed, 60)
        out.append(
            f" {standing.rank}. {standing.name[:14]:<14} {standing.score:>5} pts {standing.runs} runs "
            f"{minutes:02}:{seconds:02} {standing.status}"
        )
        change = by_player.get(standing.player)
        if change is not None:
            delta = change.after - change.before
            out.append(
                f"  rating {change.before} → {rating_label(change.after, change.provisional)} {delta:+d}",
                style="green" if delta > 0 else "red" if delta else "",
            )
        elif rated and awaited:
            out.append("  rating …", style="dim")
        out.append("\n")
    if ended.number is not None:
        out.append(f"deal {ended.number}\n", style="dim")
    elif mode in ("daily", "practice"):
        out.append("the daily deal is revealed when the day is over\n", style="dim")
    return out


def render_profile(profile: Profile, *, games: int = 8) -> Text:
    """Return a player's profile: ratings per variant, then the newest ``games`` finished games."""
    out = Text()
    out.append(profile.name, style="bold")
    out.append(f"  {profile.player}" + ("  (you)" if profile.me else "") + "\n", style="dim")
    out.append("Ratings", style="bold")
    out.append("  (? provisional)\n", style="dim")
    if not profile.ratings:
        out.append("  no rated race yet: a quick match is rated\n", style="dim")
    for rating in profile.ratings:
        rank = f"#{rating.rank}" if rating.rank else "-"
        out.append(
            f"  {rating.variant:<17} {rating_label(rating.rating, rating.provisional):>6} "
            f"±{rating.deviation:<4} {rating.games:>3} rated  {rank:<6} best {rating.best or '-'}\n"
        )
    played = {row.variant: row for row in profile.stats}
    if played:
        out.append("Played  ", style="bold")
        out.append(" · ".join(f"{v} {row.won}/{row.started} won" for v, row in played.items()) + "\n")
    out.append("Recent games\n", style="bold")
    if not profile.recent:
        out.append("  none yet\n", style="dim")
    for game in profile.recent[:games]:
        place = f"{game.rank}/{game.racers}" if game.racers > 1 else "solo"
        out.append(f"  {game.game:<10} {game.variant:<9.9} {game.mode:<8} {place:<4} {game.score:>5} ")
        if game.change is not None:
            out.append(
                f"{game.change:+d}", style="green" if game.change > 0 else "red" if game.change else ""
            )
        elif game.rated:
            out.append("rated", style="dim")
        out.append("\n")
    out.append("scorpion replay GAME prints a game · P or Esc: back", style="dim")
    return out


VERDICT_WORD = {"winnable": "yes", "unwinnable": "no", "unknown": "unknown"}


def render_analysis(analysis: Analysis, slipped: Move | None = None, *, decided: str | None = "") -> Text:
    """Return the solver's verdict on a finished game.

    ``Deal winnable: yes; your win slipped away at move 13 (card 7♥, 7H:2-5)``, or ``…; you
    won``; then the length of the winning line. ``slipped`` is the player's move at index
    ``analysis.slipped`` when known (the move number alone is shown otherwise). Where the
    server's solver gave up, ``decided`` is the verdict this client's solver reached on the
    deal (``None`` while it works, ``""`` when it does not try).
    """
    out = Text()
    verdict = analysis.verdict
    if verdict == "unknown" and decided:
        verdict = decided
    word = VERDICT_WORD.get(verdict, verdict)
    out.append("Deal winnable: ", style="bold")
    out.append(word, style={"yes": "bold green", "no": "bold red"}.get(word, "bold yellow"))
    if analysis.verdict == "unknown" and decided is None:
        out.append(" (solving it here…)", style="dim")
    elif analysis.verdict == "unknown" and decided and decided != "unknown":
        out.append(" (solved here)", style="dim")
    if analysis.won:
        out.append("; you won", style="bold green")
    elif analysis.slipped is not None:
        out.append(f"; your win slipped away at move {analysis.slipped + 1}")
        if slipped is not None and not slipped.is_deal:
            out.append(f" (card {card_label(card_text(slipped.card))}, {move_text(slipped)})")
        elif slipped is not None:
            out.append(" (dealing the reserve)")
    elif analysis.verdict == "winnable":
        out.append("; your game was not proved lost when it ended", style="dim")
    out.append("\n")
    if analysis.line:
        count = len(analysis.line)
        out.append(f"a winning line has {count} moves: scorpion analyze {analysis.game}\n", style="dim")
    return out
