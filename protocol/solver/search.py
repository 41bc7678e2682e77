"""The search behind :mod:`protocol.solver`: the position, its moves, and the pruned search.

This module and the three it is written in are the solver's hot loop:
:mod:`~protocol.solver.position` (the position, its canonical key, moves made and unmade),
:mod:`~protocol.solver.moves` (the legal moves and the forced links) and
:mod:`~protocol.solver.prune` (sleep sets and the tests of lost positions), which this
module's :func:`search` runs, and whose names it re-exports: import them from here. They
know nothing of the engine's classes: they take plain lists (the columns, face-down
counts, stock and cells exactly as :class:`~protocol.game.Board` keeps them) and answer
with plain tuples, so that they can be compiled to a C extension with mypyc when the
package is installed (``setup.py``); the same source runs as plain Python where no
compiler is at hand. The pruning rules are listed in :mod:`protocol.solver` and proved in
``docs/solver.md``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from .position import (
    ALL_RULES,
    CELL_BASE,
    EARLY,
    FOUNDATION,
    NATURAL,
    NO_CARD,
    RULE_NAMES,
    STOCK,
    Collected,
    Undo,
)
from .prune import Search

__all__ = [
    "ALL_RULES",
    "CELL_BASE",
    "EARLY",
    "FOUNDATION",
    "LOST",
    "MEMORY",
    "NATURAL",
    "NO_CARD",
    "RULE_NAMES",
    "STOCK",
    "UNDECIDED",
    "WON",
    "Collected",
    "Search",
    "Undo",
    "search",
]

WON: Final = 0
LOST: Final = 1
UNDECIDED: Final = 2
MEMORY: Final = 3
"""Undecided too: the table reached the search's memory budget (:func:`search`)."""

_ENTRY_BYTES: Final = 16
"""What :func:`search` counts for a position it keeps, beyond its key's bytes: the C
search's slots (8 bytes, the table at most half full) and an entry's length byte and
padding. It is an estimate (the sleep set is left out, the slots are counted per position
rather than per doubling), so under the same budget the two searches stop at nearby nodes,
not at the same one; the positions it keeps take far more memory here anyway (a dict of
byte strings)."""


class _Run:
    """The state of one search: the position, the path from the root, the table, a count."""

    def __init__(self, state: Search) -> None:
        self.state = state
        # Each entered key maps to the moves asleep there when it was explored (rule 6; bits
        # as ``Search.bit``).
        self.seen: dict[bytes, int] = {}
        self.bytes = 1 << 19  # the C search's first slot array
        self.path: list[Undo] = []
        self.nodes = 0
        wasp = state.wasp
        self.links = "links" in state.rules
        self.checks = "dead" in state.rules and not wasp
        self.table = state.dead_table() if self.checks else []

    def unwind(self, base: int) -> None:
        """Take back the moves pushed after the path was ``base`` long."""
        path = self.path
        state = self.state
        while len(path) > base:
            state.pop(path.pop())

    def enter(
        self, asleep: bool, seen_at: int, sleep: int, moved: bool
    ) -> tuple[list[tuple[int, int, int]], int] | None:
        """Arrive at a position: play forced links, then return its moves (None: a dead end).

        ``asleep`` drops the deal (rule 4, the deal's sleep set): the position was reached
        from one whose deal is explored anyway, by moves that commute with the deal.
        ``sleep`` holds the moves that need not be tried here (rule 6, bits as
        :meth:`Search.bit`); the answer carries it on, after the forced links (and, at a
        position entered before, only the moves asleep at both arrivals), for the
        children.
        ``seen_at`` is what rule 3 last ran at on the path (see ``search``); ``moved``
        tells that a move was pushed since the parent (False at the root).
        """
        state = self.state
        path = self.path
        base = len(path)
        again = 0
        # The parent passed rule 5, so from the cards the moves since may have given a new
        # wait (``Search.newly_waiting``); None: test every card (the root, after the deal).
        seeds: list[int] | None = None
        if self.checks and moved and path[-1][0] >= 0:
            seeds = []
            state.newly_waiting(path[-1], seeds)
        # Rule 2 before the deal: under when-stuck, outside Wasp (where it rests on rule 7).
        rule2 = self.links and (not state.stock or not (state.any_time or (state.wasp and not state.early)))
        # Rule 9: after the deal; before it under when-stuck only in the first look for a
        # win (``early``), where a line found is a win whatever was left out.
        rule9 = state.bottoms and (not state.stock or (state.early and not state.any_time))
        # Rule 10: before the deal under when-stuck (in the search proper: the first look
        # for a win forces every such link, rule 9).
        rule10 = state.reversible and bool(state.stock) and not state.early
        # Rule 11: the same.
        rule11 = state.anchored and bool(state.stock) and not state.early
        if rule2 or rule9 or rule10 or rule11:
            while state.found < 4:
                link = state.first_link(rule2, rule9, rule10, rule11)
                if link is None:
                    break
                if sleep:
                    # Wasp's rules 2 and 9 are not proved by swaps: its sleep set starts afresh
                    # (but in the first look for a win, where only a win found counts, it
                    # keeps the moves that commute with the link, as outside Wasp).
                    sleep = 0 if state.wasp and not state.early else state.commuting(sleep, link[0], link[2])
                undo = state.push(link[0], link[1], link[2])
                path.append(undo)
                self.nodes += 1
                if seeds is not None:
                    state.newly_waiting(undo, seeds)
                if undo[5] is not None:
                    sleep = 0  # it collected a run: rule 6 starts afresh
        moves: list[tuple[int, int, int]] | None = None
        if state.found < 4:
            if sleep:
                # Every move asleep (the deal never is): nothing to try, and the table is not
                # asked. A new position is not stored: a later arrival finds no entry and
                # tries the moves awake then, which are those it would try at an entry
                # holding this set. At a position stored before, the set kept there stays as
                # it is, where the revisit would keep its members asleep here: as every move
                # of the position is, the two differ only in moves it does not have, and no
                # arrival tries another move either way (docs/solver.md, "New positions with
                # every move asleep").
                moves = state.moves()
                if rule10:
                    moves = state.reversible_choice(moves)
                wasp = state.wasp
                if all(m[0] >= 0 and sleep >> (state.bit(m[0], m[2]) if wasp else m[0]) & 1 for m in moves):
                    self.unwind(base)
                    return None
            key = state.key()
            seen = self.seen
            stored = seen.get(key)
            if stored is not None:
                if not stored & ~sleep:
                    self.unwind(base)
                    return None
                # Explored before with a move asleep that is awake now (rule 6): try just the
                # moves asleep then and awake now; the moves asleep at both become this
                # arrival's set, for its children and for the table.
                again = stored & ~sleep
                sleep &= stored
                seen[key] = sleep
            else:
                seen[key] = sleep
                self.bytes += ((len(key) + 8) & ~7) + _ENTRY_BYTES
                # Rule 3 runs where a card was turned up or the reserve dealt since it last ran
                # on the path (new information; skipping it is always sound); rule 5 at every
                # new position, from the cards the moves since the parent concern.
                if self.checks and (
                    (state.turned + 4 * len(state.stock) != seen_at and state.dead(self.table))
                    or (state.tangled() if seeds is None else bool(seeds) and state.tangled_from(seeds))
                ):
                    seen[key] = 0
                    self.unwind(base)
                    return None
        if moves is None:
            moves = state.moves()
            if rule10:
                moves = state.reversible_choice(moves)
        if asleep and moves and moves[-1][0] < 0:
            moves.pop()
        if not state.wasp:
            # Outside Wasp a move's bit is its card (``Search.bit``), read here directly.
            if again:
                moves = [m for m in moves if m[0] >= 0 and again >> m[0] & 1]
            elif sleep:
                moves = [m for m in moves if m[0] < 0 or not sleep >> m[0] & 1]
        elif again:
            moves = [m for m in moves if m[0] >= 0 and again >> state.bit(m[0], m[2]) & 1]
        elif sleep:
            moves = [m for m in moves if m[0] < 0 or not sleep >> state.bit(m[0], m[2]) & 1]
        return moves, sleep

    def line(self) -> list[tuple[int, int, int]]:
        """The moves from the root to here."""
        return [(undo[0], undo[1], undo[2]) for undo in self.path]


def search(
    state: Search,
    limit: int,
    seconds: float | None,
    clock: Callable[[], float] | None,
    memory: int | None = None,
) -> tuple[int, list[tuple[int, int, int]], int, int]:
    """Run the depth-first search from ``state``'s position.

    Stops after ``limit`` nodes, once ``seconds`` have passed on ``clock`` (read every
    1,024 nodes; never without a clock), or, with ``MEMORY``, once the table takes more
    than ``memory`` bytes (counted as the C search's table would take them, roughly: see
    ``_ENTRY_BYTES``). Returns ``WON``, ``LOST``, ``UNDECIDED`` or ``MEMORY``, the winning
    line when won (moves as ``(card, source, target)``, the deal as ``(-1, -1, -1)``), the
    nodes used, and the positions the table holds at the end.
    """
    deadline = clock() + seconds if clock is not None and seconds is not None else None
    # Rule 6 in Wasp rests on rule 7 (its search is acyclic, and its moves are named by card
    # and kind), so like rule 7 it applies there only after the deal.
    commute = "commute" in state.rules and (not state.wasp or "settled" in state.rules)
    early = commute and state.wasp and not state.any_time and state.early
    run = _Run(state)
    path = run.path
    if state.found == 4:
        return WON, [], 0, 0
    entered = run.enter(False, -1, 0, False)
    if memory and run.bytes > memory:
        return MEMORY, [], run.nodes, len(run.seen)
    if state.found == 4:
        return WON, run.line(), run.nodes, len(run.seen)
    if not entered or not entered[0]:
        return LOST, [], run.nodes, len(run.seen)
    sleeps = "sleep" in state.rules and state.any_time
    # A frame: a position's moves, the path length there, whether its deal is covered, what
    # rule 3 was last checked at (cards turned up, reserve left), and the moves
    # asleep there (rule 6).
    frames: list[tuple[list[tuple[int, int, int]], int, bool, int, int]] = [
        (entered[0], len(path), sleeps, state.turned + 4 * len(state.stock), entered[1])
    ]
    cursor = [0]
    done = [0]
    while frames:
        moves, base, covered, checked, sleep = frames[-1]
        if len(path) > base:
            run.unwind(base)
        index = cursor[-1]
        if index == len(moves):
            frames.pop()
            cursor.pop()
            done.pop()
            continue
        cursor[-1] = index + 1
        move = moves[index]
        card = move[0]
        asleep = covered and bool(state.stock) and card >= 0 and move[1] > 2 and move[2] > 2
        # Rule 6: a move's child sleeps on the moves tried before it here, and on this
        # position's own sleepers, that commute with it.
        child = 0
        if commute and card >= 0 and (early or not state.stock):
            child = state.commuting(sleep | done[-1], card, move[2])
            done[-1] |= 1 << state.bit(card, move[2])
        path.append(state.push(card, move[1], move[2]))
        run.nodes += 1
        nodes = run.nodes
        if nodes > limit:
            return UNDECIDED, [], nodes, len(run.seen)
        if deadline is not None and not nodes & 1023 and clock is not None and clock() > deadline:
            return UNDECIDED, [], nodes, len(run.seen)
        if state.found == 4:
            return WON, run.line(), nodes, len(run.seen)
        entered = run.enter(asleep, checked, child, True)
        if memory and run.bytes > memory:
            return MEMORY, [], run.nodes, len(run.seen)
        if state.found == 4:
            return WON, run.line(), run.nodes, len(run.seen)
        if entered and entered[0]:
            mark = state.turned + 4 * len(state.stock)
            frames.append((entered[0], len(path), sleeps and bool(state.stock), mark, entered[1]))
            cursor.append(0)
            done.append(0)
    return LOST, [], run.nodes, len(run.seen)
