"""The solver's cross-checks (slow): forced links keep winnable positions winnable, and no
pruning rule changes a verdict against the search without it.
"""

from __future__ import annotations

import random

import pytest

from protocol.game import Board, Move, ReserveRule, board_from_text, board_to_text, card_text
from protocol.solver import Verdict, solve
from protocol.solver.search import ALL_RULES
from protocol.solver.solver import _state


def _forced_links(
    board: Board, rooted_too: bool, bottoms: bool = False, reversible: bool = False, anchored: bool = False
) -> list[Move]:
    """The legal links that carry the leading card's whole lower tail (down to its Ace),
    and with ``rooted_too`` those onto a rooted run: the links rule 2 forces. Without it,
    only the tails onto columns that are not rooted runs. With ``bottoms``, only the links
    rule 9 forces instead: of a face-up card at row 0 (Wasp, after the deal); with
    ``reversible``, those rule 10 forces (Wasp under when-stuck, before the deal); with
    ``anchored``, those rule 11 forces (the same)."""
    found = []
    for move in board.legal_moves():
        if move.is_deal or not board.columns[move.target]:
            continue
        if anchored:
            state = _state(board)
            if board.stock and (
                state.anchored_run(move.card + 1) or state.anchored_group(move.card, move.source)
            ):
                found.append(move)
            continue
        if bottoms or reversible:
            if move.source >= 100 or board.columns[move.source][0] != move.card:
                continue  # not at row 0
            if not board.stock:
                forced = bottoms
            else:
                forced = reversible and _state(board).reversible_link(move.card, move.source, move.target)
            if forced:
                found.append(move)
            continue
        low = move.card % 13
        tail = [move.card - rank for rank in range(low + 1)]
        if move.source >= 100:
            group = [move.card]
        else:
            column = board.columns[move.source]
            group = column[column.index(move.card) :]
        target = board.columns[move.target]
        king = target[0] - target[0] % 13 + 12
        rooted = not board.down[move.target] and target == list(range(king, king - len(target), -1))
        if (group == tail and not rooted) or (rooted_too and rooted):
            found.append(move)
    return found


@pytest.mark.slow
@pytest.mark.parametrize(
    ("variants", "rule_name", "rooted_too"),
    [
        (("scorpion", "scorpion-ii", "three-blind-mice"), "tails", False),
        (("wasp",), "links", True),
        (("wasp",), "bottoms", False),
        (("wasp",), "reversible", False),
        (("wasp",), "anchored", False),
    ],
)
def test_forced_links_keep_every_winnable_position_winnable(
    variants: tuple[str, ...], rule_name: str, rooted_too: bool
) -> None:
    # Walk winning lines found without the rule and, wherever it forces a link (no reserve
    # left, or when-stuck), solve again with it: the position must stay winnable.
    rng = random.Random(f"forced links {rule_name}")
    without = ALL_RULES - {rule_name}
    checked = 0
    # Rules 10 and 11 apply before the deal under when-stuck only: twice the deals for them.
    before_the_deal = rule_name in ("reversible", "anchored")
    for index in range(480 if before_the_deal else 240):
        variant = variants[index % len(variants)]
        rule = ("any-time", "when-stuck")[index // 3 % 2]
        board = Board.new(variant, rng.randrange(32001, 10**20), rule)
        solution = solve(board, 20_000, rules=without)
        if solution.verdict is not Verdict.WINNABLE:
            continue
        position = board.copy(stack=False)
        for move in solution.moves:
            bottoms = rule_name == "bottoms"  # rule 9: after the deal only
            reversible = rule_name == "reversible"  # rule 10: before it, under when-stuck
            anchored = rule_name == "anchored"  # rule 11: the same
            if before_the_deal:
                applies = bool(position.stock) and position.rule is ReserveRule.WHEN_STUCK
            else:
                applies = not position.stock or (position.rule is ReserveRule.WHEN_STUCK and not bottoms)
            forced = _forced_links(
                position, rooted_too, bottoms=bottoms, reversible=reversible, anchored=anchored
            )
            if applies and forced and not position.is_won():
                verdict = solve(position, 50_000).verdict
                assert verdict is not Verdict.UNWINNABLE, board_to_text(position)
                checked += verdict is Verdict.WINNABLE
            position.play(move)
    assert checked >= 100, checked


NON_WASP = ("scorpion", "scorpion-ii", "three-blind-mice")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("variants", "rule_name", "seed", "won", "lost"),
    [
        (("wasp",), "settled", "rule 7", 150, 20),
        (("wasp",), "links", "forced link verdicts links", 30, 30),
        (("wasp",), "commute", "rule 6 wasp", 150, 20),
        (("wasp",), "direct", "rule 8", 150, 20),
        (("wasp",), "bottoms", "rule 9", 150, 20),
        (("wasp",), "reversible", "rule 10", 150, 20),
        (("wasp",), "anchored", "rule 11", 150, 20),
        (NON_WASP, "tails", "forced link verdicts tails", 30, 100),
        (NON_WASP, "kings", "rule 5 kings", 30, 100),
    ],
)
def test_a_pruning_rule_never_changes_a_verdict(
    variants: tuple[str, ...], rule_name: str, seed: str, won: int, lost: int
) -> None:
    # 300 deals solved with every rule and with every rule but one, under both reserve
    # rules: wherever both decide, they agree.
    rng = random.Random(seed)
    without = ALL_RULES - {rule_name}
    verdicts = {Verdict.WINNABLE: 0, Verdict.UNWINNABLE: 0}
    for index in range(300):
        variant = variants[index % len(variants)]
        rule = ("any-time", "when-stuck")[index // len(variants) % 2]
        board = Board.new(variant, rng.randrange(32001, 10**20), rule)
        ours = solve(board, 20_000)
        theirs = solve(board, 20_000, rules=without)
        if Verdict.UNKNOWN in (ours.verdict, theirs.verdict):
            continue
        assert ours.verdict is theirs.verdict, board
        verdicts[ours.verdict] += 1
    assert verdicts[Verdict.WINNABLE] >= won and verdicts[Verdict.UNWINNABLE] >= lost, verdicts


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["scorpion", "scorpion-ii", "wasp", "three-blind-mice"])
def test_the_search_without_pruning_never_disagrees_with_the_pruned_search(variant: str) -> None:
    rng = random.Random(f"cross-check {variant}")
    decided = 0
    for index in range(500):
        rule = ("any-time", "when-stuck")[index % 2]
        board = Board.new(variant, rng.randrange(32001, 10**20), rule)
        pruned = solve(board, 20_000)
        plain = solve(board, 2_500, prune=False)
        if Verdict.UNKNOWN in (pruned.verdict, plain.verdict):
            continue
        decided += 1
        assert pruned.verdict is plain.verdict, (variant, rule, board)
    assert decided >= 60


def _small_wasp_position(rng: random.Random) -> str:
    """A random Wasp position after the deal with three suits in play (the fourth
    collected), no empty column and up to five face-down cards a column."""
    suits = rng.sample(range(4), 3)
    cards = [suit * 13 + rank for suit in suits for rank in range(13)]
    rng.shuffle(cards)
    cuts = sorted(rng.sample(range(1, len(cards)), 6))
    columns = []
    for start, end in zip([0, *cuts], [*cuts, len(cards)], strict=True):
        part = cards[start:end]
        down = rng.randrange(min(6, len(part)))
        faces = (card_text(card).lower() if row < down else card_text(card) for row, card in enumerate(part))
        columns.append("".join(faces))
    collected = "".join("CDHS"[suit] for suit in range(4) if suit not in suits)
    return f"wasp {rng.choice(['any-time', 'when-stuck'])} {'/'.join(columns)} - {collected}"


@pytest.mark.slow
def test_small_wasp_positions_get_the_same_verdicts_with_every_rule_and_with_none() -> None:
    # Rules 7 and 8 (and Wasp's rules 2 and 6, which rest on rule 7's claim), checked
    # beside their proofs (docs/solver.md, rule 7): positions small enough for the search
    # without pruning to decide them, many of them lost, must get the same verdict.
    rng = random.Random("small wasp")
    verdicts = {Verdict.WINNABLE: 0, Verdict.UNWINNABLE: 0}
    for _ in range(600):
        board = board_from_text(_small_wasp_position(rng))
        pruned = solve(board, 200_000)
        plain = solve(board, 200_000, prune=False)
        if Verdict.UNKNOWN in (pruned.verdict, plain.verdict):
            continue
        assert pruned.verdict is plain.verdict, board_to_text(board)
        verdicts[pruned.verdict] += 1
    assert verdicts[Verdict.WINNABLE] >= 300 and verdicts[Verdict.UNWINNABLE] >= 60, verdicts
