"""The search behind :mod:`protocol.solver`: the position, its moves, and the pruned search.

This module is the solver's hot loop. It knows nothing of the engine's classes: it takes
plain lists (the columns, face-down counts, stock and cells exactly as
:class:`~protocol.game.Board` keeps them) and answers with plain tuples, so that it can be
compiled to a C extension with mypyc when the package is installed (``setup.py``); the
same source runs as plain Python where no compiler is at hand. The pruning rules are
listed in :mod:`protocol.solver` and proved in ``docs/solver.md``.
"""

from __future__ import annotations

from collections.abc import Callable
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

_RUNS: Final[tuple[list[int], ...]] = tuple(
    [suit * 13 + rank for rank in range(12, -1, -1)] for suit in range(4)
)
_PREFIX: Final = tuple(bytes((200 + n,)) for n in range(52))
_BYTE: Final = tuple(bytes((card,)) for card in range(52))
_UNMARKED: Final = [0] * 52
_PRE_DEAL: Final = b"\xff"
_CELLS: Final = b"\xfe"
_KINGS: Final = (1 << 12) | (1 << 25) | (1 << 38) | (1 << 51)
_LINKS: Final = (1 << 52) - 1
"""The bits of links in a sleep set (:meth:`Search.bit`)."""
_EVERY: Final = tuple(sum(1 << (card + 52 * kind) for kind in range(5)) for card in range(52))
"""Every bit that can name a move of a card (:meth:`Search.bit`)."""

Collected = list[tuple[int, bool, int]]
Undo = tuple[int, int, int, list[int] | None, bool, Collected | None, bytes, bytes]


class Search:
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

    # -- move generation --------------------------------------------------------------------

    def first_link(
        self, rule2: bool = True, rule9: bool = False, rule10: bool = False, rule11: bool = False
    ) -> tuple[int, int, int] | None:
        """Return the first legal forced link (rules 2, 9, 10 and 11, as asked), or ``None``.

        Rule 2 forces a link when its target column is a rooted run (face up, reading King,
        Queen, ... of one suit from its bottom: nothing in it ever moves again), or when the
        card it moves carries exactly the rest of its suit down to the Ace (a complete
        tail: none of those cards ever moves again, and nothing can join them). Rule 9
        (Wasp, after the deal) forces the link of a face-up card at row 0. Rule 10 (Wasp
        under when-stuck, before the deal) forces it too where the link can be undone and
        no move can carry the successor onto the card's own column now
        (:meth:`reversible_link`). Rule 11 (the same) forces a link onto an anchored run
        (:meth:`anchored_run`) or of an anchored group (:meth:`anchored_group`). With
        ``NATURAL`` (the first look for a win only) rule 2 also forces a link onto a natural
        run.
        """
        cols = self.cols
        where = self.where
        hidden = self.hidden
        down = self.down
        n = self.ncols
        tails = self.tails
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
                if rule9 and not self.row[card]:
                    return (card, source, target)
                if rule10 and not self.row[card] and self.reversible_link(card, source, target):
                    return (card, source, target)
                if rule11 and (self.anchored_run(top) or self.anchored_group(card, source)):
                    return (card, source, target)
                if not rule2:
                    continue
                if tails and self.carries_tail(card, source):
                    return (card, source, target)
            elif source >= STOCK or not rule2:
                continue
            elif tails and self.carries_tail(card, source):
                return (card, source, target)  # an Ace from a reserve cell
            if self.natural:
                first = down[target]
                row = len(col) - 1
                while row > first and col[row] % 13 != 12 and col[row - 1] == col[row] + 1:
                    row -= 1
                if len(col) - row >= 3:
                    return (card, source, target)
            head = col[0]
            # Rooted: a face-up King at row 0 with its suit in order up to the top (checked
            # in place, without slicing a list at every arrival).
            if not down[target] and head % 13 == 12 and len(col) <= 13 and head - len(col) + 1 == top:
                row = len(col) - 1
                while row and col[row - 1] == col[row] + 1:
                    row -= 1
                if not row:
                    return (card, source, target)
        return None

    def reversible_link(self, card: int, source: int, target: int) -> bool:
        """Rule 10's test for the link of ``card``, face up at row 0 of ``source``, onto its
        successor on top of ``target``: no card of its suit can be collected before the
        deal (so the link collects nothing, and moving the column back into the column it
        empties undoes it), and no crossing is legal (:meth:`crossing_legal`)."""
        return self.stock_suits >> card // 13 & 1 == 1 and not self.crossing_legal(source, target)

    def anchored_run(self, top: int) -> bool:
        """Rule 11's first test: whether ``top`` and the cards above it in its suit, up to a
        King or to a card whose successor is in the reserve, each lie face down, or face up
        on their successor or first in the face-up part of their column. Before the deal
        none of them can join another card's group: each moves only onto its successor (one
        of them, or out of play) or into an empty column, under them lie only cards of them
        and face-down cards, and a face-down one moves only once it is turned up, first in
        the face-up part of its column."""
        where = self.where
        row = self.row
        card = top
        while True:
            column = where[card]
            if column >= self.ncols:
                return False
            first = self.hidden[card] or row[card] == self.down[column]
            if card % 13 == 12 or where[card + 1] == STOCK:
                return first
            if not first and self.cols[column][row[card] - 1] != card + 1:
                return False
            card += 1

    def anchored_group(self, card: int, source: int) -> bool:
        """Rule 11's second test: whether the cards of ``source`` from ``card`` up read down
        by one in its suit to an Ace or to a card whose predecessor is in the reserve. Before
        the deal no other card can join such a group: only a card's predecessor is put on
        it, and each of its cards moves only onto its successor or into an empty column."""
        col = self.cols[source]
        row = self.row[card]
        top = len(col) - 1
        while row < top and col[row] % 13 and col[row + 1] == col[row] - 1:
            row += 1
        last = col[row]
        return row == top and (not last % 13 or self.where[last - 1] == STOCK)

    def crossing_legal(self, source: int, target: int) -> bool:
        """Whether a card of ``target`` can be linked onto the top of ``source`` now: the
        card below that top in its suit lies face up in ``target`` (rule 10's crossing,
        which would carry ``target``'s top onto ``source``'s own column)."""
        top = self.cols[source][-1]
        return top % 13 != 0 and self.where[top - 1] == target and not self.hidden[top - 1]

    def reversible_choice(self, moves: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
        """Rule 10 where a crossing is legal: at the first link from row 0 that rule 10
        would force but for its crossing, keep only that link and the crossing of ``moves``."""
        cols = self.cols
        where = self.where
        n = self.ncols
        for target in range(n):
            col = cols[target]
            if not col or not col[-1] % 13:
                continue
            card = col[-1] - 1
            source = where[card]
            if source >= n or source == target or self.hidden[card] or self.row[card]:
                continue
            if self.stock_suits >> card // 13 & 1 == 1 and self.crossing_legal(source, target):
                crossing = cols[source][-1] - 1
                return [m for m in moves if m[::2] == (card, target) or m[::2] == (crossing, source)]
        return moves

    def moves(self, every_empty: bool = False) -> list[tuple[int, int, int]]:
        """Return the legal moves (engine semantics), in search order.

        Unless ``every_empty`` (or pruning is off), a group entering an empty column goes
        to one representative of each class of interchangeable empty columns only. With
        rule 7 (Wasp, after the deal), a card lying on its face-up successor does not lead
        into an empty column; with rule 8 (likewise) neither does a card whose successor
        tops another column.
        """
        cols = self.cols
        where = self.where
        hidden = self.hidden
        down = self.down
        n = self.ncols
        # Order: turn up a face-down card, empty a column, from a cell, then the rest.
        turning: list[tuple[int, int, int]] = []
        emptying: list[tuple[int, int, int]] = []
        celled: list[tuple[int, int, int]] = []
        out: list[tuple[int, int, int]] = []
        empty: list[int] = []
        idle = False
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
                    row = self.row[card]
                    if not row:
                        emptying.append((card, source, target))
                    elif row == down[source]:
                        turning.append((card, source, target))
                    else:
                        out.append((card, source, target))
            elif source < STOCK:
                celled.append((card, source, target))
        if turning or emptying or celled:
            out = turning + emptying + celled + out
        if empty:
            if not every_empty and self.symmetry:
                if self.stock:
                    rest = [e for e in empty if e >= 3]
                    empty = [e for e in empty if e < 3] + rest[:1]
                else:
                    empty = empty[:1]
            leaders: list[tuple[int, int]] = []
            if self.wasp:
                # Rule 7: a card lying on its face-up successor never moves into an empty
                # column once the reserve is dealt. Rule 8: nor does a card whose successor
                # tops another column (its link is legal, and better). Not before the deal:
                # under when-stuck such a move may be what makes the position stuck, so that
                # the reserve is dealt, and where the reserve lands depends on it (unless
                # ``early``, when the search only looks for a win).
                applies = not self.stock or (self.early and not self.any_time)
                settled = applies and self.settled
                direct = applies and self.direct
                for source, col in enumerate(cols):
                    first = down[source]
                    for row in range(max(first, 1), len(col)):
                        card = col[row]
                        if settled and row > first and card % 13 != 12 and col[row - 1] == card + 1:
                            idle = True
                            continue
                        if direct and card % 13 != 12:
                            home = where[card + 1]
                            if home < n and home != source and cols[home][-1] == card + 1:
                                idle = True
                                continue
                        leaders.append((card, source))
            else:
                for king in (12, 25, 38, 51):
                    source = where[king]
                    if source < n:
                        if hidden[king] or cols[source][0] == king:
                            continue
                    elif source >= STOCK:
                        continue
                    leaders.append((king, source))
            for card, source in leaders:
                for target in empty:
                    out.append((card, source, target))
        # Under the when-stuck rule the deal is legal only when no move is, left-out ones too.
        if self.stock and (self.any_time or not (out or idle)):
            out.append((-1, -1, -1))
        return out

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

    def bit(self, card: int, target: int) -> int:
        """Return the sleep-set bit of the move of ``card`` to column ``target`` (rule 6).

        A move is named by the card that leads it; in Wasp, where a card may have both a
        link and moves into empty columns, a move into an empty column is bit ``52 + card``,
        except before the deal into column 1, 2 or 3 (where the deal lands, so each is
        distinct): bits ``104``, ``156`` or ``208 + card``.
        """
        if self.wasp and not self.cols[target]:
            if self.stock and target < 3:
                return card + 52 * (target + 2)
            return card + 52
        return card

    def commuting(self, mask: int, card: int, target: int) -> int:
        """Keep the moves of ``mask`` (bits as :meth:`bit`) that commute with ``card``'s
        move to column ``target``.

        Rule 6: two links ``a -> a+1`` and ``b -> b+1`` legal in one position commute unless
        they cross (``b+1`` tops the column of ``a`` and ``b`` lies in the column ``a+1``
        tops: either move would put one's target above the other's card); a move into an
        empty column (a King's, or in Wasp any card's) commutes with every link of another
        card, and with another move into an empty column when two columns are empty, except
        that a move that would collect the run of the King moved does not commute with it.
        """
        cols = self.cols
        if self.wasp:
            mask &= ~_EVERY[card]
            if mask and self.direct:
                mask = self._direct_guard(mask, card, target)
            if not cols[target]:
                if mask > _LINKS:
                    if self.stock and target < 3:
                        mask &= ~(_LINKS << (52 * (target + 2)))  # the same column
                    elif sum(1 for col in cols[3 if self.stock else 0 :] if not col) < 2:
                        mask &= ~(_LINKS << 52)
                if mask and card % 13 == 12:
                    mask &= ~self.collectors(card)
                return mask
        else:
            mask &= ~(1 << card)
            if card % 13 == 12:
                if mask & _KINGS and sum(1 for col in cols if not col) < 2:
                    mask &= ~_KINGS
                if mask:
                    mask &= ~self.collectors(card)
                return mask
        if not mask:
            return mask
        where = self.where
        n = self.ncols
        home = where[card]
        onto = where[card + 1]
        top = cols[home][-1] if home < n else -1
        rest = mask & _LINKS & ~_KINGS
        while rest:
            low = rest & -rest
            rest ^= low
            other = low.bit_length() - 1
            there = where[other]
            if there == onto and top == other + 1:
                mask ^= low
        return mask

    def _direct_guard(self, mask: int, card: int, target: int) -> int:
        """Drop from ``mask`` the moves whose rule 8 standing ``card``'s move to ``target``
        changes, or that would change that move's own (Wasp, rule 6 with rule 8).

        Rule 8 leaves out ``z``'s move into an empty column while ``z+1`` tops another column,
        so two moves commute only if neither makes the other's successor do so.
        """
        own = self.bit(card, target)
        into = not self.cols[target] and card % 13 != 12
        out = mask
        rest = mask
        while rest:
            low = rest & -rest
            rest ^= low
            index = low.bit_length() - 1
            other = index % 52
            # This move changes the standing of ``other``'s move into an empty column, or
            # (being one itself) ``other``'s move would change its own.
            if (index >= 52 and other % 13 != 12 and self._exposes(card, own, other)) or (
                into and self._exposes(other, index, card)
            ):
                out ^= low
        return out

    def _exposes(self, card: int, named: int, below: int) -> bool:
        """Tell whether the move of ``card`` (named ``named``, as :meth:`bit`) would make
        ``below + 1`` top a column other than ``below``'s where it does not now: it carries
        ``below + 1`` off the top of ``below``'s column, or, ``below`` not lying under
        ``below + 1``, it lies on ``below + 1`` or collects the run of a King lying there."""
        where = self.where
        n = self.ncols
        up = below + 1
        home = where[up]
        if home >= n:
            return False
        source = where[card]
        row = self.row[card]
        at = self.row[up]
        col = self.cols[home]
        if where[below] == home and self.row[below] < at:
            # ``below + 1`` lies above ``below``: it leaves that column only if carried off
            # its top without ``below``.
            return source == home and self.row[below] < row <= at == len(col) - 1
        if source == home and row == at + 1:
            return True
        if at + 1 < len(col) and col[at + 1] % 13 == 12:
            return bool(self.collectors(col[at + 1]) >> named & 1)
        return False

    def collectors(self, king: int) -> int:
        """Return the moves (bits as :meth:`bit`) that would collect ``king``'s run.

        That is the link completing a natural run from ``king`` to its column's top (the
        card carrying the rest of the suit down to the Ace), or any move of the card lying
        on the Ace of a run already complete from ``king``.
        """
        source = self.where[king]
        n = self.ncols
        if source >= n:
            return 0
        col = self.cols[source]
        end = self.row[king]
        size = len(col)
        while end + 1 < size and col[end] % 13 and col[end + 1] == col[end] - 1:
            end += 1
        if not col[end] % 13:
            if end + 1 == size:
                return 0
            card = col[end + 1]
            return _EVERY[card] if self.wasp else 1 << card
        if end + 1 < size:
            return 0
        card = col[end] - 1
        return 1 << card if self.carries_tail(card, self.where[card]) else 0

    def carries_tail(self, card: int, source: int) -> bool:
        """Tell whether ``card``, lying in column or cell ``source``, carries exactly the rest
        of its suit down to the Ace (a complete tail; an Ace alone in a cell is one)."""
        if source >= self.ncols:
            return source < STOCK and not card % 13
        col = self.cols[source]
        row = self.row[card]
        if len(col) - row != card % 13 + 1:
            return False
        # Read in place (no slices): the cards above must be card - 1, ..., the Ace.
        return all(col[row + above] == card - above for above in range(1, card % 13 + 1))

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
        card lying on it while it is face down. A King that such a relation makes leave the
        card under it does so exactly once, by leading into an empty column or by being
        collected with its run where it lies (with the rule ``kings``; it in turn waits for
        a card lying on it while it is face down). A cycle of such "must happen first"
        relations cannot be met, so the position is lost. This looks at every card; see
        :meth:`tangled_from` for the test after moves.
        """
        cols = self.cols
        seeds: list[int] = []
        for index in range(self.ncols):
            seeds += cols[index]
        return self.tangled_from(seeds)

    def waits(self, card: int) -> int:
        """Return the cards whose moves ``card``'s must wait for (rule 5; see ``tangled``).

        ``card`` waits for at most two: the card lying on it while it is face down (the
        first), and the one that must clear the way to its successor (the second). Only a
        card in a column that must still move waits: a non-King card not lying on its
        successor, or (rule ``kings``) a face-down King. The answer packs both as
        ``first + 1 + 64 * (second + 1)`` (-1 standing for none), or is -1 when the way to
        the successor can never be cleared (the position is lost).
        """
        index = self.where[card]
        if index >= self.ncols:
            return 0
        col = self.cols[index]
        row = self.row[card]
        kings = self.kings
        first = 0
        if row < self.down[index]:
            above = col[row + 1]
            if kings or above % 13 != 12:
                first = above + 1
        if card % 13 == 12:
            return first if kings else 0
        successor = card + 1
        if row and col[row - 1] == successor:
            return 0
        place = self.where[successor]
        if place < self.ncols:
            scol = self.cols[place]
            if place != index and scol[-1] == successor:
                return first
            srow = self.row[successor]
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
                    return -1
                if movers == 1 and (kings or mover % 13 != 12):
                    return first + 64 * (mover + 1)
                return first
            above = scol[srow + 1]
            return first + 64 * (above + 1) if kings or above % 13 != 12 else first
        if place < STOCK and (kings or successor % 13 != 12):
            return first + 64 * (successor + 1)
        return first

    def newly_waiting(self, undo: Undo, seeds: list[int]) -> None:
        """Add to ``seeds`` the cards that may wait for more (rule 5) since the move just
        pushed (``undo``'s; not the deal, after which every card is tested).

        A move gives a card a new wait only if the card's successor moved in its group
        while the card stayed behind in the source column, or lies in the target column
        beneath the group (its successor now above it); every other wait it changes, it
        takes away (``docs/solver.md``, rule 5).
        """
        card = undo[0]
        target = undo[2]
        where = self.where
        group = undo[3]
        if group is None:
            # From a reserve cell.
            if card % 13 and where[card - 1] == target:
                seeds.append(card - 1)
            return
        source = undo[1]
        rows = self.row
        # The group's cards are at or above the leading card's row in the target (all of
        # them are gone if the leading card was collected).
        beneath = rows[card] if where[card] == target else 52
        for moved in group:
            if moved % 13:
                waiting = where[moved - 1]
                if waiting == source or (waiting == target and rows[moved - 1] < beneath):
                    seeds.append(moved - 1)

    def tangled_from(self, seeds: list[int]) -> bool:
        """Tell whether a cycle of rule 5 (see ``tangled``) is reachable from ``seeds``.

        A cycle in a position its parent did not have runs through a card whose waits
        changed, so after moves it is enough to start from the cards whose successor was
        in a moved group and that stayed below it (``newly_waiting``): a move only ever
        takes the other waits away (``docs/solver.md``, rule 5).
        """
        mark = self.marks
        if self.stamp > 250:
            # Marks stay small ints (Python keeps those, so setting one allocates nothing).
            mark[:] = _UNMARKED
            self.stamp = 0
        gray = self.stamp + 1
        black = gray + 1
        self.stamp = black
        # Depth-first, on a stack of cards with how far each got: 0 (new), 1 (its first
        # wait followed), 2 (both followed); ``later`` holds each card's second wait.
        stack = self.stack
        later = self.later
        for start in seeds:
            if mark[start] >= gray:
                continue
            mark[start] = gray
            stack[0] = start * 3
            depth = 0
            while depth >= 0:
                top = stack[depth]
                card = top // 3
                phase = top % 3
                if phase == 2:
                    mark[card] = black
                    depth -= 1
                    continue
                stack[depth] = top + 1
                if phase == 0:
                    packed = self.waits(card)
                    if packed < 0:
                        return True
                    later[card] = packed // 64 - 1
                    other = packed % 64 - 1
                else:
                    other = later[card]
                if other < 0:
                    continue
                seen = mark[other]
                if seen == gray:
                    return True
                if seen < gray:
                    mark[other] = gray
                    depth += 1
                    stack[depth] = other * 3
        return False


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
