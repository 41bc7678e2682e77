"""Rules 7, 8, 10 and 11's claims, checked exactly on every position of small Wasp games.

`wasp_model` is Wasp with fewer suits, ranks and columns, solved exactly. The first test
ties it to the engine: with thirteen ranks and seven columns it is Wasp, move for move.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator

import pytest

from protocol.game import DEAL, Board, Move, ReserveRule
from protocol.solver.search import EARLY, Search
from protocol.solver.solver import _state

from .wasp_model import (
    UNWINNABLE,
    Universe,
    _children,
    _distances,
    _key,
    _random_deal,
    anchored_links,
    check,
    crossed_links,
    dealt_positions,
    describe,
    explore,
    explore_from,
    potential,
    reversible_links,
)


def _model_state(board: Board) -> tuple[tuple[int, ...], tuple[tuple[int, tuple[int, ...]], ...]]:
    columns = [(board.down[i], tuple(col)) for i, col in enumerate(board.columns)]
    return _key(tuple(board.stock), columns)


def _children_of(board: Board, moves: list[Move]) -> set[object]:
    children = set()
    for move in moves:
        board.push(move)
        children.add(_model_state(board))
        board.pop()
    return children


def _links(state: Search, forced: Callable[[Search, int, int, int], bool]) -> list[Move]:
    """The legal links of ``state`` (a card onto its successor on top of another column)
    that ``forced(state, card, source, target)`` accepts."""
    return [
        Move(card, source, target)
        for card, source, target in state.moves()
        if card >= 0
        and state.cols[target]
        and state.cols[target][-1] == card + 1
        and forced(state, card, source, target)
    ]


def _reversible(state: Search, card: int, source: int, target: int) -> bool:
    """Rule 10's links: of a card at row 0 (``Search.reversible_link``)."""
    return state.cols[source][0] == card and state.reversible_link(card, source, target)


def _anchored(state: Search, card: int, source: int, target: int) -> bool:
    """Rule 11's links: onto an anchored run or of an anchored group."""
    return state.anchored_run(card + 1) or state.anchored_group(card, source)


def _random_wasp_games(
    games: int, seed: int, *, until_the_deal: bool = False
) -> Iterator[tuple[Board, list[Move]]]:
    """The positions of random Wasp games under when-stuck (deals 1 to ``games``, up to 150
    moves each, or only until the deal), each with its legal moves; the game goes on with a
    random one of them once the caller is done with the position."""
    rng = random.Random(seed)
    for number in range(1, games + 1):
        board = Board.new("wasp", number, ReserveRule.WHEN_STUCK)
        for _ in range(150):
            moves = board.legal_moves()
            if not moves or (until_the_deal and not board.stock):
                break
            yield board, moves
            board.push(rng.choice(moves))


def test_the_model_with_thirteen_ranks_makes_the_engines_wasp_moves_and_the_searchs_choice() -> None:
    # The model's moves are the engine's; after the deal, those it calls neither idle nor
    # detours are the ones the search tries with rules 7 and 8, and before it the search
    # tries them all (every empty column offered, as the model offers one of each class).
    full = Universe(suits=4, ranks=13)
    compared = after = 0
    for board, moves in _random_wasp_games(80, 7):
        model = _children(full, _model_state(board))
        assert {child for child, *_ in model} == _children_of(board, moves), board
        search = _state(board, rules=frozenset({"settled", "direct"})).moves(every_empty=True)
        tried = [DEAL if card < 0 else Move(card, source, target) for card, source, target in search]
        kept = {child for child, _, _, _, idle, detour, _ in model if board.stock or not (idle or detour)}
        assert kept == _children_of(board, tried), board
        # With EARLY (used only to look for a win first) they are left out before the
        # deal too, and the deal still comes only when the engine allows it.
        quick = _state(board, rules=frozenset({"settled", "direct", EARLY})).moves(every_empty=True)
        tried = [DEAL if card < 0 else Move(card, source, target) for card, source, target in quick]
        clean = {child for child, _, _, _, idle, detour, _ in model if not (idle or detour)}
        assert clean == _children_of(board, tried), board
        compared += 1
        after += not board.stock
    assert compared > 1000 and after > 300, (compared, after)


@pytest.mark.parametrize(
    ("suits", "ranks", "columns", "deals", "down", "reserve", "seed"),
    [
        (3, 4, 4, 250, 2, 0, 2),  # after the deal, face-down cards
        (4, 3, 5, 200, 2, 0, 3),
        (3, 4, 4, 150, 2, 3, 4),  # a reserve dealt onto the first three columns when stuck
    ],
)
def test_rule_7s_lemma_claim_and_measure_hold_on_every_position_after_the_deal(
    suits: int, ranks: int, columns: int, deals: int, down: int, reserve: int, seed: int
) -> None:
    u = explore(suits, ranks, columns, deals, down=down, reserve=reserve, seed=seed)
    found = check(u)
    assert found.positions > 30_000 and found.winnable > found.positions // 2
    # Lemma A: linking a card that lies alone at the bottom of a column onto its successor
    # keeps a win without idle moves and detours.
    assert found.lemma_a_positions > 30_000
    assert not found.lemma_a_failures, describe(u, found.lemma_a_failures[0][0])
    # The measure the proofs order positions by rises with every move but the idle ones.
    assert found.clean_moves_after_the_deal > 50_000
    assert not found.potential_falls, describe(u, found.potential_falls[0][0])
    # What the proofs do not need, but the model finds too: Lemma A for shortest wins.
    assert not found.stronger_lemma_a_failures
    # The search's game (no idle moves or detours after the deal) keeps every distance.
    assert not found.lost_without and not found.longer_without
    assert not found.without_clean_optimal_move, describe(u, found.without_clean_optimal_move[0])
    # Rule 7 in its strong form: no shortest win starts with an idle move.
    assert not found.optimal_idle_moves, describe(u, found.optimal_idle_moves[0][0])


def test_a_detour_can_start_a_shortest_win_so_rule_8_needs_the_weak_claim() -> None:
    # Four ranks, three suits, four columns: from
    #   - | - | 4S 3S 1D 2S | 4H 3H 2H 1S 4D 3D 2D 1H
    # moving 1S (with 4D 3D 2D 1H) into an empty column while 2S tops the third column
    # starts a five-move win, and so do moving 1D 2S into an empty column first and the
    # link 1S -> 2S (which is therefore no shorter than the detour).
    u = explore(3, 4, 4, 100, seed=2)
    found = check(u)
    one = "- | - | 4S 3S 1D 2S | 4H 3H 2H 1S 4D 3D 2D 1H   (distance 5)"
    assert any(describe(u, k) == one and u.rank(move.card) == 1 for k, move in found.optimal_detours)
    (k,) = [k for k in range(len(u.states)) if describe(u, k) == one]
    (link,) = [m for m in u.moves[k] if m.link and m.card == 0]  # 1S
    assert u.distance[link.child] == 4
    for k, move in found.optimal_detours:
        assert u.distance[move.child] == u.distance[k] - 1
        assert any(u.distance[m.child] == u.distance[k] - 1 and not (m.idle or m.detour) for m in u.moves[k])


def test_before_the_deal_under_when_stuck_leaving_idle_moves_out_loses_winnable_positions() -> None:
    # Why rules 7 and 8 wait for the deal under when-stuck too: with a reserve still to deal,
    # a move into an empty column may be what makes the position stuck (so that the reserve
    # is dealt at all), and where the reserve lands depends on which columns are filled.
    # Here 11 winnable positions have no win without idle moves and detours, for instance
    #   1D 3H | 2D | 4D | 1S 4S 3S 2S 2H   reserve 4H 3D 1H (dealt onto the first three).
    u = explore(3, 4, 4, 150, down=2, reserve=3, seed=2)
    assert len(check(u, before_the_deal=True).lost_without) == 11
    assert not check(u).lost_without


def test_the_measure_needs_cards_face_up_before_cards_on_their_successors() -> None:
    # A card lying on its face-down successor may move into an empty column (the move is
    # not idle): one card fewer on its successor, one more face up. So Φ counts the cards
    # face up first; in the other order it would fall there.
    u = explore(3, 4, 4, 60, down=2, seed=2)
    leaving = 0
    for k, ms in enumerate(u.moves):
        if u.states[k][0]:
            continue
        before = potential(u, u.states[k])
        for m in ms:
            if m.idle:
                continue
            after = potential(u, u.states[m.child])
            assert after > before
            # Fewer cards on their successors, no run collected: a card turned up.
            leaving += after[2] < before[2] and after[0] == before[0]
    assert leaving > 0


def test_linking_a_card_under_a_natural_run_onto_its_successor_can_lose_the_win() -> None:
    # Why rule 9 asks for the card at row 0 (and rule 2 for a rooted run or a complete tail):
    # forcing every link x -> x+1 whose moved group is a natural run, even where no card of
    # x's suit below the group's top lies in x+1's column, would cut the nodes of a hard
    # lost Wasp any-time deal by two thirds, but it loses wins. Three suits of five ranks,
    # all face up, after the deal:
    #   4S 5S | 1H 3D | 3H 5H 2H 3S 4D | 4H 2S 2D 5D 1S 1D
    # is won in 15 clean moves (a shortest win starts by putting 2D, with 5D 1S 1D on it,
    # onto 3D where 3D lies); after the link 3D -> 4D (3D alone on top, a natural run; 2D
    # and 1D not in 4D's column) it is lost.
    suits = "SHD"

    def card(name: str) -> int:
        return suits.index(name[-1]) * 5 + int(name[:-1]) - 1

    text = "4S 5S | 1H 3D | 3H 5H 2H 3S 4D | 4H 2S 2D 5D 1S 1D"
    columns = [(0, tuple(card(c) for c in part.split())) for part in text.split("|")]
    u = explore_from(3, 5, _key((), columns))
    clean = _distances(u, lambda k, m: not (m.idle or m.detour))
    assert clean[0] == u.distance[0] == 15
    three, four = card("3D"), card("4D")
    (link,) = [m.child for m in u.moves[0] if m.link and m.card == three]
    assert u.distance[link] == clean[link] == UNWINNABLE
    # the hypothesis of the forced link tried: 3D tops its column, 4D another one, and
    # neither 2D nor 1D lies in 4D's column
    (_, of_three), (_, of_four) = [col for col in u.states[0][1] if three in col[1] or four in col[1]]
    assert of_three[-1] == three and of_four[-1] == four
    assert card("2D") not in of_four and card("1D") not in of_four


def _rule_10_over_deals(
    suits: int,
    ranks: int,
    columns: int,
    down: int,
    reserve: int,
    deals: int,
    *,
    rule10: bool = True,
    rule11: bool = False,
    **leave_out: bool,
) -> tuple[int, int, int, int, int]:
    """Random deals of a small Wasp under when-stuck, each explored before the deal with
    every move and as the search does with rule 10 (and with rule 11, or with rule 11
    alone): (deals where the deal lands on fewer positions so, positions lost so, links
    forced, positions where only a link and its crossing were tried, positions the deal
    lands on)."""
    u = Universe(suits, ranks)
    rng = random.Random(10)
    differ = lost = forced = chosen = landed = 0
    for _ in range(deals):
        start = _random_deal(u, rng, columns, down, reserve)
        every, _, _ = dealt_positions(u, start, rule10=False)
        kept, count, choices = dealt_positions(u, start, rule10=rule10, rule11=rule11, **leave_out)
        assert kept <= every  # the search's moves are legal moves
        differ += kept != every
        lost += len(every - kept)
        forced += count
        chosen += choices
        landed += len(every)
    return differ, lost, forced, chosen, landed


@pytest.mark.parametrize(
    ("suits", "ranks", "columns", "down", "reserve"),
    [(3, 4, 4, 1, 2), (3, 5, 4, 1, 2), (4, 3, 4, 1, 3)],
)
def test_rule_10s_links_keep_every_position_the_deal_can_land_on(
    suits: int, ranks: int, columns: int, down: int, reserve: int
) -> None:
    # Before the deal under when-stuck, a deal is won exactly when the deal, played at some
    # stuck position the game can reach, leads to a winnable position; rule 10 must keep
    # every such position reachable, and so it does, deal by deal, while forcing thousands
    # of links (and, in two of the universes, trying only a link and its crossing at
    # hundreds of positions).
    differ, lost, forced, chosen, landed = _rule_10_over_deals(suits, ranks, columns, down, reserve, 60)
    assert (differ, lost) == (0, 0)
    assert forced > 1000 and landed > 100, (forced, landed)
    assert chosen > 300 or reserve == 3, chosen


def test_rule_10_without_its_crossing_test_loses_positions_the_deal_can_land_on() -> None:
    # The second condition is needed: forcing the link where a card of the successor's
    # column can be linked onto the top of the card's own column loses the positions that
    # link leads to (it carries the successor onto the card's column, and the forced link
    # would have taken the card away first).
    differ, lost, _, _, _ = _rule_10_over_deals(3, 5, 4, 1, 2, 60, crossing=False)
    assert differ > 0 and lost > 0


@pytest.mark.parametrize(
    ("suits", "ranks", "columns", "down", "reserve", "rule10"),
    [(3, 5, 4, 1, 1, False), (4, 4, 4, 1, 1, False), (3, 5, 4, 2, 2, True), (2, 6, 4, 1, 1, True)],
)
def test_rule_11s_links_keep_every_position_the_deal_can_land_on(
    suits: int, ranks: int, columns: int, down: int, reserve: int, rule10: bool
) -> None:
    # Rule 11 forces links onto anchored runs and of anchored groups, from any row,
    # whether or not the suit has a card in the reserve (with one reserve card most suits
    # lie wholly in play, so links that collect a run are forced too); alone and beside
    # rule 10, every position the deal can land on stays reachable, deal by deal.
    differ, lost, forced, _, landed = _rule_10_over_deals(
        suits, ranks, columns, down, reserve, 60, rule10=rule10, rule11=True
    )
    assert (differ, lost) == (0, 0)
    assert forced > 3000 and landed > 100, (forced, landed)
    # Rule 11 alone forces links rule 10 would not (most of them above row 0).
    if not rule10:
        _, _, by_rule_10, _, _ = _rule_10_over_deals(suits, ranks, columns, down, reserve, 60)
        assert forced > by_rule_10, (forced, by_rule_10)


def test_rule_11_without_its_anchor_loses_positions_the_deal_can_land_on() -> None:
    # The run's first card must be a King or have its successor in the reserve (and the
    # group's last an Ace or have its predecessor there): forcing links onto any run of one
    # suit from the first face-up card, or of any group reading down in its suit, loses
    # positions (the run's first card may take it onto its successor, once that lies in
    # the linked card's group).
    differ, lost, _, _, _ = _rule_10_over_deals(3, 5, 4, 1, 1, 60, rule10=False, rule11=True, anchor=False)
    assert differ > 0 and lost > 0


def test_the_models_rule_11_is_the_searchs() -> None:
    # With thirteen ranks and seven columns, the links the model's rule 11 forces are those
    # the search's tests (``Search.anchored_run``, ``Search.anchored_group``) let it force,
    # position by position in random Wasp games before the deal under when-stuck; both
    # tests find links, many of them above row 0.
    full = Universe(suits=4, ranks=13)
    forced = compared = above = groups = 0
    for board, _ in _random_wasp_games(160, 12, until_the_deal=True):
        state = _state(board)
        links = _links(state, _anchored)
        assert set(anchored_links(full, _model_state(board))) == _children_of(board, links), board
        first = state.first_link(False, False, False, True)
        assert (first is None) == (not links), board
        if first is not None:
            assert Move(*first) in links
        forced += len(links)
        above += sum(state.row[m.card] > 0 for m in links)
        groups += sum(not state.anchored_run(m.card + 1) for m in links)
        compared += 1
    counts = (compared, forced, above, groups)
    assert compared > 1000 and forced > 100 and above > 10 and 10 < groups < forced, counts


def test_the_models_rule_10_is_the_searchs() -> None:
    # With thirteen ranks and seven columns, the links the model's rule 10 forces are those
    # the search's test (``Search.reversible_link``) lets it force, position by position in
    # random Wasp games before the deal under when-stuck; the search forces one of them,
    # and where none is forced but one waits for its crossing, it tries one such pair.
    full = Universe(suits=4, ranks=13)
    forced = crossed = compared = 0
    for board, _ in _random_wasp_games(160, 11, until_the_deal=True):
        state = _state(board)
        links = _links(state, _reversible)
        assert set(reversible_links(full, _model_state(board))) == _children_of(board, links), board
        first = state.first_link(False, False, True)
        assert (first is None) == (not links), board
        if first is not None:
            assert Move(*first) in links
        else:
            # Where a link waits only for its crossing, the search tries the two alone.
            pairs = {frozenset(pair) for pair in crossed_links(full, _model_state(board))}
            every = state.moves()
            kept = state.reversible_choice(every)
            tried = _children_of(board, [Move(*m) for m in kept])
            if pairs:
                assert tried in pairs, board
                crossed += 1
            else:
                assert kept == every, board
        forced += len(links)
        compared += 1
    assert compared > 1000 and forced > 100 and crossed > 10, (compared, forced, crossed)
