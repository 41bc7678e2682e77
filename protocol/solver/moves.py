"""The moves of a position: the legal ones in search order, and the links forced without branching.

:class:`Moves` adds to :class:`~protocol.solver.position.Position` the legal moves (with
rules 1, 7 and 8 where a group enters an empty column) and the forced links of rules 2, 9,
10 and 11 (``docs/solver.md``). :mod:`protocol.solver.search` is the public module.
"""

from __future__ import annotations

from .position import STOCK, Position


class Moves(Position):
    """A position under search with its legal moves and its forced links."""

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
