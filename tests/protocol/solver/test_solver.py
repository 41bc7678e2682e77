"""The full-information solver: verdicts, winning lines, keys, the internal position and the
helpers built on the search (is_winnable, first_losing_move, the study's statistics).

The pruning rules are tested in ``test_solver_sleep_sets.py`` (rule 6),
``test_solver_forced_links.py`` (rules 9 to 11) and ``test_solver_pruning.py`` (rules 5, 7
and 8, Wasp's first look), and checked against the search without them in
``test_solver_crosschecks.py``; the budgets in ``test_solver_budgets.py``, the commands in
``test_solver_cli.py``.
"""

from __future__ import annotations

import random

import pytest

from protocol.game import DEAL, Board, Move, board_from_text
from protocol.solver import (
    Verdict,
    canonical_key,
    first_losing_move,
    is_winnable,
    percentile,
    pick_winnable,
    solve,
    solve_deal,
    wilson_interval,
    winning_move,
)
from protocol.solver.solver import _state
from tests.protocol.solver.positions import BURIED_KING, BURIED_KING_WITH_MOVES

# Small deal numbers with a known verdict (found by this solver, each checked below).
WINNABLE = {
    ("scorpion", "any-time"): 5,
    ("scorpion", "when-stuck"): 5,
    ("scorpion-ii", "any-time"): 1,
    ("scorpion-ii", "when-stuck"): 1,
    ("wasp", "any-time"): 1,
    ("wasp", "when-stuck"): 1,
    ("three-blind-mice", "any-time"): 3,
    ("three-blind-mice", "when-stuck"): 3,
}
UNWINNABLE = {("scorpion", "when-stuck"): 1, ("scorpion", "any-time"): 8, ("wasp", "when-stuck"): 8}


def replay(board: Board, moves: tuple[Move, ...]) -> Board:
    """Play ``moves`` on a copy of ``board`` through the engine's checked ``play``."""
    copy = board.copy(stack=False)
    for move in moves:
        copy.play(move)
    return copy


@pytest.mark.parametrize(("variant", "rule"), sorted(WINNABLE))
def test_a_known_winnable_deal_yields_a_line_that_replays_to_a_win(variant: str, rule: str) -> None:
    board = Board.new(variant, WINNABLE[variant, rule], rule)
    solution = solve(board, 200_000)
    assert solution.verdict is Verdict.WINNABLE
    assert solution.moves
    assert replay(board, solution.moves).is_won()


def test_every_winning_line_found_on_random_deals_replays_to_a_win() -> None:
    rng = random.Random(20)
    wins = 0
    for index in range(120):
        variant = ("scorpion", "scorpion-ii", "wasp", "three-blind-mice")[index % 4]
        rule = ("any-time", "when-stuck")[index // 4 % 2]
        board = Board.new(variant, rng.randrange(32001, 10**20), rule)
        solution = solve(board, 20_000)
        if solution.verdict is Verdict.WINNABLE:
            wins += 1
            assert replay(board, solution.moves).is_won(), (variant, rule)
    assert wins >= 20


@pytest.mark.parametrize(("variant", "rule"), sorted(UNWINNABLE))
def test_a_known_unwinnable_deal_is_proved_so_with_and_without_pruning(variant: str, rule: str) -> None:
    number = UNWINNABLE[variant, rule]
    assert solve_deal(variant, number, rule, 1_000_000).verdict is Verdict.UNWINNABLE
    assert solve_deal(variant, number, rule, 2_000_000, prune=False).verdict is Verdict.UNWINNABLE


def test_a_king_buried_under_its_own_suit_with_no_moves_is_proved_unwinnable() -> None:
    board = board_from_text(BURIED_KING)
    assert not board.legal_moves()
    for prune in (True, False):
        solution = solve(board, 1000, prune=prune)
        assert solution.verdict is Verdict.UNWINNABLE
        assert solution.moves == ()


def test_a_buried_king_is_lost_even_while_other_moves_remain() -> None:
    board = board_from_text(BURIED_KING_WITH_MOVES)
    assert board.legal_moves()
    assert solve(board, 1000).verdict is Verdict.UNWINNABLE
    assert solve(board, 200_000, prune=False).verdict is Verdict.UNWINNABLE


def test_a_won_position_is_winnable_with_an_empty_line() -> None:
    board = board_from_text("scorpion any-time -/-/-/-/-/-/- - CDHS")
    solution = solve(board, 10)
    assert solution.verdict is Verdict.WINNABLE
    assert solution.moves == ()


def test_after_the_deal_permuted_columns_give_the_same_key() -> None:
    board = Board.new("scorpion", 5, "any-time")
    board.play(DEAL)
    permuted = Board(
        board.variant,
        [board.columns[i] for i in (6, 2, 0, 5, 1, 3, 4)],
        [board.down[i] for i in (6, 2, 0, 5, 1, 3, 4)],
        rule=board.rule,
    )
    assert canonical_key(permuted) == canonical_key(board)
    assert permuted.key() != board.key()


def test_before_the_deal_columns_one_to_three_are_distinct_and_the_rest_interchangeable() -> None:
    board = Board.new("scorpion", 5, "any-time")

    def swapped(a: int, b: int) -> Board:
        order = list(range(7))
        order[a], order[b] = order[b], order[a]
        return Board(
            board.variant,
            [board.columns[i] for i in order],
            [board.down[i] for i in order],
            board.stock,
            rule=board.rule,
        )

    assert canonical_key(swapped(4, 6)) == canonical_key(board)
    assert canonical_key(swapped(0, 1)) != canonical_key(board)
    assert canonical_key(swapped(2, 5)) != canonical_key(board)


def test_face_down_counts_and_reserve_cells_are_part_of_the_key() -> None:
    board = Board.new("scorpion", 5, "any-time")
    board.play(DEAL)
    more_hidden = Board(board.variant, board.columns, [board.down[0] + 1, *board.down[1:]], rule=board.rule)
    assert canonical_key(more_hidden) != canonical_key(board)
    mice = Board.new("three-blind-mice", 3)
    swapped_cells = Board(mice.variant, mice.columns, mice.down, cells=mice.cells[::-1])
    assert canonical_key(swapped_cells) == canonical_key(mice)
    emptied = mice.copy(stack=False)
    moves = [move for move in mice.legal_moves() if move.source >= 100]
    if moves:
        emptied.play(moves[0])
        assert canonical_key(emptied) != canonical_key(mice)


def test_the_internal_position_follows_the_engine_move_for_move() -> None:
    rng = random.Random(5)
    for variant in ("scorpion", "scorpion-ii", "wasp", "three-blind-mice"):
        for rule in ("any-time", "when-stuck"):
            for _ in range(12):
                board = Board.new(variant, rng.randrange(1, 10**20), rule)
                state = _state(board, prune=False)
                # The same moves on a position with every rule: its key sorts the columns.
                canonical = _state(board)
                undos = []
                for _ in range(150):
                    ours = sorted(DEAL if m[0] < 0 else Move(*m) for m in state.moves(every_empty=True))
                    assert ours == sorted(board.legal_moves())
                    assert state.cols == board.columns
                    assert all(state.row[card] == row for col in state.cols for row, card in enumerate(col))
                    assert state.down == board.down
                    assert state.stock == board.stock
                    assert state.cells == board.cells
                    assert state.found == len(board.foundations)
                    # The key, kept column by column as moves are made and taken back,
                    # is the key of the same position set up afresh.
                    assert state.key() == _state(board, prune=False).key()
                    assert canonical.key() == _state(board).key()
                    if not ours or (undos and rng.random() < 0.15):
                        if not undos:
                            break
                        board.pop()
                        undo, kept = undos.pop()
                        state.pop(undo)
                        canonical.pop(kept)
                        continue
                    move = rng.choice(ours)
                    board.push(move)
                    undos.append((state.push(*move), canonical.push(*move)))


def test_is_winnable_and_winning_move_agree_with_solve() -> None:
    board = Board.new("scorpion", 5, "any-time")
    assert is_winnable(board, 100_000) is True
    move = winning_move(board, 100_000)
    assert move is not None and board.is_legal(move)
    board.play(move)
    assert is_winnable(board, 100_000) is True
    lost = Board.new("scorpion", 1, "when-stuck")
    assert is_winnable(lost, 100_000) is False
    assert winning_move(lost, 100_000) is None
    assert is_winnable(Board.new("scorpion", 8, "any-time"), 3) is None


def test_first_losing_move_finds_where_the_win_slipped_away() -> None:
    board = Board.new("scorpion", 5, "any-time")
    rng = random.Random(3)
    moves: list[Move] = []
    # Wander at random until the position is lost.
    while is_winnable(board, 100_000):
        legal = board.legal_moves()
        assert legal
        move = rng.choice(legal)
        board.play(move)
        moves.append(move)
    index = first_losing_move("scorpion", 5, moves, "any-time", 100_000)
    assert index is not None
    replayed = Board.new("scorpion", 5, "any-time")
    replayed.replay(moves[:index])
    assert is_winnable(replayed, 100_000) is True
    replayed.play(moves[index])
    assert is_winnable(replayed, 100_000) is False


def test_first_losing_move_is_none_when_never_winnable_or_still_winnable() -> None:
    assert first_losing_move("scorpion", 1, [], "when-stuck", 100_000) is None
    line = solve_deal("scorpion", 5, "any-time", 100_000).moves
    assert first_losing_move("scorpion", 5, line[:10], "any-time", 100_000) is None


def test_pick_winnable_returns_the_first_candidate_proved_winnable() -> None:
    assert pick_winnable("scorpion", [1, 5, 7], "when-stuck", 100_000) == 5
    assert pick_winnable("scorpion", [1], "when-stuck", 100_000) is None


def test_the_wilson_interval_matches_known_values() -> None:
    low, high = wilson_interval(5, 10)
    assert low == pytest.approx(0.2366, abs=1e-4)
    assert high == pytest.approx(0.7634, abs=1e-4)
    low, high = wilson_interval(0, 10)
    assert low == 0.0
    assert high == pytest.approx(0.2775, abs=1e-4)
    low, high = wilson_interval(128, 1000)
    assert low == pytest.approx(0.1087, abs=1e-4)
    assert high == pytest.approx(0.1501, abs=1e-4)
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_percentile_uses_the_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 0.5) == 50.0
    assert percentile(values, 0.99) == 99.0
    assert percentile(values, 1.0) == 100.0
