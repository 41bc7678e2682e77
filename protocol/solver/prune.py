"""The pruning rules' tests of a position: sleep sets, and the positions known lost.

:class:`Search` adds to :class:`~protocol.solver.moves.Moves` the sleep-set bits of moves
and which moves commute (rule 6), and the tests that declare a position lost: a buried
successor (rule 3) and tangled obligations (rule 5), each proved in ``docs/solver.md``.
:mod:`protocol.solver.search` is the public module.
"""

from __future__ import annotations

from typing import Final

from .moves import Moves
from .position import _UNMARKED, STOCK, Undo

_KINGS: Final = (1 << 12) | (1 << 25) | (1 << 38) | (1 << 51)
_LINKS: Final = (1 << 52) - 1
"""The bits of links in a sleep set (:meth:`Search.bit`)."""
_EVERY: Final = tuple(sum(1 << (card + 52 * kind) for kind in range(5)) for card in range(52))
"""Every bit that can name a move of a card (:meth:`Search.bit`)."""


class Search(Moves):
    """One position under search: the position (:class:`~protocol.solver.position.Position`),
    its moves (:class:`~protocol.solver.moves.Moves`), and the tests of the pruning rules."""

    # -- sleep sets (rule 6) ----------------------------------------------------------------

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

    # -- positions known lost (rules 3 and 5) ------------------------------------------------

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
