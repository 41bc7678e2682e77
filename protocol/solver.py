"""A full-information solver for Scorpion and its variants.

The solver sees every card, face-down ones and the undealt reserve included, and answers
whether a position can still be won: ``winnable`` with a complete winning move list,
``unwinnable`` when the whole (reduced) search space has been exhausted, or ``unknown``
when the budget ran out first. It is pure: no I/O, no randomness, and it reads a clock
only when the caller hands it one (``Budget.clock``).

The search is a depth-first search over positions with a transposition table keyed on a
canonical position key (interchangeable columns sorted). Every pruning rule is sound; the
proofs are in ``docs/solver.md``:

1. *Symmetry.* Columns that the rules treat alike are interchangeable: all of them once
   the reserve is dealt (and always in Three Blind Mice), columns 4 and up before. The key
   sorts interchangeable columns (and the open reserve cells), and a group that may enter
   an empty column is sent to one representative empty column of each class only.
2. *Forced links.* In Scorpion, Scorpion II and Three Blind Mice, once the reserve is
   dealt (or at any time under the when-stuck rule), moving ``t-1`` onto ``t`` when
   ``t`` tops a rooted run (a face-up King-down run of one suit from row 0) never turns a
   winnable position into an unwinnable one, so the search plays it without branching.
3. *Buried successor.* In those three variants, a non-King card at or below the lowest
   face-up row whose successor lies beneath it in its column can never join it: lost.
4. *Sleeping deal.* Under the any-time rule, the deal is not tried again after moves that
   stay clear of columns 1-3: the result is reachable from a deal already explored.
5. *Tangled obligations.* In those three variants every non-King card not on its
   successor must lead exactly once more; if the "must lead first" relations between
   them form a cycle, the position is lost.
6. *Commuting moves.* In those three variants, after the deal, a move's child does not
   try the moves tried before it (or asleep where it was made) that commute with it:
   the other order reaches the same position (sleep sets). The table keeps the moves
   asleep where each position was explored, and explores it again in full when it is
   reached with one of them awake.

Internally the position is kept in plain lists that mirror :class:`~protocol.game.Board`
exactly (same column indices, same face-down counts), so a line found here replays move
by move with ``Board.play``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from .game.board import NO_CARD, Board
from .game.move import CELL_BASE, DEAL, Move
from .game.variant import ReserveRule, Variant, get_variant

__all__ = [
    "Budget",
    "Solution",
    "Verdict",
    "canonical_key",
    "first_losing_move",
    "is_winnable",
    "percentile",
    "pick_winnable",
    "solve",
    "solve_deal",
    "wilson_interval",
    "winning_move",
]

_STOCK = 200
_FOUNDATION = 300
_RUNS: tuple[list[int], ...] = tuple([suit * 13 + rank for rank in range(12, -1, -1)] for suit in range(4))
_PREFIX = tuple(bytes((200 + n,)) for n in range(52))
_PRE_DEAL = b"\xff"
_CELLS = b"\xfe"
_KINGS = sum(1 << (suit * 13 + 12) for suit in range(4))
_ALL_RULES = frozenset({"symmetry", "links", "dead", "sleep", "commute"})


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
    time at all and only the node budget applies.
    """

    nodes: int = 1_000_000
    seconds: float | None = None
    clock: Callable[[], float] | None = None


@dataclass(frozen=True, slots=True)
class Solution:
    """The outcome of one search."""

    verdict: Verdict
    moves: tuple[Move, ...]
    """A complete winning line when the verdict is ``winnable``, else empty."""
    nodes: int
    seconds: float | None
    """Time spent, per the budget's clock; ``None`` when no clock was given."""


class _OutOfBudget(Exception):
    pass


_Collected = list[tuple[int, bool, int]]
_Undo = tuple[int, int, int, int, bool, _Collected | None]


class _Search:
    """One position under search: mutable lists plus push/pop with exact undo."""

    def __init__(self, board: Board, prune: bool, rules: frozenset[str] = frozenset()) -> None:
        variant: Variant = board.variant
        self.ncols = len(board.columns)
        self.cols: list[list[int]] = [list(col) for col in board.columns]
        self.down: list[int] = list(board.down)
        self.stock: list[int] = list(board.stock)
        self.cells: list[int] = list(board.cells)
        self.found = len(board.foundations)
        self.turned = 0
        """How many cards the moves pushed so far have turned face up."""
        self.wasp = variant.any_card_fills_empty
        self.any_time = board.rule is ReserveRule.ANY_TIME
        self.prune = prune
        self.rules = rules if rules else (_ALL_RULES if prune else frozenset())
        self.where = [_FOUNDATION] * 52
        self.hidden = [False] * 52
        for index, col in enumerate(self.cols):
            for row, card in enumerate(col):
                self.where[card] = index
                self.hidden[card] = row < self.down[index]
        for card in self.stock:
            self.where[card] = _STOCK
            self.hidden[card] = True
        for index, card in enumerate(self.cells):
            if card != NO_CARD:
                self.where[card] = CELL_BASE + index

    # -- keys -----------------------------------------------------------------------------

    def key(self) -> bytes:
        """Return the canonical key: interchangeable columns (and cells) sorted."""
        cols = self.cols
        down = self.down
        parts = [_PREFIX[down[i]] + bytes(col) for i, col in enumerate(cols)]
        if self.stock:
            if "symmetry" in self.rules:
                tail = parts[3:]
                tail.sort()
                parts = parts[:3] + tail
            key = _PRE_DEAL + b"".join(parts)
        else:
            if "symmetry" in self.rules:
                parts.sort()
            key = b"".join(parts)
        if self.cells:
            cells = [c for c in self.cells if c != NO_CARD]
            if "symmetry" in self.rules:
                cells.sort()
                key += _CELLS + bytes(cells)
            else:
                key += _CELLS + bytes(c + 1 for c in self.cells)
        return key

    # -- move generation --------------------------------------------------------------------

    def first_link(self) -> tuple[int, int, int] | None:
        """Return the first legal move onto a rooted run (rule 2), or ``None``.

        A column is a rooted run when it is face up and reads King, Queen, ... of one suit
        from its bottom: nothing in it ever moves again, so a card joining its top is safe.
        """
        cols = self.cols
        where = self.where
        hidden = self.hidden
        down = self.down
        n = self.ncols
        for target in range(n):
            col = cols[target]
            if not col:
                continue
            top = col[-1]
            if not top % 13:
                continue
            card = top - 1
            source = where[card]
            if source < n:
                if source == target or hidden[card]:
                    continue
            elif source >= _STOCK:
                continue
            head = col[0]
            if not down[target] and head % 13 == 12 and col == _RUNS[head // 13][: len(col)]:
                return (card, source, target)
        return None

    def moves(self, every_empty: bool = False) -> list[tuple[int, int, int]]:
        """Return the legal moves (engine semantics), in search order.

        Unless ``every_empty`` (or pruning is off), a group entering an empty column goes
        to one representative of each class of interchangeable empty columns only.
        """
        cols = self.cols
        where = self.where
        hidden = self.hidden
        down = self.down
        n = self.ncols
        links: list[tuple[int, tuple[int, int, int]]] = []
        empty: list[int] = []
        for target in range(n):
            col = cols[target]
            if not col:
                empty.append(target)
                continue
            top = col[-1]
            if not top % 13:
                continue
            card = top - 1
            source = where[card]
            if source < n:
                if source != target and not hidden[card]:
                    scol = cols[source]
                    row = scol.index(card)
                    # Order: turn up a face-down card, empty a column, then the rest.
                    score = 3 if row and row == down[source] else (2 if not row else 0)
                    links.append((score, (card, source, target)))
            elif source < _STOCK:
                links.append((1, (card, source, target)))
        links.sort(key=_first, reverse=True)
        out = [move for _, move in links]
        if empty:
            if not every_empty and "symmetry" in self.rules:
                if self.stock:
                    rest = [e for e in empty if e >= 3]
                    empty = [e for e in empty if e < 3] + rest[:1]
                else:
                    empty = empty[:1]
            leaders: list[tuple[int, int]] = []
            if self.wasp:
                for source, col in enumerate(cols):
                    for row in range(max(down[source], 1), len(col)):
                        leaders.append((col[row], source))
            else:
                for king in (12, 25, 38, 51):
                    source = where[king]
                    if source < n:
                        if hidden[king] or cols[source][0] == king:
                            continue
                    elif source >= _STOCK:
                        continue
                    leaders.append((king, source))
            for card, source in leaders:
                for target in empty:
                    out.append((card, source, target))
        if self.stock and (self.any_time or not out):
            out.append((-1, -1, -1))
        return out

    # -- making and unmaking moves -----------------------------------------------------------

    def push(self, card: int, source: int, target: int) -> _Undo:
        """Apply a legal move; return what :meth:`pop` needs to take it back."""
        cols = self.cols
        where = self.where
        if card < 0:
            return self._deal()
        dst = cols[target]
        flipped = False
        collected: _Collected | None = None
        if source >= CELL_BASE:
            self.cells[source - CELL_BASE] = NO_CARD
            dst.append(card)
            where[card] = target
            size = 1
            if not card % 13 and len(dst) >= 13:
                collected = self._collect(target, collected)
            return (card, source, target, size, flipped, collected)
        src = cols[source]
        row = src.index(card)
        group = src[row:]
        del src[row:]
        if row and row == self.down[source]:
            self.down[source] = row - 1
            self.turned += 1
            self.hidden[src[-1]] = False
            flipped = True
        dst += group
        for moved in group:
            where[moved] = target
        size = len(group)
        if not dst[-1] % 13 and len(dst) >= 13:
            collected = self._collect(target, collected)
        if src and not src[-1] % 13 and len(src) >= 13:
            collected = self._collect(source, collected)
        return (card, source, target, size, flipped, collected)

    def _deal(self) -> _Undo:
        stock = self.stock
        dealt = len(stock)
        collected: _Collected | None = None
        for index, card in enumerate(stock):
            self.cols[index].append(card)
            self.where[card] = index
            self.hidden[card] = False
        self.stock = []
        for index in range(dealt):
            col = self.cols[index]
            if not col[-1] % 13 and len(col) >= 13:
                collected = self._collect(index, collected)
        return (-1, -1, -1, dealt, False, collected)

    def _collect(self, index: int, collected: _Collected | None) -> _Collected | None:
        col = self.cols[index]
        while len(col) >= 13:
            ace = col[-1]
            if ace % 13:
                break
            run = _RUNS[ace // 13]
            if col[-13:] != run or len(col) - 13 < self.down[index]:
                break
            del col[-13:]
            for card in run:
                self.where[card] = _FOUNDATION
            self.found += 1
            flipped = False
            if col and len(col) == self.down[index]:
                self.down[index] -= 1
                self.turned += 1
                self.hidden[col[-1]] = False
                flipped = True
            if collected is None:
                collected = []
            collected.append((index, flipped, ace // 13))
        return collected

    def pop(self, undo: _Undo) -> None:
        """Take back the move ``undo`` was returned for (the last one pushed)."""
        card, source, target, size, flipped, collected = undo
        cols = self.cols
        where = self.where
        if collected:
            for index, was_flipped, suit in reversed(collected):
                col = cols[index]
                if was_flipped:
                    self.hidden[col[-1]] = True
                    self.down[index] += 1
                    self.turned -= 1
                self.found -= 1
                run = _RUNS[suit]
                col += run
                for moved in run:
                    where[moved] = index
        if card < 0:
            stock = [cols[index].pop() for index in range(size)]
            for moved in stock:
                where[moved] = _STOCK
                self.hidden[moved] = True
            self.stock = stock
            return
        dst = cols[target]
        if source >= CELL_BASE:
            dst.pop()
            self.cells[source - CELL_BASE] = card
            where[card] = source
            return
        group = dst[-size:]
        del dst[-size:]
        src = cols[source]
        if flipped:
            self.hidden[src[-1]] = True
            self.down[source] += 1
            self.turned -= 1
        src += group
        for moved in group:
            where[moved] = source

    def commuting(self, mask: int, card: int) -> int:
        """Keep the moves of ``mask`` (bits by leading card) that commute with ``card``'s move.

        Rule 6: two links ``a -> a+1`` and ``b -> b+1`` legal in one position commute unless
        they cross (``b+1`` tops the column of ``a`` and ``b`` lies in the column ``a+1``
        tops: either move would put one's target above the other's card); a King into an
        empty column commutes with every link, and with another King's when two columns
        are empty.
        """
        mask &= ~(1 << card)
        if not mask:
            return mask
        cols = self.cols
        if card % 13 == 12:
            if sum(1 for col in cols if not col) < 2:
                mask &= ~_KINGS
            return mask
        where = self.where
        n = self.ncols
        home = where[card]
        onto = where[card + 1]
        top = cols[home][-1] if home < n else -1
        rest = mask & ~_KINGS
        while rest:
            low = rest & -rest
            rest ^= low
            other = low.bit_length() - 1
            there = where[other]
            if there == onto and top == other + 1:
                mask ^= low
        return mask

    def dead_table(self) -> list[tuple[int, list[bool]]]:
        """Return, per column with face-down cards, whether it is dead at each face-down count.

        Rule 3: a non-King card at or below the lowest face-up row whose successor lies
        beneath it in the same column can never reach that successor. The cards at those
        rows only change when the face-down count does, so a table indexed by the count
        answers for the whole search.
        """
        table: list[tuple[int, list[bool]]] = []
        for index, col in enumerate(self.cols):
            down = self.down[index]
            if not down:
                continue
            flags = [False] * (down + 1)
            for count in range(1, down + 1):
                flags[count] = any(
                    col[row] % 13 != 12 and col[row] + 1 in col[:row] for row in range(count + 1)
                )
            table.append((index, flags))
        return table

    def dead(self, table: list[tuple[int, list[bool]]]) -> bool:
        """Tell whether rule 3 declares the position lost."""
        down = self.down
        return any(flags[down[index]] for index, flags in table)

    def tangled(self) -> bool:
        """Tell whether the cards that must still move wait on each other in a cycle (rule 5).

        Every non-King card not lying on its successor must lead exactly one more move, onto
        its successor; the card lying on that successor must lead first, and so must the
        card lying on it while it is face down. A cycle of such "must lead first" relations
        among non-King cards cannot be met, so the position is lost.
        """
        cols = self.cols
        where = self.where
        down = self.down
        n = self.ncols
        first = [-1] * 52
        second = [-1] * 52
        pending: list[int] = []
        for index in range(n):
            col = cols[index]
            face_down = down[index]
            previous = -1
            row = -1
            for card in col:
                row += 1
                if card % 13 == 12 or previous == card + 1:
                    previous = card
                    continue
                previous = card
                pending.append(card)
                if row < face_down:
                    above = col[row + 1]
                    if above % 13 != 12:
                        first[card] = above
                successor = card + 1
                place = where[successor]
                if place < n:
                    scol = cols[place]
                    if scol[-1] == successor and place != index:
                        continue
                    srow = scol.index(successor)
                    if place == index and srow > row:
                        # The successor lies above: one of the cards between must lead.
                        mover = -1
                        movers = 0
                        for k in range(row + 1, srow + 1):
                            other = scol[k]
                            if other % 13 == 12 or scol[k - 1] != other + 1:
                                mover = other
                                movers += 1
                        if not movers:
                            return True
                        if movers == 1 and mover % 13 != 12:
                            second[card] = mover
                    else:
                        above = scol[srow + 1]
                        if above % 13 != 12:
                            second[card] = above
                elif place < _STOCK and successor % 13 != 12:
                    second[card] = successor
        # Depth-first search for a cycle in the "must lead first" graph.
        state = [0] * 52
        for start in pending:
            if state[start]:
                continue
            stack = [start]
            state[start] = 1
            while stack:
                card = stack[-1]
                other = first[card]
                if other >= 0:
                    first[card] = -1
                else:
                    other = second[card]
                    if other >= 0:
                        second[card] = -1
                    else:
                        state[card] = 2
                        stack.pop()
                        continue
                mark = state[other]
                if mark == 1:
                    return True
                if not mark:
                    state[other] = 1
                    stack.append(other)
        return False


def _first(item: tuple[int, tuple[int, int, int]]) -> int:
    return item[0]


def _search(state: _Search, budget: Budget) -> tuple[Verdict, tuple[Move, ...], int]:
    """Run the depth-first search; return the verdict, the winning line and the nodes used."""
    # Each entered key maps to the moves asleep there when it was explored (rule 6; a bit
    # per leading card).
    seen: dict[bytes, int] = {}
    path: list[_Undo] = []
    limit = budget.nodes
    clock = budget.clock
    deadline = clock() + budget.seconds if clock is not None and budget.seconds is not None else None
    links = "links" in state.rules and not state.wasp
    table = state.dead_table() if "dead" in state.rules and not state.wasp else []
    dead = state.dead
    checks = "dead" in state.rules and not state.wasp
    commute = "commute" in state.rules and not state.wasp
    tangled = state.tangled
    commuting = state.commuting
    nodes = 0
    push = state.push
    pop = state.pop
    first_link = state.first_link

    def enter(asleep: bool, seen_at: int, sleep: int) -> tuple[list[tuple[int, int, int]], int] | None:
        """Arrive at a position: play forced links, then return its moves (None: a dead end).

        ``asleep`` drops the deal (rule 4, the deal's sleep set): the position was reached
        from one whose deal is explored anyway, by moves that commute with the deal.
        ``sleep`` holds the moves that need not be tried here (rule 6, a bit per leading
        card); the answer carries it on, after the forced links, for the children.
        """
        nonlocal nodes
        base = len(path)
        if links and (not state.stock or not state.any_time):
            while state.found < 4:
                link = first_link()
                if link is None:
                    break
                if sleep:
                    sleep = commuting(sleep, link[0])
                path.append(push(*link))
                nodes += 1
                if path[-1][5] is not None:
                    sleep = 0  # it collected a run: rule 6 starts afresh
        if state.found < 4:
            key = state.key()
            stored = seen.get(key)
            if stored is not None:
                if not stored & ~sleep:
                    while len(path) > base:
                        pop(path.pop())
                    return None
                # Explored before, but with a move asleep that is awake now: explore it
                # again in full (rule 6), and keep the smaller of the two sleep sets.
                if sleep.bit_count() < stored.bit_count():
                    seen[key] = sleep
            else:
                # Rules 3 and 5 can only newly apply once a card is turned up or the reserve dealt.
                fresh = checks and state.turned + 4 * len(state.stock) != seen_at
                if fresh and (dead(table) or tangled()):
                    seen[key] = 0
                    while len(path) > base:
                        pop(path.pop())
                    return None
                seen[key] = sleep
        moves = state.moves()
        if asleep and moves and moves[-1][0] < 0:
            moves.pop()
        if sleep:
            moves = [m for m in moves if m[0] < 0 or not sleep >> m[0] & 1]
        return moves, sleep

    def line() -> tuple[Move, ...]:
        return tuple(DEAL if undo[0] < 0 else Move(undo[0], undo[1], undo[2]) for undo in path)

    if state.found == 4:
        return Verdict.WINNABLE, (), 0
    entered = enter(False, -1, 0)
    if state.found == 4:
        return Verdict.WINNABLE, line(), nodes
    if not entered or not entered[0]:
        return Verdict.UNWINNABLE, (), nodes
    sleeps = "sleep" in state.rules and state.any_time
    # A frame: a position's moves, the path length there, whether its deal is covered, what
    # rules 3 and 5 were last checked at (cards turned up, reserve left), and the moves
    # asleep there (rule 6).
    frames: list[tuple[list[tuple[int, int, int]], int, bool, int, int]] = [
        (entered[0], len(path), sleeps, state.turned + 4 * len(state.stock), entered[1])
    ]
    cursor = [0]
    done = [0]
    while frames:
        moves, base, covered, checked, sleep = frames[-1]
        while len(path) > base:
            pop(path.pop())
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
        if commute and card >= 0 and not state.stock:
            child = commuting(sleep | done[-1], card)
            done[-1] |= 1 << card
        path.append(push(*move))
        nodes += 1
        if nodes > limit:
            return Verdict.UNKNOWN, (), nodes
        if deadline is not None and not nodes & 1023 and clock is not None and clock() > deadline:
            return Verdict.UNKNOWN, (), nodes
        if state.found == 4:
            return Verdict.WINNABLE, line(), nodes
        entered = enter(asleep, checked, child)
        if state.found == 4:
            return Verdict.WINNABLE, line(), nodes
        if entered and entered[0]:
            mark = state.turned + 4 * len(state.stock)
            frames.append((entered[0], len(path), sleeps and bool(state.stock), mark, entered[1]))
            cursor.append(0)
            done.append(0)
    return Verdict.UNWINNABLE, (), nodes


def _budget(budget: Budget | int | None) -> Budget:
    if budget is None:
        return Budget()
    if isinstance(budget, int):
        return Budget(nodes=budget)
    return budget


def solve(board: Board, budget: Budget | int | None = None, *, prune: bool = True) -> Solution:
    """Solve ``board``'s position (its move stack is ignored; the board is not changed).

    ``budget`` is a :class:`Budget` or a node count. ``prune=False`` switches every
    pruning rule off (exact keys, every empty column tried, no forced links, no dead
    position test): slower, for cross-checking.
    """
    rules = _budget(budget)
    start = rules.clock() if rules.clock is not None else None
    verdict, moves, nodes = _search(_Search(board, prune), rules)
    seconds = rules.clock() - start if rules.clock is not None and start is not None else None
    return Solution(verdict, moves, nodes, seconds)


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
    return _Search(board, prune=True).key()


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
