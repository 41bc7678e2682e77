"""The position under search: plain lists, its canonical key, and moves made and unmade.

:class:`Position` keeps a position as :class:`~protocol.game.Board` does (the same column
indices, the same face-down counts), with where each card is, and makes and takes back
moves with exact undo; its key (rule 1) is what the search's table is keyed on. The
constants here are the search's own copies of the engine's (it imports nothing from the
package, so that mypyc compiles it alone). :class:`~protocol.solver.moves.Moves` and
:class:`~protocol.solver.prune.Search` build on it; :mod:`protocol.solver.search` is the
public module.
"""

from __future__ import annotations

from typing import Final

STOCK: Final = 200
"""Where a card in the undealt reserve is (``Search.where``)."""
FOUNDATION: Final = 300
"""Where a collected card is."""
CELL_BASE: Final = 100
"""Where a card in reserve cell ``i`` is: ``CELL_BASE + i`` (as in :mod:`protocol.game.move`)."""
NO_CARD: Final = -1
"""An empty reserve cell (as in :mod:`protocol.game.board`)."""
EARLY: Final = "early"
"""Not a pruning rule: rules 7, 8 and 9 (and Wasp's rules 2 and 6 with them) before the
deal under when-stuck too, where 7 and 8 can lose winnable positions and 9 is not proved.
The solver uses it only to look for a win first (a line found is a win whatever the
search left out), never for an unwinnable verdict."""
NATURAL: Final = "natural"
"""Not a pruning rule either, and only with ``EARLY``: rule 2 also forces a link onto a
column whose top three cards or more, face up, read down by one in a suit (a *natural
run*), whatever lies under them. Not sound (a card below the run may need a card the link
moves); the solver's first look for a win tries it before the look with ``EARLY`` alone."""
RULE_NAMES: Final = (
    "symmetry",
    "links",
    "tails",
    "dead",
    "kings",
    "sleep",
    "commute",
    "settled",
    "direct",
    EARLY,
    "bottoms",
    NATURAL,
    "reversible",
    "anchored",
)
"""Every name ``Search`` takes, in the order of the C search's ``RULE_*`` bits."""
ALL_RULES: Final = frozenset(RULE_NAMES) - {EARLY, NATURAL}
"""The pruning rules (``docs/solver.md``)."""


_RUNS: Final[tuple[list[int], ...]] = tuple(
    [suit * 13 + rank for rank in range(12, -1, -1)] for suit in range(4)
)
_PREFIX: Final = tuple(bytes((200 + n,)) for n in range(52))
_BYTE: Final = tuple(bytes((card,)) for card in range(52))
_UNMARKED: Final = [0] * 52
_PRE_DEAL: Final = b"\xff"
_CELLS: Final = b"\xfe"

Collected = list[tuple[int, bool, int]]
Undo = tuple[int, int, int, list[int] | None, bool, Collected | None, bytes, bytes]


class Position:
    """One position under search: mutable lists plus push/pop with exact undo."""

    def __init__(
        self,
        cols: list[list[int]],
        down: list[int],
        stock: list[int],
        cells: list[int],
        found: int,
        wasp: bool,
        any_time: bool,
        rules: frozenset[str],
    ) -> None:
        """Take a position: the engine's column lists (bottom first), face-down counts,
        undealt stock and reserve cells (``NO_CARD`` for an empty one), the number of runs
        already collected, the variant's and reserve rule's flags, and the pruning rules
        to use (names from ``ALL_RULES``; empty: none)."""
        self.ncols = len(cols)
        self.cols: list[list[int]] = [list(col) for col in cols]
        self.down: list[int] = list(down)
        self.stock: list[int] = list(stock)
        self.cells: list[int] = list(cells)
        self.found = found
        self.turned = 0
        """How many cards the moves pushed so far have turned face up."""
        self.wasp = wasp
        self.any_time = any_time
        self.rules = rules
        # The rules' flags, read on every move (a set lookup each time costs).
        self.symmetry = "symmetry" in rules
        self.tails = "tails" in rules
        self.settled = "settled" in rules
        self.direct = "direct" in rules
        self.early = EARLY in rules
        self.natural = self.early and NATURAL in rules
        self.kings = "kings" in rules
        self.bottoms = wasp and "bottoms" in rules
        self.reversible = wasp and not any_time and "reversible" in rules
        self.anchored = wasp and not any_time and "anchored" in rules
        # The suits with a card in the reserve, as bits: none of them can be collected
        # before the deal (rule 10).
        self.stock_suits = 0
        for card in stock:
            self.stock_suits |= 1 << card // 13
        self.where = [FOUNDATION] * 52
        self.row = [0] * 52
        """Each card's row in its column, while it is in one (kept by every move)."""
        self.hidden = [False] * 52
        # Rule 5's cycle search: a mark per card (up to ``stamp``: not seen in this search)
        # and its stack, and each card's second wait, kept between searches.
        self.marks = list(_UNMARKED)
        self.stamp = 0
        self.stack = [0] * 53
        self.later = [0] * 52
        # Each column's part of the key (its face-down count, then its cards), kept by every
        # move; and the order the parts go into the key in (see ``key``), redone only when a
        # column empties or fills.
        self.parts: list[bytes] = []
        self.order: list[int] = []
        self.reorder = True
        for index, col in enumerate(self.cols):
            for row, card in enumerate(col):
                self.where[card] = index
                self.row[card] = row
                self.hidden[card] = row < self.down[index]
        for card in self.stock:
            self.where[card] = STOCK
            self.hidden[card] = True
        for index, card in enumerate(self.cells):
            if card != NO_CARD:
                self.where[card] = CELL_BASE + index
        self.parts = [self._part(index) for index in range(self.ncols)]

    # -- keys -----------------------------------------------------------------------------

    def _part(self, index: int) -> bytes:
        return _PREFIX[self.down[index]] + bytes(self.cols[index])

    def key(self) -> bytes:
        """Return the canonical key: interchangeable columns (and cells) in a fixed order.

        With rule 1, the interchangeable columns (all of them once the reserve is dealt;
        columns 4 on before) go into the key ordered by their bottom cards, empty ones last:
        no two columns share a bottom card, so positions that differ only by the order of
        those columns get the same key, and the order changes only when a column empties or
        fills. (Each part starts with a byte above any card's, so the key reads back
        unambiguously.)
        """
        if self.reorder:
            self._order()
        parts = self.parts
        key = b"".join([parts[i] for i in self.order])
        if self.stock:
            key = _PRE_DEAL + key
        if self.cells:
            cells = [c for c in self.cells if c != NO_CARD]
            if self.symmetry:
                cells.sort()
                key += _CELLS + bytes(cells)
            else:
                key += _CELLS + bytes(c + 1 for c in self.cells)
        return key

    def _order(self) -> None:
        cols = self.cols
        n = self.ncols
        if not self.symmetry:
            self.order = list(range(n))
        else:
            fixed = 3 if self.stock else 0
            bottoms = [cols[i][0] for i in range(fixed, n) if cols[i]]
            bottoms.sort()
            where = self.where
            self.order = (
                list(range(fixed))
                + [where[card] for card in bottoms]
                + [i for i in range(fixed, n) if not cols[i]]
            )
        self.reorder = False

    def _place(self, index: int) -> None:
        """Put column ``index``, just emptied or filled, back in its place in the key's order.

        Empty columns all give the same part, so where they go among themselves does not
        matter: an emptied column goes last. (An emptied column must be placed before one
        filled by the same move, as the search for the filled one's place reads the rest.)
        """
        if self.reorder or not self.symmetry or (self.stock and index < 3):
            return
        order = self.order
        cols = self.cols
        order.remove(index)
        col = cols[index]
        if col:
            bottom = col[0]
            for at in range(3 if self.stock else 0, len(order)):
                other = cols[order[at]]
                if not other or other[0] > bottom:
                    order.insert(at, index)
                    return
        order.append(index)

    # -- making and unmaking moves -----------------------------------------------------------

    def push(self, card: int, source: int, target: int) -> Undo:
        """Apply a legal move; return what :meth:`pop` needs to take it back."""
        cols = self.cols
        where = self.where
        if card < 0:
            return self._deal()
        dst = cols[target]
        parts = self.parts
        old_dst = parts[target]
        flipped = False
        collected: Collected | None = None
        filled = not dst
        if source >= CELL_BASE:
            self.cells[source - CELL_BASE] = NO_CARD
            self.row[card] = len(dst)
            dst.append(card)
            where[card] = target
            parts[target] = old_dst + _BYTE[card]
            if filled:
                self._place(target)
            if not card % 13 and len(dst) >= 13:
                collected = self._collect(target, collected)
            return (card, source, target, None, flipped, collected, b"", old_dst)
        src = cols[source]
        old_src = parts[source]
        rows = self.row
        row = rows[card]
        group = src[row:]
        del src[row:]
        # The parts follow by slicing (the group's bytes are the end of the source's part).
        parts[target] = old_dst + old_src[row + 1 :]
        if not row:
            parts[source] = old_src[:1]
        elif row == self.down[source]:
            self.down[source] = row - 1
            self.turned += 1
            self.hidden[src[-1]] = False
            flipped = True
            parts[source] = _PREFIX[row - 1] + old_src[1 : row + 1]
        else:
            parts[source] = old_src[: row + 1]
        at = len(dst)
        dst += group
        for moved in group:
            where[moved] = target
            rows[moved] = at
            at += 1
        if not src:
            self._place(source)
        if filled:
            self._place(target)
        if not dst[-1] % 13 and len(dst) >= 13:
            collected = self._collect(target, collected)
        if src and not src[-1] % 13 and len(src) >= 13:
            collected = self._collect(source, collected)
        return (card, source, target, group, flipped, collected, old_src, old_dst)

    def _deal(self) -> Undo:
        stock = self.stock
        dealt = len(stock)
        collected: Collected | None = None
        for index, card in enumerate(stock):
            self.row[card] = len(self.cols[index])
            self.cols[index].append(card)
            self.where[card] = index
            self.hidden[card] = False
        self.stock = []
        self.reorder = True
        for index in range(dealt):
            self.parts[index] = self._part(index)
            col = self.cols[index]
            if not col[-1] % 13 and len(col) >= 13:
                collected = self._collect(index, collected)
        return (-1, -1, -1, stock, False, collected, b"", b"")

    def _collect(self, index: int, collected: Collected | None) -> Collected | None:
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
                self.where[card] = FOUNDATION
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
        if collected:
            self.parts[index] = self._part(index)
            self.reorder = True
        return collected

    def pop(self, undo: Undo) -> None:
        """Take back the move ``undo`` was returned for (the last one pushed)."""
        card, source, target, group, flipped, collected, old_src, old_dst = undo
        cols = self.cols
        where = self.where
        if collected:
            self.reorder = True
            for index, was_flipped, suit in reversed(collected):
                col = cols[index]
                if was_flipped:
                    self.hidden[col[-1]] = True
                    self.down[index] += 1
                    self.turned -= 1
                self.found -= 1
                run = _RUNS[suit]
                at = len(col)
                col += run
                for moved in run:
                    where[moved] = index
                    self.row[moved] = at
                    at += 1
        if card < 0:
            # The undo of the deal holds the stock it dealt, one card to each column from
            # the first on.
            assert group is not None
            for index, moved in enumerate(group):
                cols[index].pop()
                where[moved] = STOCK
                self.hidden[moved] = True
                self.parts[index] = self._part(index)
            self.stock = group
            self.reorder = True
            return
        dst = cols[target]
        self.parts[target] = old_dst
        if source >= CELL_BASE:
            dst.pop()
            self.cells[source - CELL_BASE] = card
            where[card] = source
            if not dst:
                self._place(target)
            return
        assert group is not None
        del dst[-len(group) :]
        src = cols[source]
        self.parts[source] = old_src
        refilled = not src
        if flipped:
            self.hidden[src[-1]] = True
            self.down[source] += 1
            self.turned -= 1
        at = len(src)
        src += group
        rows = self.row
        for moved in group:
            where[moved] = source
            rows[moved] = at
            at += 1
        if not dst:
            self._place(target)
        if refilled:
            self._place(source)
