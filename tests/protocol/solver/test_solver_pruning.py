"""The solver's pruning rules 7, 8 and 5, Wasp's first look for a win under when-stuck, and
the names of the rules.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from protocol.game import CELL_BASE, DEAL, Board, Move, board_from_text, card_from_text
from protocol.solver import Verdict, run_search, solve
from protocol.solver.search import ALL_RULES, EARLY, LOST, NATURAL, UNDECIDED, WON
from protocol.solver.solver import _state


def _settled(board: Board, move: Move) -> bool:
    """Whether ``move`` takes a card off its face-up successor into an empty column (a King
    has no successor: the next suit's Ace under it does not count)."""
    col = board.columns[move.source]
    row = col.index(move.card)
    return (
        move.card % 13 != 12
        and not board.columns[move.target]
        and row > board.down[move.source]
        and col[row - 1] == move.card + 1
    )


def _with_and_without(
    rule_name: str, seed: int
) -> Iterator[tuple[Board, list[Move], set[Move], set[Move], bool]]:
    """Positions of random Wasp games (both reserve rules), each with its legal moves, the
    solver's moves with every rule and without ``rule_name``, and whether the rule waits
    for the deal there (rules 7 and 8 do under both reserve rules: under the any-time rule
    the deal may come between a card's leaving and its return, and under when-stuck such a
    move may be what makes the position stuck, and decides where the reserve lands)."""
    rng = random.Random(seed)
    without = ALL_RULES - {rule_name}
    for _ in range(40):
        board = Board.new("wasp", rng.randrange(32001, 10**20), rng.choice(("any-time", "when-stuck")))
        for _ in range(120):
            legal = board.legal_moves()
            if not legal:
                break
            ours = {DEAL if m[0] < 0 else Move(*m) for m in _state(board).moves(every_empty=True)}
            plain = _state(board, rules=without).moves(every_empty=True)
            theirs = {DEAL if m[0] < 0 else Move(*m) for m in plain}
            waits = bool(board.stock)
            yield board, legal, ours, theirs, waits
            # Deal late, so that positions before the deal are met under the any-time rule too.
            others = [move for move in legal if move != DEAL]
            board.push(rng.choice(others if others and rng.random() < 0.9 else legal))


def test_rule_7_leaves_out_only_wasp_moves_of_settled_cards_into_empty_columns() -> None:
    seen = {"left out": 0, "kept before the deal": 0, "kept": 0}
    for board, legal, ours, theirs, waits in _with_and_without("settled", 7):
        assert ours <= theirs
        for move in theirs - ours:
            # Only a settled card's move into an empty column.
            assert move in legal and not waits and _settled(board, move), (board, move)
            seen["left out"] += 1
        for move in ours:
            if move != DEAL and _settled(board, move):
                assert waits, (board, move)
                seen["kept before the deal"] += 1
            elif move != DEAL and not board.columns[move.target]:
                seen["kept"] += 1
        assert (DEAL in ours) == (DEAL in legal), board
    assert all(seen.values()), seen


def test_wasp_under_when_stuck_looks_for_a_win_with_rules_7_and_8_before_the_deal_first() -> None:
    # The first look may leave out moves that a win needs before the deal, so it only ever
    # answers with a win, which replays in the engine; a deal it cannot win is searched
    # again by the search proper (here the position of the next test: every move is idle,
    # so the first look finds nothing to do at all).
    assert EARLY not in ALL_RULES
    with pytest.raises(ValueError, match="unknown pruning rules: early"):
        solve(Board.new("wasp", 1, "when-stuck"), 100, rules=ALL_RULES | {EARLY})
    # Three deals the search proper leaves unknown at 3 million nodes, won by the first look.
    for number in (38088546664185755953, 95280729805270719229, 42301322891852532794):
        board = Board.new("wasp", number, "when-stuck")
        assert run_search(_state(board), 3_000_000)[0] == UNDECIDED
        solution = solve(board, 3_000_000)
        assert solution.verdict is Verdict.WINNABLE
        replay = board.copy()
        for move in solution.moves:
            replay.play(move)
        assert replay.is_won()
    stuck = board_from_text(
        "wasp when-stuck KHQHJHTH9H8H7H6H5H/KDQDJDTD9D8D7D/3H2HAH/5D4D3D2D/-/-/- 4h6dad SC"
    )
    first = run_search(_state(stuck, rules=ALL_RULES | {EARLY}), 1_000)
    assert first[0] == 1 and first[2] == 0  # "lost" at once: no move, and no deal
    solution = solve(stuck, 100_000)
    assert solution.verdict is Verdict.UNWINNABLE and solution.nodes > 0


def test_wasp_first_look_forces_links_onto_natural_runs_then_looks_again_without() -> None:
    # NATURAL (with EARLY only; not a pruning rule) makes rule 2 force a link onto a column
    # whose top three cards or more, face up, read down by one in a suit, whatever lies
    # under them: here 7H onto 8H, on 9H on TH over a face-down card (not rooted, and 7H
    # carries no complete tail), so nothing is forced without it.
    columns = "kdTH9H8H/3D7H/QH6H5H4H3H/QDJD/JH2D/KH4D5D/6D7D8D9DTD"
    board = board_from_text(f"wasp when-stuck {columns} ad2hah CS")
    seven_h = card_from_text("7H")
    assert _state(board, rules=ALL_RULES | {EARLY}).first_link(True, True) is None
    assert _state(board, rules=ALL_RULES | {EARLY, NATURAL}).first_link(True, True) == (seven_h, 1, 0)
    assert _state(board, rules=ALL_RULES | {NATURAL}).first_link(True, True) is None  # EARLY's only
    # Two face-up cards are not enough (TH face down here).
    two = board_from_text(f"wasp when-stuck {columns.replace('TH', 'th')} ad2hah CS")
    assert _state(two, rules=ALL_RULES | {EARLY, NATURAL}).first_link(True, True) is None
    with pytest.raises(ValueError, match="unknown pruning rules: natural"):
        solve(board, 100, rules=ALL_RULES | {NATURAL})
    # A deal the look with natural links wins at once and the look without does not within
    # 50,000 nodes; and one whose natural-link space holds no win (exhausted in a few dozen
    # nodes), where the second look, without them, wins.
    cases = ((72139650641708660083, WON, 50_000), (15201275098402649445, LOST, 100_000))
    both = {EARLY, NATURAL}
    for number, natural, nodes in cases:
        board = Board.new("wasp", number, "when-stuck")
        looks = [run_search(_state(board, rules=ALL_RULES | more), nodes)[0] for more in (both, {EARLY})]
        assert looks == [natural, UNDECIDED if natural == WON else WON], (number, looks)
        solution = solve(board, nodes)
        assert solution.verdict is Verdict.WINNABLE, number
        replay = board.copy()
        for move in solution.moves:
            replay.play(move)
        assert replay.is_won()


def test_rule_7_waits_for_the_deal_under_when_stuck_too() -> None:
    # Every card at row 1 or above lies on its successor, nothing links, three columns are
    # empty, and the reserve waits: the engine's moves are all idle, and only by playing
    # some of them (filling the empty columns) can the position become stuck, so that the
    # reserve is dealt. Before the deal the search offers them all.
    board = board_from_text(
        "wasp when-stuck KHQHJHTH9H8H7H6H5H/KDQDJDTD9D8D7D/3H2HAH/5D4D3D2D/-/-/- 4h6dad SC"
    )
    legal = board.legal_moves()
    assert legal and DEAL not in legal and all(_settled(board, move) for move in legal)
    assert {Move(*m) for m in _state(board).moves(every_empty=True)} == set(legal)
    for rules in (ALL_RULES, ALL_RULES - {"settled"}):
        assert solve(board, 100_000, rules=rules).verdict is Verdict.UNWINNABLE


def _direct(board: Board, move: Move) -> bool:
    """Whether ``move`` takes a card into an empty column while its successor tops another
    column (so that its link is legal)."""
    if board.columns[move.target] or move.card % 13 == 12:
        return False
    columns = board.columns
    return any(col and col[-1] == move.card + 1 for index, col in enumerate(columns) if index != move.source)


def test_rule_8_leaves_out_exactly_the_wasp_moves_into_empty_columns_whose_link_is_legal() -> None:
    seen = {"left out": 0, "kept before the deal": 0, "kept": 0}
    for board, legal, ours, theirs, waits in _with_and_without("direct", 8):
        for move in theirs:
            if move != DEAL and _direct(board, move) and not waits:
                onto = next(i for i, col in enumerate(board.columns) if col and col[-1] == move.card + 1)
                # Left out, while its link is legal.
                assert move not in ours and Move(move.card, move.source, onto) in legal, (board, move)
                seen["left out"] += 1
            else:
                assert move in ours, (board, move)
                if move != DEAL and _direct(board, move):
                    seen["kept before the deal"] += 1
                elif move != DEAL and not board.columns[move.target]:
                    seen["kept"] += 1
        assert ours <= theirs and (DEAL in ours) == (DEAL in legal), board
    assert all(seen.values()), seen


def test_solve_names_the_pruning_rules_it_does_not_know() -> None:
    board = Board.new("wasp", 1)
    with pytest.raises(ValueError, match="unknown pruning rules: setled"):
        solve(board, 100, rules=frozenset({"setled"}))
    assert solve(board, 100, rules=frozenset()).nodes > 0  # no rule at all is a valid choice


def test_rule_5_follows_a_cycle_through_a_face_down_king() -> None:
    # 5H must go onto 6H, under 9S; 9S onto TS, under the face-down 3D; 3D is under the
    # face-down King of clubs, which 5H covers. Only the King's single lead (into an empty
    # column) closes the cycle.
    board = board_from_text(
        "scorpion any-time ts3dkc5H/6H9S/KHQHJHTH9H8H7H/4H3H2HAH/KSQSJSQCJCTC9C8C7C6C5C4C3C2CAC/"
        "8S7S6S5S4S3S2SAS/KDQDJDTD9D8D7D6D5D4D2DAD - -"
    )
    assert _state(board).tangled()
    assert not _state(board, rules=ALL_RULES - {"kings"}).tangled()
    assert solve(board, 200_000, prune=False).verdict is Verdict.UNWINNABLE


def test_rule_5_after_moves_finds_every_new_cycle_from_the_cards_the_moves_concern() -> None:
    # From a position with no cycle, one to three moves (as the search's move and its
    # forced links); the cycle search from the cards those moves may have given a new
    # wait must find a cycle exactly when the search over every card does.
    rng = random.Random(11)
    found = checked = 0
    for variant in ("scorpion", "scorpion-ii", "three-blind-mice"):
        for rule in ("any-time", "when-stuck"):
            for _ in range(100):
                state = _state(Board.new(variant, rng.randrange(1, 10**20), rule))
                if state.tangled():
                    continue  # lost as dealt
                for _ in range(120):
                    undos = []
                    seeds: list[int] = []
                    moves = state.moves(every_empty=True)
                    if moves == [(-1, -1, -1)] or (moves and rng.random() < 0.05 and moves[-1][0] < 0):
                        state.push(-1, -1, -1)  # after the deal the search tests every card
                        if state.tangled():
                            break
                        continue
                    for _ in range(rng.choice((1, 1, 2, 3))):
                        links = [m for m in state.moves(every_empty=True) if m[0] >= 0]
                        if not links:
                            break
                        undo = state.push(*rng.choice(links))
                        undos.append(undo)
                        state.newly_waiting(undo, seeds)
                    if not undos:
                        break
                    checked += 1
                    tangled = state.tangled()
                    assert state.tangled_from(seeds) == tangled
                    if tangled:
                        # Step back to the position without a cycle and go on from there.
                        found += 1
                        for undo in reversed(undos):
                            state.pop(undo)
    assert checked > 5_000
    assert found > 1_000


def test_rule_5_after_a_move_from_a_cell_finds_the_cycle_it_closes() -> None:
    # 5H leaves its cell for 6H, above 4H: now 4H waits for 7H (the one card between that
    # can lead) and 7H for 4H (lying on the face-down 8H): a cycle through the new wait.
    board = board_from_text("three-blind-mice any-time 8h4H7H6H/KHQHJHTH9H/3H2HAH/-/-/-/-/-/-/- 5H,- CDS")
    state = _state(board)
    assert not state.tangled()
    seeds: list[int] = []
    state.newly_waiting(state.push(card_from_text("5H"), CELL_BASE, 0), seeds)
    assert state.tangled()
    assert state.tangled_from(seeds)
