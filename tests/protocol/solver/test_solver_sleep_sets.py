"""The solver's rule 6: the moves it keeps asleep commute with the move played, and a
position revisited tries only the moves awakened since.
"""

from __future__ import annotations

import random

import pytest

from protocol.game import DEAL, Board, Move, board_from_text, card_from_text
from protocol.solver import canonical_key
from protocol.solver.search import ALL_RULES, EARLY, _Run
from protocol.solver.solver import _state


def _moves_by_bit(board: Board) -> dict[int, Move]:
    """The solver's moves of ``board`` other than the deal, by their names in rule 6's sleep
    sets (the leading card; in Wasp, a move into an empty column is ``52 + card``)."""
    state = _state(board)
    return {state.bit(m[0], m[2]): Move(*m) for m in state.moves() if m[0] >= 0}


def _key_after(board: Board, *moves: Move) -> bytes:
    for move in moves:
        board.push(move)
    key = canonical_key(board)
    for _ in moves:
        board.pop()
    return key


def test_the_moves_rule_6_keeps_asleep_are_exactly_those_that_commute() -> None:
    """Played in either order, two moves reach the same position exactly when rule 6 says so.

    The one exception it allows: a move that collects the run of a King whose move it keeps
    asleep (the King is gone afterwards, and playing it first changes nothing). In Wasp a
    move is named by its card and its kind (a link, or a move into an empty column); a card's
    two moves never commute (after its link it lies on its successor and stays there). Rule 6
    applies after the deal only. With
    rule 8 a move is one of the solver's only while its card's successor tops no other
    column, so in Wasp two moves commute only if neither changes that for the other: the
    cases where that alone keeps a move awake are counted.
    """
    rng = random.Random(6)
    names = ("commute", "depend", "kings", "wasp link and empty", "wasp empty", "rule 8")
    seen = dict.fromkeys(names, 0)
    cases = [(variant, "any-time") for variant in ("scorpion", "scorpion-ii", "three-blind-mice", "wasp")]
    for variant, rule in [*cases, ("wasp", "when-stuck")]:
        for _ in range(10):
            board = Board.new(variant, rng.randrange(32001, 10**20), rule)
            if board.stock:
                board.push(DEAL)
            for _ in range(80):
                moves = _moves_by_bit(board)
                if not moves:
                    break
                state = _state(board)
                plain = _state(board, rules=ALL_RULES - {"direct"})
                for x, first in moves.items():
                    board.push(first)
                    after_x = _moves_by_bit(board)
                    board.pop()
                    for y, second in moves.items():
                        if y == x:
                            continue
                        kept = bool(state.commuting(1 << y, first.card, first.target) >> y & 1)
                        board.push(second)
                        x_after_y = _moves_by_bit(board).get(x)
                        board.pop()
                        y_after_x = after_x.get(y)
                        commute = (
                            x_after_y is not None
                            and y_after_x is not None
                            and _key_after(board, first, y_after_x) == _key_after(board, second, x_after_y)
                        )
                        absorbed = (
                            not commute
                            and first.card != second.card
                            and y_after_x is None
                            and x_after_y is not None
                            and _key_after(board, first) == _key_after(board, second, x_after_y)
                        )
                        assert kept == (commute or absorbed), (board, first, second)
                        seen["rule 8"] += not kept and bool(plain.commuting(1 << y, first.card, first.target))
                        seen["commute" if commute else "depend"] += not absorbed
                        if variant != "wasp":
                            seen["kings"] += x % 13 == 12 and y % 13 == 12
                        else:
                            kinds = (x >= 52) + (y >= 52)
                            seen["wasp empty"] += kinds == 2
                            seen["wasp link and empty"] += kinds == 1 and first.card != second.card
                board.push(rng.choice(list(moves.values())))
    assert all(seen.values()), seen


def _entered_after_the_deal(variant: str, moves: int) -> tuple[_Run, list[tuple[int, int, int]]]:
    """A search run at a position after the deal with at least ``moves`` moves and no forced
    link (entered once, then its table cleared), and those moves."""
    for number in range(1, 200):
        board = Board.new(variant, number, "any-time")
        board.play(DEAL)
        run = _Run(_state(board))
        entered = run.enter(False, -1, 0, False)
        if entered is not None and not run.line() and len(entered[0]) >= moves:
            run.seen.clear()
            return run, entered[0]
    raise AssertionError(f"no position with {moves} moves and no forced link after the deal")


@pytest.mark.parametrize("variant", ["scorpion", "wasp"])
def test_rule_6_revisit_tries_the_awakened_moves_and_keeps_the_moves_asleep_at_both(variant: str) -> None:
    # Arrive with {m0, m1} asleep, then with {m1, m2}, {m1}, nothing, and nothing again.
    run, legal = _entered_after_the_deal(variant, 3)
    state = run.state
    m0, m1, m2 = (1 << state.bit(m[0], m[2]) for m in legal[:3])
    key = state.key()
    moves, sleep = run.enter(False, -1, m0 | m1, False) or ([], -1)
    assert (len(moves), sleep, run.seen[key]) == (len(legal) - 2, m0 | m1, m0 | m1)
    # Awake now: m0 alone is tried; m1, asleep at both arrivals, is the set from now on.
    moves, sleep = run.enter(False, -1, m1 | m2, False) or ([], -1)
    assert (moves, sleep, run.seen[key]) == ([legal[0]], m1, m1)
    assert run.enter(False, -1, m1, False) is None
    assert run.enter(False, -1, m1 | m0, False) is None
    moves, sleep = run.enter(False, -1, 0, False) or ([], -1)
    assert (moves, sleep, run.seen[key]) == ([legal[1]], 0, 0)
    assert run.enter(False, -1, 0, False) is None
    assert run.line() == []


@pytest.mark.parametrize("variant", ["scorpion", "wasp"])
def test_a_new_position_with_every_move_asleep_is_not_stored(variant: str) -> None:
    # An arrival with every move asleep tries nothing and leaves no entry; the next
    # arrival, with the first move awake, is then a first arrival: it tries that move and
    # stores its own set.
    run, legal = _entered_after_the_deal(variant, 2)
    state = run.state
    bits = [1 << state.bit(m[0], m[2]) for m in legal]
    every = sum(bits) | 1 << 200  # and a move that is not there
    key = state.key()
    assert run.enter(False, -1, every, False) is None
    assert key not in run.seen
    moves, sleep = run.enter(False, -1, every & ~bits[0], False) or ([], -1)
    assert (moves, sleep, run.seen[key]) == ([legal[0]], every & ~bits[0], every & ~bits[0])
    # Stored now: an arrival with every move asleep stops, and one with more awake than
    # the stored set tries just those (rule 6's revisit).
    assert run.enter(False, -1, every, False) is None
    moves, sleep = run.enter(False, -1, every & ~bits[0] & ~bits[1], False) or ([], -1)
    assert (moves, sleep) == ([legal[1]], every & ~bits[0] & ~bits[1])
    assert run.line() == []


def test_rule_6_keeps_a_king_asleep_when_a_link_collects_its_run() -> None:
    # The Ace of spades completes the run the King of spades leads: after the link the
    # King is gone, and moving it into an empty column first changes nothing. The other
    # way round they do not commute (the link after the King's move is a different move),
    # so the King's child keeps the link awake.
    board = board_from_text(
        "scorpion any-time 5CKSQSJSTS9S8S7S6S5S4S3S2S/AS/-/KCQCJCTC9C8C7C6C/4C3C2CAC/-/- - DH"
    )
    ace, king = Move(39, 1, 0), Move(51, 0, 2)
    assert bool(_state(board).commuting(1 << 51, 39, 0) >> 51 & 1)
    assert not _state(board).commuting(1 << 39, 51, 2) >> 39 & 1
    assert _state(board).commuting(1 << 3, 51, 2) >> 3 & 1  # the four of clubs collects nothing
    board.push(ace)
    assert 51 not in _moves_by_bit(board) and len(board.foundations) == 3
    board.pop()
    assert _key_after(board, ace) == _key_after(board, king, Move(39, 1, 2))


def test_rule_6_in_wasp_before_the_deal_tells_columns_1_to_3_from_the_rest() -> None:
    # In the first look for a win (EARLY) Wasp keeps sleep sets before the deal under
    # when-stuck. Column 1 (the deal lands on it) and column 5 are both empty: two moves
    # into column 5 do not commute (after one,
    # the other can only go to column 1, a different move), a move into column 1 and one
    # into column 5 do, and two into column 1 do not. (Neither five uncovers the other's
    # successor, which would change what rule 8 allows the other.)
    board = board_from_text(
        "wasp when-stuck -/KSQSJSTS9S8S7S/KHQHJHTH9H8H7H/4S5H/-/4H5S/6S6H3H2HAH 3s2sas DC"
    )
    state = _state(board, rules=ALL_RULES | {EARLY})
    five_h, five_s = card_from_text("5H"), card_from_text("5S")
    assert {state.bit(five_h, 4), state.bit(five_s, 4), state.bit(five_s, 0)} <= set(_moves_by_bit(board))
    assert not state.commuting(1 << state.bit(five_s, 4), five_h, 4)
    assert state.commuting(1 << state.bit(five_s, 0), five_h, 4)
    assert state.commuting(1 << state.bit(five_s, 4), five_h, 0)
    assert not state.commuting(1 << state.bit(five_s, 0), five_h, 0)


def test_rule_6_with_rule_8_keeps_awake_a_move_whose_successor_a_collection_uncovers() -> None:
    # The three of clubs lies on the Ace of a complete spades run lying on the six of hearts:
    # its link onto the four collects the run and leaves the six on top, after which rule 8
    # leaves out the five of hearts' move into the empty column (its link is legal then).
    # So for the solver the two do not commute either way round, though without rule 8
    # they do. (The three's own move into the empty column is left out: its link is legal.)
    board = board_from_text(
        "wasp any-time 6HKSQSJSTS9S8S7S6S5S4S3S2SAS3C/4C/7H5H/-/KHQHJHTH9H8H/"
        "KCQCJCTC9C8C7C6C5C/4H3H2HAH2CAC - D"
    )
    state, plain = _state(board), _state(board, rules=ALL_RULES - {"direct"})
    five_h, three_c = card_from_text("5H"), card_from_text("3C")
    empty = state.bit(five_h, 3)
    assert {empty, three_c} <= set(_moves_by_bit(board))
    assert state.bit(three_c, 3) not in _moves_by_bit(board)
    assert not state.commuting(1 << empty, three_c, 1) >> empty & 1
    assert plain.commuting(1 << empty, three_c, 1) >> empty & 1
    assert not state.commuting(1 << three_c, five_h, 3) >> three_c & 1
    assert plain.commuting(1 << three_c, five_h, 3) >> three_c & 1
    board.push(Move(three_c, 0, 1))
    assert board.columns[0] == [card_from_text("6H")] and empty not in _moves_by_bit(board)
