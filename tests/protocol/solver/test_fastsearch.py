"""The search in C (``protocol/solver/_fastsearch.c``) against the search it implements.

``protocol.solver.search`` defines the search: its rules, their order, what the table keeps.
The C search must do exactly the same work from any position under any set of rules:
the same outcome, the same node count, the same winning line and the same number of
positions kept in the table. These tests compare the two on deals and on positions
part-way through random games, with every rule, with none, and with random subsets; and
check that the C search refuses a position it cannot hold instead of reading or writing
outside its arrays.
"""

from __future__ import annotations

import os
import random
import signal
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from protocol.game import Board, board_from_text, board_to_text
from protocol.solver import solver
from protocol.solver.search import ALL_RULES, EARLY, MEMORY, NATURAL, UNDECIDED, search
from protocol.solver.solver import _state, run_search

VARIANTS = ("scorpion", "scorpion-ii", "wasp", "three-blind-mice")


def _fast() -> Any:
    fast = vars(solver)["_fastsearch"]
    assert fast is not None, (
        "protocol.solver._fastsearch is missing: the package was installed without building it (setup.py)"
    )
    return fast


def test_the_c_search_is_built() -> None:
    if os.environ.get("SCORPION_PURE_PYTHON"):
        assert vars(solver)["_fastsearch"] is None
    else:
        _fast()


def _both(board: Board, rules: frozenset[str], nodes: int) -> tuple[object, object]:
    python = search(_state(board, rules=rules), nodes, None, None)
    c = run_search(_state(board, rules=rules), nodes)
    return python, c


def _rule_sets(rng: random.Random) -> Iterator[frozenset[str]]:
    yield ALL_RULES
    yield ALL_RULES | {EARLY}  # the solver's first look for a win in Wasp under when-stuck
    yield ALL_RULES | {EARLY, NATURAL}  # the same with links onto natural runs forced too
    yield frozenset()
    for _ in range(2):
        yield frozenset(name for name in sorted(ALL_RULES) if rng.random() < 0.5)


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_c_and_the_python_search_do_the_same_work_on_deals(variant: str) -> None:
    _fast()
    rng = random.Random(f"fast {variant}")
    outcomes: set[int] = set()
    nodes = 0
    # Wasp's deals are mostly decided in a few hundred nodes (rule 10 made its searches
    # before the deal under when-stuck smaller still): more of them, so that some run out.
    for index in range(40 if variant == "wasp" else 24):
        rule = ("any-time", "when-stuck")[index % 2]
        board = Board.new(variant, rng.randrange(32001, 10**20), rule)
        for rules in _rule_sets(rng):
            python, c = _both(board, rules, 30_000)
            assert c == python, (variant, rule, board_to_text(board), sorted(rules))
            outcomes.add(python[0])  # type: ignore[index]
            nodes += python[2]  # type: ignore[index]
    # Not a comparison of empty searches: both won, lost and ran out, with real work (most
    # Wasp deals are won within a few hundred nodes).
    assert outcomes == {0, 1, 2}, outcomes
    assert nodes > (150_000 if variant == "wasp" else 500_000), nodes


def test_the_c_and_the_python_search_do_the_same_work_where_wasp_keeps_sleep_sets() -> None:
    # Rule 6 with rule 8 in Wasp: which moves stay asleep depends on where each card's
    # successor lies, met in earnest only on deals searched beyond their first few hundred
    # nodes; forty deals with every rule, up to 100,000 nodes each.
    _fast()
    rng = random.Random("rule 8 wasp")
    nodes = 0
    outcomes: set[int] = set()
    for index in range(40):
        board = Board.new("wasp", rng.randrange(32001, 10**20), ("any-time", "when-stuck")[index % 2])
        python, c = _both(board, ALL_RULES, 100_000)
        assert c == python, board_to_text(board)
        outcomes.add(python[0])  # type: ignore[index]
        nodes += python[2]  # type: ignore[index]
    assert outcomes == {0, 1, 2} and nodes > 200_000, (outcomes, nodes)


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_c_and_the_python_search_do_the_same_work_part_way_through_games(variant: str) -> None:
    _fast()
    rng = random.Random(f"fast play {variant}")
    checked = 0
    for _ in range(12):
        board = Board.new(variant, rng.randrange(32001, 10**20), rng.choice(("any-time", "when-stuck")))
        for _ in range(rng.randrange(5, 60)):
            legal = board.legal_moves()
            if not legal:
                break
            board.play(rng.choice(legal))
            if rng.random() < 0.3:
                python, c = _both(board, ALL_RULES, 5_000)
                assert c == python, (variant, board_to_text(board))
                checked += 1
    assert checked >= 30


def test_the_c_search_keeps_its_table_hash_in_step_with_the_position() -> None:
    # The C table hashes a position as a sum of one word per fact (each card with the card
    # it lies on, each face-down card, the bottoms of columns that keep their places, the
    # reserve cells, the reserve still to come), kept by every move and undo instead of
    # computed afresh. With check_hashes on, every position entered compares the two. A
    # hash out of step would only cost revisits (the key decides equality), which the
    # node-count comparisons above see only where a revisit follows.
    fast = _fast()
    rng = random.Random("kept hash")
    boards = [
        # the Ace of spades completes the run lying on a face-down five, which turns up
        board_from_text(
            "scorpion any-time 5cKSQSJSTS9S8S7S6S5S4S3S2S/AS/-/KCQCJCTC9C8C7C6C/4C3C2CAC/-/- - DH"
        ),
        board_from_text("wasp when-stuck 5cKSQSJSTS9S8S7S6S5S4S3S2S/AS/-/KCQCJCTC9C8C7C6C/AC/-/- 4c3c2c DH"),
    ]
    for variant in VARIANTS:
        for index in range(6):
            board = Board.new(variant, rng.randrange(32001, 10**20), ("any-time", "when-stuck")[index % 2])
            boards.append(board.copy())
            for _ in range(rng.randrange(10, 40)):
                legal = board.legal_moves()
                if not legal:
                    break
                board.play(rng.choice(legal))
            boards.append(board)
    fast.check_hashes(True)
    try:
        nodes = 0
        for board in boards:
            for rules in (ALL_RULES, frozenset(), frozenset({"symmetry"})):
                python, c = _both(board, rules, 20_000)
                assert c == python, (board_to_text(board), sorted(rules))
                nodes += python[2]  # type: ignore[index]
    finally:
        fast.check_hashes(False)
    assert nodes > 300_000, nodes


def test_the_c_search_reads_the_clock_as_the_python_search_does() -> None:
    _fast()
    board = Board.new("three-blind-mice", 30998652496660269494)

    def ticking() -> Callable[[], float]:
        # A clock that moves one second per reading: both searches read it at the start
        # and every 1,024 nodes, so both stop at the same node.
        now = [0.0]

        def clock() -> float:
            now[0] += 1.0
            return now[0]

        return clock

    python = search(_state(board), 10**9, 5.0, ticking())
    c = run_search(_state(board), 10**9, 5.0, ticking())
    assert python[0] == UNDECIDED
    assert c == python
    assert 5 * 1024 <= python[2] <= 10 * 1024  # forced links may step over a reading

    def broken() -> float:
        raise RuntimeError("clock failed")

    with pytest.raises(RuntimeError, match="clock failed"):
        run_search(_state(board), 10**9, 5.0, broken)


def test_the_c_search_refuses_a_position_it_cannot_hold() -> None:
    fast = _fast()
    run = fast.search
    board = board_from_text(
        "scorpion any-time 5CKSQSJSTS9S8S7S6S5S4S3S2S/AS/-/KCQCJCTC9C8C7C6C/4C3C2CAC/-/- - DH"
    )
    state = _state(board)

    def call(
        cols: list[list[int]], down: list[int], stock: list[int], cells: list[int], found: int = 2
    ) -> None:
        run(cols, down, stock, cells, found, False, True, 255, 1000, 0.0, False, None, 0)

    cols = [list(col) for col in state.cols]
    with pytest.raises(ValueError, match="repeated card"):
        call([*cols[:-1], [cols[0][0]]], state.down, state.stock, state.cells)
    with pytest.raises(ValueError, match="bad or repeated card 52"):
        call([*cols[:-1], [52]], state.down, state.stock, state.cells)
    with pytest.raises(ValueError, match="bad or repeated card 300"):  # not read as 300 - 256
        call([*cols[:-1], [300]], state.down, state.stock, state.cells)
    with pytest.raises(ValueError, match="stock: bad or repeated card 300"):
        call(cols, state.down, [300], state.cells)
    with pytest.raises(ValueError, match="face-down count"):
        call(cols, [0, 1, *state.down[2:]], state.stock, state.cells)  # column 2: its one card face down
    with pytest.raises(ValueError, match="6 face-down counts for 7 columns"):
        call(cols, state.down[:-1], state.stock, state.cells)
    with pytest.raises(ValueError, match="between 1 and 16 columns"):
        call([[]] * 17, [0] * 17, [], [])
    with pytest.raises(ValueError, match="runs collected"):
        call(cols, state.down, state.stock, state.cells, found=5)
    with pytest.raises(TypeError):
        call([["KS"]], [0], [], [])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="memory budget is a number of bytes"):
        run(cols, state.down, state.stock, state.cells, 2, False, True, 255, 1000, 0.0, False, None, -1)
    # And the position itself, given whole, is searched.
    every = 255  # the eight rules' bits
    position = (state.cols, state.down, state.stock, state.cells, state.found)
    python = search(_state(board), 1000, None, None)
    assert run(*position, False, True, every, 1000, 0.0, False, None, 0) == python


# A lost Wasp deal whose search keeps millions of positions (lost after 144 million nodes).
HARD_WASP = 15925648616820334506


@pytest.mark.parametrize("megabytes", [2, 8])
def test_both_searches_stop_where_the_table_would_outgrow_the_memory_budget(megabytes: int) -> None:
    _fast()
    board = Board.new("wasp", HARD_WASP, "any-time")
    memory = megabytes << 20
    c = run_search(_state(board), 10**8, memory=memory)
    python = search(_state(board), 10**8, None, None, memory)
    for outcome, line, nodes, kept in (c, python):
        assert outcome == MEMORY and line == []
        assert nodes < 10**8
        # Every position kept takes at least its slots' 16 bytes (the table at most half
        # full) and an entry of 8: the kept positions fit in the budget; and the search
        # did not stop long before it had to (keys here are 30-60 bytes).
        assert kept * 24 <= memory
        assert kept * 200 >= memory - (1 << 19)
    # The Python search only estimates the C table's bytes, so they stop at nearby nodes;
    # without the bound the same search goes on past where it stopped.
    assert abs(python[2] - c[2]) <= c[2] // 2
    assert run_search(_state(board), c[2])[0] == UNDECIDED  # the same nodes without the bound
    with pytest.raises(ValueError, match="above 0"):
        run_search(_state(board), 1000, memory=0)


class _Stop(Exception):
    pass


def test_a_signal_stops_a_long_c_search() -> None:
    _fast()
    # A hard lost deal: some 30 million nodes, far more than the timer leaves it.
    board = Board.new("three-blind-mice", 21739719910239165651)

    def stop(signum: int, frame: object) -> None:
        raise _Stop

    previous = signal.signal(signal.SIGALRM, stop)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.3)
        with pytest.raises(_Stop):
            run_search(_state(board), 40_000_000)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
