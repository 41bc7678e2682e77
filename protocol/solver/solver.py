"""A full-information solver for Scorpion and its variants.

The solver sees every card, face-down ones and the undealt reserve included, and answers
whether a position can still be won: ``winnable`` with a complete winning move list,
``unwinnable`` when the whole (reduced) search space has been exhausted, or ``unknown``
when the budget ran out first. It is pure: no I/O, no randomness, and it reads a clock
only when the caller hands it one (``Budget.clock``).

The search is a depth-first search over positions with a transposition table keyed on a
canonical position key (interchangeable columns in a canonical order). Every pruning rule
is proved sound in ``docs/solver.md`` (and rules 7 and 8 are also checked there on an
exact model of small Wasp games):

1. *Symmetry.* Columns that the rules treat alike are interchangeable: all of them once
   the reserve is dealt (and always in Three Blind Mice), columns 4 and up before. The key
   orders interchangeable columns by their bottom cards (and sorts the open reserve cells),
   and a group that may enter an empty column is sent to one representative empty column
   of each class only.
2. *Forced links.* In every variant, once the reserve is dealt (or, outside Wasp, at any
   time under the when-stuck rule), moving ``t-1`` onto ``t`` when ``t`` tops a rooted run (a
   face-up King-down run of one suit from row 0), or when ``t-1`` carries exactly the
   rest of its suit down to the Ace, never turns a winnable position into an unwinnable
   one, so the search plays it without branching.
3. *Buried successor.* In Scorpion, Scorpion II and Three Blind Mice, a non-King card
   at or below the lowest face-up row whose successor lies beneath it in its column can
   never join it: lost.
4. *Sleeping deal.* Under the any-time rule, the deal is not tried again after moves that
   stay clear of columns 1-3: the result is reachable from a deal already explored.
5. *Tangled obligations.* In those three variants every non-King card not on its
   successor must lead exactly once more, and a King that has to leave the card under it
   does so exactly once (by leading into an empty column, or collected with its run where
   it lies); if the "must happen first" relations between these events form a cycle, the
   position is lost.
6. *Commuting moves.* After the deal, a move's child does
   not try the moves tried before it (or asleep where it was made) that commute with it:
   the other order reaches the same position (sleep sets; in Wasp a move is named by its
   card and whether it is a link or a move into an empty column). The table keeps the
   moves asleep where a position was explored; reached again with some of them awake,
   the position tries just those, and keeps as asleep only the moves asleep both times.
7. *Settled cards (Wasp).* After the deal, a card (not a King) lying on its face-up
   successor is never moved into an empty column: some win never does so. (Not before
   the deal: there such a move may be what makes the position stuck, so that the reserve
   is dealt under the when-stuck rule, and it decides where the reserve lands. There
   :func:`solve` only looks for a win with it first, for most of the budget: a line
   found is a win whatever the search left out.)
8. *Direct links (Wasp).* After the deal, a card whose successor tops another column is
   never moved into an empty column either: some win has neither kind of move.
   With rule 6, two moves then commute only if neither changes for the other whether its
   card's successor tops another column.
9. *Bottom links (Wasp).* After the deal, a face-up card at row 0 whose successor tops
   another column is linked onto it without branching (with the whole column): that
   keeps a winnable position winnable.
10. *Reversible bottom links (Wasp, when-stuck).* Before the deal, the same link is played
    without branching where a card of its suit is in the reserve and no card of the
    successor's column can be linked onto the top of the card's own column: moving the
    column back into the column it empties undoes it, and every stuck position (where the
    deal comes) stays reachable. Where such a link waits only for that other link (its
    crossing), the search tries just the two.
11. *Anchored links (Wasp, when-stuck).* Before the deal, a face-up card at any row is
    linked onto its successor without branching where nothing can ever carry the
    successor into the card's group: the successor and the cards above it in its suit,
    up to a King or to a card whose successor is in the reserve, each lie face down, on
    their successor, or first in the face-up part of their column; or the card's group
    reads down in its suit to the Ace or to a card whose predecessor is in the reserve.
    Every path to a stuck position plays that link, and it commutes with the others.

The search itself is defined by :mod:`protocol.solver.search`, which keeps the position in plain
lists that mirror :class:`~protocol.game.Board` exactly (same column indices, same
face-down counts), so a line found there replays move by move with ``Board.play``. Where
the package was installed with a C compiler at hand, :func:`solve` runs the same search
written in C (``protocol/solver/_fastsearch.c``: the same nodes, verdicts and lines, about ten
times faster than ``protocol.solver.search`` compiled with mypyc); elsewhere it runs
``protocol.solver.search`` itself.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from ..game.board import Board
from ..game.move import DEAL, Move
from ..game.variant import ReserveRule, Variant, get_variant
from .search import ALL_RULES, EARLY, LOST, MEMORY, NATURAL, RULE_NAMES, UNDECIDED, WON, Search, search

try:
    from . import _fastsearch
except ImportError:  # installed without a C compiler: protocol.solver.search runs the search
    _fastsearch = None  # type: ignore[assignment]

NATIVE = _fastsearch is not None
"""Whether the search in C is installed (see :func:`run_search`): budgets in nodes cost
about a tenth of the time they cost ``protocol.solver.search`` compiled with mypyc."""

_RULE_BITS = {name: 1 << index for index, name in enumerate(RULE_NAMES)}
"""The rule names as ``_fastsearch`` takes them (its ``RULE_*`` bits)."""

__all__ = [
    "NATIVE",
    "Budget",
    "Solution",
    "Verdict",
    "canonical_key",
    "first_losing_move",
    "is_winnable",
    "percentile",
    "pick_winnable",
    "run_search",
    "solve",
    "solve_deal",
    "wilson_interval",
    "winning_move",
]


class Verdict(StrEnum):
    """What the solver could establish about a position."""

    WINNABLE = "winnable"
    UNWINNABLE = "unwinnable"
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class Budget:
    """How much search a call may spend.

    ``nodes`` bounds the positions generated (every move pushed counts one). ``seconds``
    bounds the time, measured with ``clock`` only: without a clock the solver reads no
    time at all and only the node budget applies. ``memory`` bounds the bytes the
    search's table of positions may take (its slots and the entries stored, about 90
    bytes a position); without it only the node budget bounds them. Each search a call
    runs has its own table, freed when it ends, so the bound holds for each.
    """

    nodes: int = 1_000_000
    seconds: float | None = None
    clock: Callable[[], float] | None = None
    memory: int | None = None


@dataclass(frozen=True, slots=True)
class Solution:
    """The outcome of one search."""

    verdict: Verdict
    moves: tuple[Move, ...]
    """A complete winning line when the verdict is ``winnable``, else empty."""
    nodes: int
    seconds: float | None
    """Time spent, per the budget's clock; ``None`` when no clock was given."""
    memory_full: bool = False
    """The verdict is ``unknown`` because the table reached the budget's memory bound."""


def _state(board: Board, prune: bool = True, rules: frozenset[str] | None = None) -> Search:
    """Return the search's position for ``board``: every rule when ``prune``, none without,
    or just ``rules`` when given."""
    return Search(
        board.columns,
        board.down,
        board.stock,
        board.cells,
        len(board.foundations),
        board.variant.any_card_fills_empty,
        board.rule is ReserveRule.ANY_TIME,
        rules if rules is not None else (ALL_RULES if prune else frozenset()),
    )


def run_search(
    state: Search,
    limit: int,
    seconds: float | None = None,
    clock: Callable[[], float] | None = None,
    memory: int | None = None,
) -> tuple[int, list[tuple[int, int, int]], int, int]:
    """Run :func:`protocol.solver.search.search` on ``state``'s position: in C where it was built.

    Both give the same outcome, line, node count and number of positions kept in the table
    (``tests/protocol/solver/test_fastsearch.py``), but for where a ``memory`` bound stops them
    (the C search counts its table's bytes, the Python one estimates them).
    """
    if memory is not None and memory < 1:
        raise ValueError(f"the memory budget is a number of bytes above 0, not {memory}")
    if _fastsearch is None:
        return search(state, limit, seconds, clock, memory)
    rules = sum(_RULE_BITS[name] for name in state.rules)
    timed = seconds is not None and clock is not None
    return _fastsearch.search(
        state.cols,
        state.down,
        state.stock,
        state.cells,
        state.found,
        state.wasp,
        state.any_time,
        rules,
        min(limit, 1 << 62),
        seconds if seconds is not None else 0.0,
        timed,
        clock,
        min(memory or 0, 1 << 62),
    )


_VERDICTS = {WON: "winnable", LOST: "unwinnable", UNDECIDED: "unknown", MEMORY: "unknown"}


def _budget(budget: Budget | int | None) -> Budget:
    if budget is None:
        return Budget()
    if isinstance(budget, int):
        return Budget(nodes=budget)
    return budget


def solve(
    board: Board,
    budget: Budget | int | None = None,
    *,
    prune: bool = True,
    rules: frozenset[str] | None = None,
) -> Solution:
    """Solve ``board``'s position (its move stack is ignored; the board is not changed).

    ``budget`` is a :class:`Budget` or a node count. ``prune=False`` switches every
    pruning rule off (exact keys, every empty column tried, no forced links, no dead
    position test): slower, for cross-checking. ``rules`` picks the pruning rules by
    name instead (those of ``protocol.solver.search.ALL_RULES``), to cross-check one rule.
    """
    if rules is not None and not rules <= ALL_RULES:
        unknown = ", ".join(sorted(rules - ALL_RULES))
        raise ValueError(f"unknown pruning rules: {unknown} (known: {', '.join(sorted(ALL_RULES))})")
    limits = _budget(budget)
    start = limits.clock() if limits.clock is not None else None
    state = _state(board, prune, rules)
    spent = 0
    if state.wasp and state.stock and not state.any_time and state.rules & {"settled", "direct"}:
        # Wasp under when-stuck before the deal: first look for a win with rules 7, 8 and 9
        # there too, for a share of the budget. They can lose winnable positions there, so
        # only a win found counts (its line is a win whatever was left out); otherwise the
        # search proper runs with the rest. The look first forces links onto natural runs
        # too (NATURAL), and if that smaller space is exhausted without a win, looks again
        # without them, with the same share of what is left.
        for extra in ({EARLY, NATURAL}, {EARLY}):
            quick = _state(board, prune, state.rules | extra)
            nodes = max(1, int((limits.nodes - spent) * _EARLY_SHARE))
            left = _seconds_left(limits, start)
            share = left * _EARLY_SHARE if left is not None else None
            outcome, line, used_nodes, _ = run_search(quick, nodes, share, limits.clock, limits.memory)
            spent += used_nodes
            if outcome == WON:
                return _solution(outcome, line, spent, limits, start)
            if outcome in (UNDECIDED, MEMORY):
                break
    left = _seconds_left(limits, start)
    if left is not None and left <= 0:
        return _solution(UNDECIDED, [], spent, limits, start)
    outcome, line, nodes, _ = run_search(
        state, max(1, limits.nodes - spent), left, limits.clock, limits.memory
    )
    return _solution(outcome, line, spent + nodes, limits, start)


def _seconds_left(limits: Budget, start: float | None) -> float | None:
    """The seconds of ``limits`` not yet spent since ``start``; None without a time budget."""
    if limits.seconds is None or limits.clock is None or start is None:
        return None
    return limits.seconds - (limits.clock() - start)


_EARLY_SHARE = 0.9
"""The share of a Wasp when-stuck search's budget the first look for a win with rules 7, 8
and 9 before the deal too may spend (see :func:`solve`), and then of what is left the
second look, if the first exhausted its space. On a lost deal both looks' smaller spaces
are soon exhausted, and the search proper gets what they left."""


def _solution(
    outcome: int, line: list[tuple[int, int, int]], nodes: int, limits: Budget, start: float | None
) -> Solution:
    seconds = limits.clock() - start if limits.clock is not None and start is not None else None
    moves = tuple(DEAL if card < 0 else Move(card, source, target) for card, source, target in line)
    return Solution(Verdict(_VERDICTS[outcome]), moves, nodes, seconds, outcome == MEMORY)


def solve_deal(
    variant: Variant | str,
    number: int,
    rule: ReserveRule | str = ReserveRule.ANY_TIME,
    budget: Budget | int | None = None,
    *,
    prune: bool = True,
) -> Solution:
    """Solve the opening position of deal ``number`` of ``variant``."""
    return solve(Board.new(get_variant(variant), number, rule), budget, prune=prune)


def is_winnable(board: Board, budget: Budget | int | None = None) -> bool | None:
    """Tell whether ``board`` can still be won: ``True``, ``False``, or ``None`` if undecided."""
    verdict = solve(board, budget).verdict
    if verdict is Verdict.UNKNOWN:
        return None
    return verdict is Verdict.WINNABLE


def winning_move(board: Board, budget: Budget | int | None = None) -> Move | None:
    """Return the first move of a winning line from ``board``, or ``None``.

    ``None`` means no winning line was found: the position is lost, already won, or the
    budget ran out (call :func:`solve` to tell these apart).
    """
    solution = solve(board, budget)
    if solution.verdict is Verdict.WINNABLE and solution.moves:
        return solution.moves[0]
    return None


def first_losing_move(
    variant: Variant | str,
    number: int,
    moves: Sequence[Move],
    rule: ReserveRule | str = ReserveRule.ANY_TIME,
    budget: Budget | int | None = None,
) -> int | None:
    """Return the index of the first move after which the game could no longer be won.

    ``None`` when the deal was never winnable, when the game is still winnable after the
    last move, or when the budget did not suffice to decide (each position searched gets
    the whole ``budget``). Winnability never comes back once lost, so the positions are
    bisected: about ``log2(len(moves))`` searches. Raises
    :class:`~protocol.game.IllegalMove` if ``moves`` is not a legal game.
    """
    board = Board.new(get_variant(variant), number, rule)
    boards = [board.copy(stack=False)]
    for move in moves:
        board.play(move)
        boards.append(board.copy(stack=False))
    verdicts: dict[int, bool | None] = {}

    def winnable(index: int) -> bool | None:
        if index not in verdicts:
            verdicts[index] = is_winnable(boards[index], budget)
        return verdicts[index]

    if winnable(0) is not True:
        return None
    last = len(boards) - 1
    if winnable(last) is not False:
        return None
    low, high = 0, last  # winnable(low) is True, winnable(high) is False
    while high - low > 1:
        middle = (low + high) // 2
        verdict = winnable(middle)
        if verdict is None:
            return None
        if verdict:
            low = middle
        else:
            high = middle
    return high - 1


def pick_winnable(
    variant: Variant | str,
    candidates: Iterable[int],
    rule: ReserveRule | str = ReserveRule.ANY_TIME,
    budget: Budget | int | None = None,
) -> int | None:
    """Return the first deal number of ``candidates`` proved winnable, or ``None``."""
    for number in candidates:
        if solve_deal(variant, number, rule, budget).verdict is Verdict.WINNABLE:
            return number
    return None


def canonical_key(board: Board) -> bytes:
    """Return the solver's transposition key of ``board``'s position.

    Equal keys mean positions that are the same up to interchangeable columns (and
    reserve cells); face-down counts are part of the key.
    """
    return _state(board).key()


def wilson_interval(successes: int, trials: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """Return the Wilson score interval of a proportion (95% for the default ``z``)."""
    if trials <= 0:
        return (0.0, 1.0)
    p = successes / trials
    z2 = z * z
    centre = (p + z2 / (2 * trials)) / (1 + z2 / trials)
    half = z / (1 + z2 / trials) * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials))
    return (max(0.0, centre - half), min(1.0, centre + half))


def percentile(values: Sequence[float], fraction: float) -> float:
    """Return the ``fraction`` quantile of ``values`` (nearest rank; 0.5 is the median)."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]
