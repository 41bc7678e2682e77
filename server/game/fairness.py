"""No ghosting: what a spectator of a rated race may see of its racers' boards.

Every racer of a race plays the same deal, so a card one racer has uncovered may be a card
another still has face down. A racer's second identity, watching the race, would read
its own face-down cards off a rival's board. While a rated race runs, a spectator is
therefore shown each board with every card masked (``None``, as a face-down card is)
unless every racer still playing has that card face up: in a column, in a cell, or in a
finished run on a foundation. Scores, summaries and statuses are shown as they are.
Unrated races, and every race once it is over, are shown unmasked. Decision 14.

Pure: views in, views out. The node keeps per racer the cards their latest view shows
(``LiveGame.uncovered``, noted by ``RaceService.note_event``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from protocol.game import card_text
from protocol.game.card import SUITS
from protocol.wire.message import Options

__all__ = [
    "Uncovered",
    "Watched",
    "common_cards",
    "hides_cards",
    "masked_view",
    "note_event_uncovered",
    "note_uncovered",
    "spectator_cards",
    "spectator_view",
    "uncovered_cards",
]

Uncovered = tuple[int, frozenset[str]]
"""A racer's uncovered cards as of a version of the game: ``(version, cards)``."""

_RUN = {suit: frozenset(card_text(s * 13 + rank) for rank in range(13)) for s, suit in enumerate(SUITS)}
"""The 13 cards of each suit, by the suit's letter (a finished run on a foundation)."""


class Watched(Protocol):
    """What the mask is worked out from: a game as a node keeps it (a ``LiveGame``)."""

    @property
    def options(self) -> Options: ...
    @property
    def mode(self) -> str: ...
    @property
    def ended(self) -> bool: ...
    @property
    def status(self) -> Mapping[str, str]: ...
    @property
    def uncovered(self) -> Mapping[str, Uncovered]: ...


def uncovered_cards(view: Mapping[str, Any]) -> frozenset[str]:
    """Return every card a racer's view shows them: face up in a column or a cell, or in a
    finished run on a foundation. The undealt reserve is only a count, so none of it."""
    cards = {card for column in view.get("columns", ()) for card in column if card is not None}
    cards.update(card for card in view.get("cells", ()) if card is not None)
    for suit in view.get("foundations", ()):
        cards |= _RUN.get(suit, frozenset())
    return frozenset(cards)


def note_uncovered(
    known: dict[str, Uncovered],
    player: str,
    version: int,
    view: Mapping[str, Any],
    cards: frozenset[str] | None = None,
) -> None:
    """Keep ``view`` as what ``player`` has uncovered (``cards``, when the caller has worked
    them out already), unless a later version is known already (events may be read again
    from the log, older than what a node has seen)."""
    previous = known.get(player)
    if previous is None or previous[0] <= version:
        known[player] = (version, uncovered_cards(view) if cards is None else cards)


def note_event_uncovered(
    known: dict[str, Uncovered],
    racers: Iterable[str],
    version: int,
    event: Mapping[str, Any],
    cards: frozenset[str] | None = None,
) -> None:
    """Keep what a game's event shows of its racer's board (the opening: of every racer's);
    ``cards``, when given, are the cards the event's view shows."""
    view = event.get("view")
    if view is None:
        return
    if event["type"] == "race_started":
        for player in racers:
            note_uncovered(known, player, version, view)
    elif event["type"] in ("move", "status"):
        note_uncovered(known, event["player"], version, view, cards)


def common_cards(racers: Iterable[tuple[str, Uncovered | None]]) -> frozenset[str] | None:
    """Return the cards every racer still playing has uncovered, from each racer's status and
    uncovered cards (``None``: not known, taken as none at all).

    ``None`` when nobody is playing any more: a racer whose part is over (finished, stuck,
    resigned, left) can no longer use what a spectator sees, so there is nothing to hide.
    """
    common: frozenset[str] | None = None
    for status, uncovered in racers:
        if status != "playing":
            continue
        cards = uncovered[1] if uncovered is not None else frozenset()
        common = cards if common is None else common & cards
    return common


def spectator_cards(game: Watched) -> frozenset[str] | None:
    """Return the only cards a spectator of ``game`` may be shown now, or ``None`` for all.

    A rated race that is not over shows only the cards every racer still playing has
    uncovered; an unrated race (friend races, casual matches, the daily's one racer, whose
    spectators are let in only once their own attempt is over) shows every board as is.
    """
    if not hides_cards(game) or game.ended:
        return None
    return common_cards((status, game.uncovered.get(pid)) for pid, status in game.status.items())


def hides_cards(game: Watched) -> bool:
    """Tell whether ``game``'s spectators are shown only the cards every racer still playing
    has uncovered: a rated race's, and a challenge's, whose ghosts have uncovered cards the
    taker may not have yet (the taker's second identity, watching, must not read them)."""
    return game.options.rated or game.mode == "challenge"


def masked_view(view: dict[str, Any], shown: frozenset[str]) -> dict[str, Any]:
    """Return ``view`` with every card not in ``shown`` masked as face down (``None``), in
    its columns and cells; the reserve count and the foundations are kept.

    The view itself when nothing is to be masked (no copy on the common path late in a race).
    """
    columns = view.get("columns", ())
    cells = view.get("cells", ())
    hidden = any(card is not None and card not in shown for column in columns for card in column) or any(
        card is not None and card not in shown for card in cells
    )
    if not hidden:
        return view
    out = dict(view)
    out["columns"] = [[card if card in shown else None for card in column] for column in columns]
    out["cells"] = [card if card in shown else None for card in cells]
    return out


def spectator_view(game: Watched, view: dict[str, Any]) -> dict[str, Any]:
    """Return a racer's ``view`` as spectators of ``game`` may see it now."""
    shown = spectator_cards(game)
    return view if shown is None else masked_view(view, shown)
