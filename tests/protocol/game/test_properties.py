"""Properties of the engine over random legal playouts, in every variant and both reserve rules.

Hypothesis draws the deal number and the move choices. Half the playouts pick from the
hint order with small indexes, which plays well enough to collect runs and win games, so
that run collection and its undo are exercised as much as ordinary moves.

``naive_legal_moves`` is an independent move generator written straight from the rule
sentences: every face-up card of a column or a cell against every column. It shares no
code with ``Board.legal_moves`` (it reads cards through their text, not their numbering);
``scripts/perft_fixture.py`` uses it to compute ``perft.txt``.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator

from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from protocol.game import (
    CELL_BASE,
    DEAL,
    MAX_NUMBER,
    NO_CARD,
    VARIANTS,
    Board,
    IllegalMove,
    Move,
    Status,
    board_from_text,
    board_to_text,
    card_text,
    deal,
    hints,
    player_view,
    spectator_view,
)

# -- the naive generator -----------------------------------------------------------------

_RANK_LETTERS = "A23456789TJQK"
_RANK = {card: _RANK_LETTERS.index(card_text(card)[0]) + 1 for card in range(52)}
_SUIT = {card: card_text(card)[1] for card in range(52)}


def naive_fits(card: int, onto: int) -> bool:
    """Tell whether ``card`` may lead a group onto the exposed card ``onto``, by the rules."""
    if _RANK[onto] == 1:  # nothing goes on an Ace
        return False
    if _RANK[card] == 13:  # a King cannot go on any card
        return False
    return _SUIT[card] == _SUIT[onto] and _RANK[onto] == _RANK[card] + 1


def naive_legal_moves(board: Board) -> list[Move]:
    """Return every legal move of ``board``, found by trying every card against every column."""
    any_card_fills_empty = board.variant.name == "wasp"
    leaders: list[tuple[int, int, int]] = []  # (card, source, row; -1 for a cell)
    for source, col in enumerate(board.columns):
        for row in range(board.down[source], len(col)):  # face-up cards only
            leaders.append((col[row], source, row))
    for index, card in enumerate(board.cells):
        if card != NO_CARD:
            leaders.append((card, CELL_BASE + index, -1))
    moves = []
    for card, source, row in leaders:
        for target, col in enumerate(board.columns):
            if target == source:
                continue
            if col:
                legal = naive_fits(card, col[-1])
            else:
                fills = any_card_fills_empty or _RANK[card] == 13
                legal = fills and row != 0  # a whole column into an empty one changes nothing
            if legal:
                moves.append(Move(card, source, target))
    if board.stock and (board.rule.value == "any-time" or not moves):
        moves.append(DEAL)
    return moves


# -- playouts ----------------------------------------------------------------------------

RULES = ("any-time", "when-stuck")
numbers = st.one_of(st.integers(1, 32000), st.integers(32001, MAX_NUMBER))
games = st.tuples(
    st.sampled_from(sorted(VARIANTS)),
    st.sampled_from(RULES),
    numbers,
    st.booleans(),
    st.integers(0, 2**64 - 1),  # seeds the move choices
    st.integers(60, 200),  # the playout's length, unless it gets stuck first
)

Game = tuple[str, str, int, bool, int, int]

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def playout(game: Game) -> Iterator[Board]:
    """Yield the board after each move of a playout (the opening first); the same object."""
    variant, rule, number, greedy, seed, length = game
    board = Board.new(variant, number, rule)
    rng = random.Random(seed)
    yield board
    for _ in range(length):
        # Greedy playouts pick one of the three best hints; the others any legal move.
        moves = hints(board)[:3] if greedy else board.legal_moves()
        if not moves:
            break
        board.push(rng.choice(moves))
        yield board
    note(f"{variant} {rule} {number}: {' '.join(map(str, board.move_stack))}")


def snapshot(board: Board) -> tuple[object, ...]:
    """Return the key and every internal array of ``board``."""
    return (
        board.key(),
        [col[:] for col in board.columns],
        board.down[:],
        board.stock[:],
        board.cells[:],
        board.foundations[:],
        board._where[:],
        board._hidden[:],
        board.move_stack,
    )


def all_cards_placed(board: Board) -> list[int]:
    cards = [c for col in board.columns for c in col] + board.stock
    cards += [c for c in board.cells if c != NO_CARD]
    cards += [suit * 13 + rank for suit in board.foundations for rank in range(13)]
    return sorted(cards)


# -- properties --------------------------------------------------------------------------


@SETTINGS
@given(games)
def test_every_card_is_always_in_exactly_one_place(game: Game) -> None:
    for board in playout(game):
        assert all_cards_placed(board) == list(range(52))
        for card in range(52):
            where = board.location(card)
            if where < len(board.columns):
                assert card in board.columns[where]


@SETTINGS
@given(games)
def test_pop_restores_exactly_what_push_changed(game: Game) -> None:
    states = []
    for board in playout(game):
        before = snapshot(board)
        states.append(before)
        for move in board.legal_moves():
            board.push(move)
            assert board.pop() == move
            assert snapshot(board) == before, move
    # Then unwind the whole playout, one pop at a time.
    while board.move_stack:
        board.pop()
        states.pop()
        assert snapshot(board) == states[-1]
    assert len(states) == 1


@SETTINGS
@given(games)
def test_notation_round_trips(game: Game) -> None:
    for board in playout(game):
        text = board_to_text(board)
        again = board_from_text(text)
        assert again.key() == board.key()
        assert board_to_text(again) == text
        assert again.legal_moves() == board.legal_moves()


@SETTINGS
@given(games)
def test_views_never_contain_a_face_down_card(game: Game) -> None:
    for board in playout(game):
        unseen = {card_text(c) for c in range(52) if board.location(c) < 300 and not board.is_face_up(c)}
        seen = {card_text(c) for c in range(52) if board.is_face_up(c)}
        assert unseen.isdisjoint(seen)
        for view in (player_view(board), spectator_view(board)):
            data = view.as_dict()
            wire = json.dumps(data)
            assert not any(name in wire for name in unseen)
            shown = [c for col in data["columns"] for c in col if c is not None]  # type: ignore[attr-defined]
            shown += [c for c in data["cells"] if c is not None]  # type: ignore[attr-defined]
            assert sorted(shown) == sorted(seen)
            assert data["reserve_left"] == len(board.stock)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(sorted(VARIANTS)), numbers, st.sampled_from(RULES))
def test_deals_are_reproducible(variant: str, number: int, rule: str) -> None:
    assert deal(variant, number) == deal(variant, number)
    assert Board.new(variant, number, rule).key() == Board.new(variant, number, rule).key()
    layout = deal(variant, number)
    assert sorted([c for col in layout.columns for c in col] + list(layout.reserve)) == list(range(52))


@SETTINGS
@given(games)
def test_legal_moves_agree_with_a_naive_generator(game: Game) -> None:
    for board in playout(game):
        moves = board.legal_moves()
        assert len(set(moves)) == len(moves), "a move is listed twice"
        assert sorted(moves) == sorted(naive_legal_moves(board)), board_to_text(board)
        if DEAL in moves:
            assert moves[-1] == DEAL


@SETTINGS
@given(games)
def test_status_agrees_with_the_naive_generator(game: Game) -> None:
    """Won when the four runs are out; stuck exactly when the naive generator finds no move."""
    for board in playout(game):
        if len(board.foundations) == 4:
            expected = Status.WON
        elif naive_legal_moves(board):
            expected = Status.IN_PLAY
        else:
            expected = Status.STUCK
        assert board.status() is expected


def candidate_moves(board: Board) -> list[Move]:
    """Return legal moves, near misses and nonsense: every visible card to every column,
    from its own place and from a wrong one, plus hidden cards and the deal."""
    count = len(board.columns)
    candidates = [DEAL]
    for card in range(52):
        where = board.location(card)
        sources = {where, (where + 1) % count, 0, CELL_BASE} if where < 300 else {0, count - 1}
        for source in sources:
            for target in range(count):
                candidates.append(Move(card, source, target))
    return candidates


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(games)
def test_is_legal_agrees_with_legal_moves(game: Game) -> None:
    for step, board in enumerate(playout(game)):
        if step % 4:
            continue
        legal = set(board.legal_moves())
        for move in candidate_moves(board):
            assert board.is_legal(move) == (move in legal), move
            reason = board.explain(move)
            assert (reason is None) == (move in legal)
        for move in legal:
            copy = board.copy()
            copy.play(move)  # play accepts every legal move...
        illegal = next(m for m in candidate_moves(board) if m not in legal)
        try:
            board.copy().play(illegal)
        except IllegalMove:
            pass
        else:  # ...and refuses the rest
            raise AssertionError(f"{illegal} was played")


@SETTINGS
@given(games)
def test_copy_is_independent_and_equal(game: Game) -> None:
    for board in playout(game):
        copy = board.copy()
        assert copy == board and hash(copy) == hash(board)
        assert copy.move_stack == board.move_stack
        before = snapshot(board)
        for _ in range(3):
            moves = copy.legal_moves()
            if moves:
                copy.push(moves[-1])
        assert snapshot(board) == before


# -- deterministic sweeps that make sure the properties meet wins and collections --------


def test_naive_generator_agrees_along_greedy_playouts_that_collect_runs_and_win() -> None:
    rng = random.Random(11)
    wins = collections = positions = 0
    for index in range(48):
        variant = sorted(VARIANTS)[index % 4]
        rule = RULES[index // 4 % 2]
        board = Board.new(variant, rng.randrange(1, MAX_NUMBER), rule)
        for _ in range(250):
            moves = board.legal_moves()
            positions += 1
            assert sorted(moves) == sorted(naive_legal_moves(board)), board_to_text(board)
            if not moves:
                break
            ranked = hints(board)
            before = board.runs
            move = ranked[0] if rng.random() < 0.8 else rng.choice(ranked)
            state = snapshot(board)
            board.push(move)
            collections += board.runs - before
            if board.runs > before:  # a collection, perhaps turning a card up: undo it exactly
                board.pop()
                assert snapshot(board) == state
                board.push(move)
        wins += board.is_won()
    assert wins >= 3
    assert collections >= 30
    assert positions > 1500


def test_naive_generator_knows_the_rules_it_is_checked_against() -> None:
    # The cross-check is only worth something if the naive generator itself is right.
    board = board_from_text(
        "scorpion any-time AC2C/3CKH5C9H/4CQH/-/JH8H7H6H5H4H3H2HAH/KCQCJCTC9C8C7C6C/TH - DS"
    )
    assert sorted(str(m) for m in naive_legal_moves(board)) == sorted(
        ["8H:5-2", "JH:5-3", "5C:2-6", "9H:2-7", "KH:2-4"]
    )
    mice = board_from_text(
        "three-blind-mice when-stuck KHQHJHTH9H8H7H6H5H/3H2HAH/-/QSJS/TS9S8S/7S6S5S4S3S/2SAS/-/-/- KS,4H CD"
    )
    assert sorted(str(m) for m in naive_legal_moves(mice)) == sorted(
        ["4H:R2-1", "TS:5-4", "7S:6-5", "2S:7-6", "KS:R1-3", "KS:R1-8", "KS:R1-9", "KS:R1-10"]
    )
    assert not naive_fits(12, 13)  # KC onto AD
    assert naive_fits(card_text_to_int("7H"), card_text_to_int("8H"))
    assert not naive_fits(card_text_to_int("7H"), card_text_to_int("8S"))


def card_text_to_int(text: str) -> int:
    return next(card for card in range(52) if card_text(card) == text)


@given(number=st.integers(1, 10**6), steps=st.integers(0, 60), seed=st.integers(0, 10**6))
@settings(max_examples=60, deadline=None)
def test_view_and_summary_data_are_exactly_the_player_view_and_summary_as_data(
    number: int, steps: int, seed: int
) -> None:
    import random

    from protocol.game import Board, player_view, summarize, summary_data, view_data

    rng = random.Random(seed)
    board = Board.new(rng.choice(["scorpion", "scorpion-ii", "wasp", "three-blind-mice"]), number)
    for _ in range(steps):
        moves = board.legal_moves()
        if not moves:
            break
        board.push(rng.choice(moves))
    assert view_data(board) == player_view(board).as_dict()
    elapsed = rng.randrange(0, 2000)
    status = board.status()
    assert summary_data(board, elapsed, status) == summarize(board, elapsed, status=status).as_dict()
