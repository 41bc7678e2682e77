"""A miniature Wasp, solved exactly, for checking the claims behind rules 7 and 8.

The game is Wasp's with fewer suits, fewer ranks and fewer columns: a face-up card (with
everything on it) moves onto its successor at the top of another column, or, unless it
heads its column, into an empty column; a run of one suit from the top rank down to the
Ace at the top of a column is collected; a face-down card is turned up when it is
exposed. A reserve, if any, is dealt one card onto each of the first columns when no
other move is legal (the when-stuck rule). Nothing here depends on there being thirteen
ranks, so the claims of `docs/solver.md` about idle moves and detours are claims about
this game too, and here they can be checked on every position reachable from a set of
deals: every distance to a win is computed exactly (breadth-first from the won
positions, backwards).

Run as a module for larger universes than the tests use:
``python -m tests.protocol.wasp_model SUITS RANKS COLUMNS DEALS [--down D] [--reserve R]``.
"""

from __future__ import annotations

import argparse
import random
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

Column = tuple[int, tuple[int, ...]]  # (face-down count, cards bottom to top)
State = tuple[tuple[int, ...], tuple[Column, ...]]  # (reserve, columns)

UNWINNABLE = -1


@dataclass(frozen=True)
class Move:
    """A move out of a position: where it leads and how rules 7 and 8 classify it."""

    child: int
    card: int
    target: int  # the column the card goes to (-1 for the deal)
    link: bool
    idle: bool  # rule 7: the card lies on its face-up successor and goes to an empty column
    detour: bool  # rule 8: the card's successor tops another column; it goes to an empty one
    deal: bool = False


@dataclass
class Universe:
    """Every position reachable from some deals, its moves, and its exact distance to a win."""

    suits: int
    ranks: int
    states: list[State] = field(default_factory=list)
    moves: list[list[Move]] = field(default_factory=list)
    distance: list[int] = field(default_factory=list)

    def rank(self, card: int) -> int:
        return card % self.ranks + 1

    def successor(self, card: int) -> int | None:
        return card + 1 if self.rank(card) < self.ranks else None


def _settle(u: Universe, column: Column) -> Column:
    """Collect complete runs from the top of a column and turn up an exposed card."""
    down, cards = column
    n = u.ranks
    while len(cards) - down >= n:
        top = cards[-n:]
        if u.rank(top[0]) == n and all(top[k] == top[k + 1] + 1 for k in range(n - 1)):
            cards = cards[:-n]
        else:
            break
    if down and down >= len(cards):
        down = len(cards) - 1
    return (down, cards)


def _key(reserve: tuple[int, ...], columns: list[Column]) -> State:
    """Canonical form: columns are interchangeable, except those the reserve will land on."""
    fixed = len(reserve)
    return (reserve, tuple(columns[:fixed]) + tuple(sorted(columns[fixed:])))


Child = tuple[State, int, int, bool, bool, bool, bool]


def _children(u: Universe, state: State) -> list[Child]:
    """The legal moves of the game (engine semantics) as (child, card, target, link, idle,
    detour, deal)."""
    reserve, columns = state
    cols = list(columns)
    tops: dict[int, int] = {}
    for j, (down, cards) in enumerate(cols):
        if len(cards) > down:
            tops[cards[-1]] = j
    fixed = len(reserve)
    empty = [j for j, (_, cards) in enumerate(cols) if not cards]
    # One representative per class of interchangeable empty columns.
    targets = [j for j in empty if j < fixed] + [j for j in empty if j >= fixed][:1]
    out: list[Child] = []
    for i, (down, cards) in enumerate(cols):
        for p in range(down, len(cards)):
            card = cards[p]
            group = cards[p:]
            succ = u.successor(card)
            if succ is not None and tops.get(succ, i) != i:
                j = tops[succ]
                new = list(cols)
                new[i] = _settle(u, (down, cards[:p]))
                new[j] = _settle(u, (cols[j][0], cols[j][1] + group))
                out.append((_key(reserve, new), card, j, True, False, False, False))
            if p > 0:  # a whole column never moves into an empty one
                idle = p - 1 >= down and cards[p - 1] == succ
                detour = succ is not None and tops.get(succ, i) != i
                for j in targets:
                    new = list(cols)
                    new[i] = _settle(u, (down, cards[:p]))
                    new[j] = _settle(u, (0, group))
                    out.append((_key(reserve, new), card, j, False, idle, detour, False))
    if reserve and not out:
        new = list(cols)
        for index, card in enumerate(reserve):
            down, cards = new[index]
            new[index] = _settle(u, (down, (*cards, card)))
        out.append((_key((), new), -1, -1, False, False, False, True))
    return out


def _random_deal(u: Universe, rng: random.Random, columns: int, down: int, reserve: int) -> State:
    cards = list(range(u.suits * u.ranks))
    rng.shuffle(cards)
    kept = tuple(cards[:reserve])
    rest = cards[reserve:]
    cuts = sorted(rng.sample(range(1, len(rest)), columns - 1))
    cols: list[Column] = []
    start = 0
    for end in [*cuts, len(rest)]:
        piece = tuple(rest[start:end])
        start = end
        cols.append(_settle(u, (rng.randint(0, min(down, len(piece) - 1)), piece)))
    return _key(kept, cols)


def explore(
    suits: int, ranks: int, columns: int, deals: int, *, down: int = 0, reserve: int = 0, seed: int = 1
) -> Universe:
    """Every position reachable from ``deals`` random deals, with exact distances to a win."""
    u = Universe(suits, ranks)
    rng = random.Random(seed)
    return _reach(u, [_random_deal(u, rng, columns, down, reserve) for _ in range(deals)])


def explore_from(suits: int, ranks: int, start: State) -> Universe:
    """Every position reachable from ``start`` (its index is 0), with exact distances."""
    return _reach(Universe(suits, ranks), [start])


def _reach(u: Universe, starts: list[State]) -> Universe:
    index: dict[State, int] = {}
    pending: list[list[Child] | None] = []

    def add(state: State) -> int:
        if state not in index:
            index[state] = len(u.states)
            u.states.append(state)
            pending.append(None)
        return index[state]

    for start in starts:
        queue = deque([add(start)])
        while queue:
            k = queue.popleft()
            if pending[k] is not None:
                continue
            kids = _children(u, u.states[k])
            pending[k] = kids
            for child, *_ in kids:
                c = add(child)
                if pending[c] is None:
                    queue.append(c)
    u.moves = [
        [
            Move(index[child], card, target, link, idle, detour, deal)
            for child, card, target, link, idle, detour, deal in kids or ()
        ]
        for kids in pending
    ]
    u.distance = _distances(u, lambda k, m: True)
    return u


def _distances(u: Universe, kept: Callable[[int, Move], bool]) -> list[int]:
    """Every position's distance to a win using only the moves ``kept`` keeps (breadth-first
    from the won positions, backwards), ``UNWINNABLE`` where none is reached."""
    parents: list[list[int]] = [[] for _ in u.states]
    for k, ms in enumerate(u.moves):
        for m in ms:
            if kept(k, m):
                parents[m.child].append(k)
    distance = [UNWINNABLE] * len(u.states)
    queue: deque[int] = deque()
    for k, (reserve, cols) in enumerate(u.states):
        if not reserve and all(not cards for _, cards in cols):
            distance[k] = 0
            queue.append(k)
    while queue:
        k = queue.popleft()
        for p in parents[k]:
            if distance[p] == UNWINNABLE:
                distance[p] = distance[k] + 1
                queue.append(p)
    return distance


@dataclass
class Findings:
    positions: int = 0
    winnable: int = 0
    lost_without: list[int] = field(default_factory=list)
    longer_without: list[int] = field(default_factory=list)
    without_clean_optimal_move: list[int] = field(default_factory=list)
    optimal_idle_moves: list[tuple[int, Move]] = field(default_factory=list)
    optimal_detours: list[tuple[int, Move]] = field(default_factory=list)
    # Lemma A of rule 7 (after the deal): where a card x that is no King lies face up at
    # row 0 of a column and x+1 tops another column, linking x keeps a clean win.
    lemma_a_positions: int = 0
    lemma_a_failures: list[tuple[int, int]] = field(default_factory=list)
    # Its stronger form, not needed by the proofs: linking x never lengthens the shortest win.
    stronger_lemma_a_failures: list[tuple[int, int]] = field(default_factory=list)
    # Moves after the deal, other than idle ones, that do not raise the potential.
    potential_falls: list[tuple[int, Move]] = field(default_factory=list)
    clean_moves_after_the_deal: int = 0


def potential(u: Universe, state: State) -> tuple[int, int, int, int]:
    """Rule 7's measure after the deal: (runs collected, cards face up, cards lying
    directly on their successors, columns not empty), compared lexicographically."""
    reserve, columns = state
    in_play = len(reserve) + sum(len(cards) for _, cards in columns)
    on_successor = sum(
        1 for _, cards in columns for p in range(1, len(cards)) if u.successor(cards[p]) == cards[p - 1]
    )
    return (
        (u.suits * u.ranks - in_play) // u.ranks,
        sum(len(cards) - down for down, cards in columns),
        on_successor,
        sum(1 for _, cards in columns if cards),
    )


def check(u: Universe, *, before_the_deal: bool = False) -> Findings:
    """Test the claims on every position of ``u``, leaving idle moves and detours out after
    the deal only, or (``before_the_deal``) before it too, as the search once did.

    - ``lost_without``, ``longer_without``: winnable positions that the game without the
      moves left out (the search's game; the deal is still offered only when no move at
      all is legal) cannot win, or only with a longer win;
    - ``without_clean_optimal_move``: positions (where moves are left out) whose shortest
      wins all start with an idle move or a detour;
    - ``optimal_idle_moves``: idle moves that start a shortest win (rule 7's claim is that
      none does; equivalently, putting a card that lies alone at the bottom of a column
      onto its successor never lengthens the shortest win);
    - ``optimal_detours``: detours that start a shortest win (rule 8 needs only that
      *some* shortest win has none);
    - ``lemma_a_failures``: Lemma A's positions ``Q`` (after the deal, ``x`` face up at row 0,
      ``x+1`` on top of another column) with a clean win where ``x``'s link leads to none;
      ``stronger_lemma_a_failures``: those where it leads to a longer shortest win;
    - ``potential_falls``: moves after the deal, other than idle ones, that do not raise
      ``potential``.
    """
    found = Findings(positions=len(u.states))
    d = u.distance

    def pruned(k: int, m: Move) -> bool:
        return (m.idle or m.detour) and (before_the_deal or not u.states[k][0])

    g = _distances(u, lambda k, m: not pruned(k, m))
    for k, ms in enumerate(u.moves):
        if d[k] == UNWINNABLE:
            continue
        found.winnable += 1
        if g[k] == UNWINNABLE:
            found.lost_without.append(k)
        elif g[k] > d[k]:
            found.longer_without.append(k)
        if d[k] == 0:
            continue
        optimal = [m for m in ms if d[m.child] == d[k] - 1]
        if not any(not pruned(k, m) for m in optimal):
            found.without_clean_optimal_move.append(k)
        found.optimal_idle_moves += [(k, m) for m in optimal if m.idle and pruned(k, m)]
        found.optimal_detours += [(k, m) for m in optimal if m.detour and pruned(k, m)]
    # The search's game: idle moves and detours left out after the deal only.
    clean = (
        g
        if not before_the_deal
        else _distances(u, lambda k, m: not (m.idle or m.detour) or bool(u.states[k][0]))
    )
    for k, ms in enumerate(u.moves):
        reserve, columns = u.states[k]
        if reserve:
            continue
        here = potential(u, u.states[k])
        for m in ms:
            if not m.idle:
                found.clean_moves_after_the_deal += not m.detour
                if potential(u, u.states[m.child]) <= here:
                    found.potential_falls.append((k, m))
        tops = {cards[-1]: j for j, (down, cards) in enumerate(columns) if len(cards) > down}
        for e, (down, cards) in enumerate(columns):
            x = cards[0] if cards and not down else None
            succ = None if x is None else u.successor(x)
            if succ is None or tops.get(succ, e) == e:
                continue
            found.lemma_a_positions += 1
            (link,) = [m.child for m in ms if m.link and m.card == x]
            if clean[k] != UNWINNABLE and clean[link] == UNWINNABLE:
                found.lemma_a_failures.append((k, x))
            if d[k] != UNWINNABLE and not 0 <= d[link] <= d[k]:
                found.stronger_lemma_a_failures.append((k, x))
    return found


def _row_0_links(u: Universe, state: State, suit: bool) -> Iterator[tuple[State, State | None]]:
    """Before the deal, each link of a face-up card ``x`` at row 0 of a column onto its
    successor on top of another column, where a card of ``x``'s suit is in the reserve
    (unless ``suit`` is False): the position after it, and the position after its crossing
    (the link of the card below the top of ``x``'s column, if it lies face up in the
    successor's column, onto that top), or None where no crossing is legal."""
    reserve, columns = state
    if not reserve:
        return
    stocked = {card // u.ranks for card in reserve}
    for j, (down_j, cards_j) in enumerate(columns):
        if len(cards_j) <= down_j or u.rank(cards_j[-1]) == 1:
            continue
        x = cards_j[-1] - 1
        for i, (down, cards) in enumerate(columns):
            if i == j or down or not cards or cards[0] != x or (suit and x // u.ranks not in stocked):
                continue
            linked = list(columns)
            linked[i] = (0, ())
            linked[j] = _settle(u, (down_j, cards_j + cards))
            top = cards[-1]
            if u.rank(top) == 1 or top - 1 not in cards_j[down_j:]:
                yield _key(reserve, linked), None
                continue
            at = cards_j.index(top - 1)
            crossed = list(columns)
            crossed[j] = _settle(u, (down_j, cards_j[:at]))
            crossed[i] = _settle(u, (0, cards + cards_j[at:]))
            yield _key(reserve, linked), _key(reserve, crossed)


def reversible_links(u: Universe, state: State, *, crossing: bool = True, suit: bool = True) -> list[State]:
    """Rule 10, before the deal: the positions after each link it forces (none after it).

    A face-up card ``x`` at row 0 of a column, whose successor tops another column, is
    linked there when a card of ``x``'s suit is in the reserve (so the link collects
    nothing, and moving the column back into the column it empties undoes it) and no card
    of the successor's column can be linked onto the top of ``x``'s column now (such a
    move would carry the successor onto ``x``'s own column). ``crossing=False`` or
    ``suit=False`` leaves that condition out (for showing that each is needed).
    """
    return [linked for linked, crossed in _row_0_links(u, state, suit) if not crossing or crossed is None]


def crossed_links(u: Universe, state: State) -> list[tuple[State, State]]:
    """Rule 10 where a crossing is legal, before the deal: for each link rule 10 would
    force but for its crossing, the positions after the link and after the crossing."""
    return [(linked, crossed) for linked, crossed in _row_0_links(u, state, True) if crossed is not None]


def anchored_links(u: Universe, state: State, *, anchor: bool = True) -> list[State]:
    """Rule 11, before the deal: the positions after each link it forces.

    The link of a face-up card ``x`` onto its successor ``t`` on top of another column is
    forced when ``t``'s run is anchored (``t`` and the cards above it in its suit, up to
    the top rank or to a card whose successor is in the reserve, each lie face down, or
    face up on their successor or first in the face-up part of their column) or ``x``'s
    group is (its cards, from ``x`` up, read down by one to the Ace or to a card whose
    predecessor is in the reserve). ``anchor=False`` leaves out the condition on the
    run's last card and the group's (for showing that it is needed)."""
    reserve, columns = state
    if not reserve:
        return []
    place = {card: (j, row) for j, (_, cards) in enumerate(columns) for row, card in enumerate(cards)}

    def run_anchored(card: int) -> bool:
        while True:
            if card not in place:
                return False
            j, row = place[card]
            down, cards = columns[j]
            first = row <= down  # face down, or first face up
            successor = u.successor(card)
            if successor is None or successor in reserve or (first and not anchor):
                return first
            if not first and cards[row - 1] != successor:
                return False
            card = successor

    def group_anchored(cards: tuple[int, ...], at: int) -> bool:
        last = at
        while last + 1 < len(cards) and u.rank(cards[last]) > 1 and cards[last + 1] == cards[last] - 1:
            last += 1
        if last < len(cards) - 1:
            return False
        return not anchor or u.rank(cards[last]) == 1 or cards[last] - 1 in reserve

    out = []
    for j, (down_j, cards_j) in enumerate(columns):
        if len(cards_j) <= down_j or u.rank(cards_j[-1]) == 1:
            continue
        x = cards_j[-1] - 1
        if x not in place or place[x][0] == j:
            continue
        i, at = place[x]
        down, cards = columns[i]
        if at >= down and (run_anchored(cards_j[-1]) or group_anchored(cards, at)):
            linked = list(columns)
            linked[i] = _settle(u, (down, cards[:at]))
            linked[j] = _settle(u, (down_j, cards_j + cards[at:]))
            out.append(_key(reserve, linked))
    return out


def dealt_positions(
    u: Universe,
    start: State,
    *,
    rule10: bool,
    rule11: bool = False,
    crossing: bool = True,
    suit: bool = True,
    anchor: bool = True,
) -> tuple[set[State], int, int]:
    """Where the deal lands from every stuck position reachable from ``start`` (a position
    before the deal), exploring every move or as the search does: rule 10's links
    (``rule10``) and rule 11's (``rule11``) played without branching wherever they apply,
    and (``rule10``) where a link waits only for its crossing, only the link and the
    crossing tried; and how many links were forced, and at how many positions only a link
    and its crossing were tried."""
    forced = chosen = 0

    def settled(state: State) -> State:
        nonlocal forced
        while True:
            links = reversible_links(u, state, crossing=crossing, suit=suit) if rule10 else []
            links += anchored_links(u, state, anchor=anchor) if rule11 else []
            if not links:
                break
            state = links[0]
            forced += 1
        return state

    first = settled(start)
    seen = {first}
    stack = [first]
    dealt: set[State] = set()
    while stack:
        state = stack.pop()
        kids = _children(u, state)
        if rule10 and crossing:
            choice = crossed_links(u, state)
            if choice:
                kids = [kid for kid in kids if kid[0] in choice[0]]
                chosen += 1
        for child, *_, deal in kids:
            if deal:
                dealt.add(child)
                continue
            child = settled(child)
            if child not in seen:
                seen.add(child)
                stack.append(child)
    return dealt, forced, chosen


def describe(u: Universe, k: int) -> str:
    suits = "SHDCXYZW"
    names = {c: f"{u.rank(c)}{suits[c // u.ranks]}" for c in range(u.suits * u.ranks)}
    reserve, cols = u.states[k]
    parts = [
        " ".join(("~" if r < down else "") + names[c] for r, c in enumerate(cards)) or "-"
        for down, cards in cols
    ]
    text = " | ".join(parts)
    if reserve:
        text += "   reserve: " + " ".join(names[c] for c in reserve)
    return f"{text}   (distance {u.distance[k]})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suits", type=int)
    parser.add_argument("ranks", type=int)
    parser.add_argument("columns", type=int)
    parser.add_argument("deals", type=int)
    parser.add_argument("--down", type=int, default=0, help="most face-down cards a column is dealt")
    parser.add_argument("--reserve", type=int, default=0, help="reserve cards (dealt when stuck)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--before-the-deal", action="store_true", help="leave idle moves and detours out before the deal too"
    )
    args = parser.parse_args()
    u = explore(
        args.suits, args.ranks, args.columns, args.deals, down=args.down, reserve=args.reserve, seed=args.seed
    )
    f = check(u, before_the_deal=args.before_the_deal)
    print(
        f"lost without idle moves and detours {len(f.lost_without)}, "
        f"longer without them {len(f.longer_without)}"
    )
    print(
        f"positions {f.positions}, winnable {f.winnable}; "
        f"without a clean move on a shortest win {len(f.without_clean_optimal_move)}; "
        f"idle moves on shortest wins {len(f.optimal_idle_moves)}; "
        f"detours on shortest wins {len(f.optimal_detours)}"
    )
    for k in f.lost_without[:3]:
        print("  lost without them:", describe(u, k))
    for k in f.without_clean_optimal_move[:3]:
        print("  no clean optimal move:", describe(u, k))
    print(
        f"Lemma A's positions {f.lemma_a_positions}: the link loses a clean win {len(f.lemma_a_failures)}, "
        f"lengthens the shortest win {len(f.stronger_lemma_a_failures)}; "
        f"moves after the deal (not idle) that do not raise the potential {len(f.potential_falls)}"
    )
    for k, m in (f.optimal_idle_moves + f.optimal_detours)[:3]:
        print("  optimal", "idle move" if m.idle else "detour", "of", m.card, "at", describe(u, k))


if __name__ == "__main__":
    main()
