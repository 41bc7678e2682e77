"""The solver's forced links: rules 9, 10 and 11, and what is (not) a rooted run."""

from __future__ import annotations

from protocol.game import board_from_text, card_from_text
from protocol.solver.search import ALL_RULES, EARLY, _Run
from protocol.solver.solver import _state


def test_rule_10_forces_a_link_from_row_0_before_the_deal_where_it_can_be_undone() -> None:
    # Wasp under when-stuck, before the deal: 5H lies face up at row 0 of column 1 (4D on
    # it), 6H tops column 2, and AH and 2H are in the reserve, so the link collects nothing
    # and moving 5H 4D back into the column it empties undoes it. No card of column 2 can go
    # onto 4D now. The search proper links it without branching.
    columns = "5H4D/kdQHJHTH9H8H7H6H/KHQDJDTD9D8D7D6D5D/4H3D2D3H/-/-/-"
    five_h = card_from_text("5H")

    def forced(text: str, rules: frozenset[str] = ALL_RULES) -> list[tuple[int, int, int]]:
        run = _Run(_state(board_from_text(text), rules=rules))
        assert run.enter(False, -1, 0, False) is not None
        return run.line()

    assert forced(f"wasp when-stuck {columns} ad2hah CS") == [(five_h, 0, 1)]
    # (Rule 11 would link 5H too: 6H's run leads up to KH, which heads column 3.)
    assert forced(f"wasp when-stuck {columns} ad2hah CS", ALL_RULES - {"reversible", "anchored"}) == []
    # Not under the any-time rule (the deal may come while the column is empty).
    assert forced(f"wasp any-time {columns} ad2hah CS") == []
    # Not when no heart is in the reserve: the hearts might be collected before the deal,
    # and a link that collects a run cannot be undone. (Rule 11 left out here: 4D's group
    # reads down to a card whose predecessor is in the reserve, so it links 4D onto 5D.)
    no_heart = "wasp when-stuck 5H4D/kdQHJHTH9H8H7H6H/KHQDJDTD9D8D7D6D5D/4H3H2HAH/-/-/- ad3d2d CS"
    assert forced(no_heart, ALL_RULES - {"anchored"}) == []
    # Not when a card of 6H's column can be linked onto the top of 5H's column now: 3D (with
    # QH down to 6H on it) onto 4D would carry 6H onto 5H's own column. Then the search
    # tries just those two links (of 22 moves).
    crossing = "5H4D/kd3DQHJHTH9H8H7H6H/KHQDJDTD9D8D7D6D5D/4H2D3H/-/-/-"
    assert forced(f"wasp when-stuck {crossing} ad2hah CS") == []
    board = board_from_text(f"wasp when-stuck {crossing} ad2hah CS")
    entered = _Run(_state(board)).enter(False, -1, 0, False)
    assert entered is not None and entered[0] == [(card_from_text("3D"), 1, 0), (five_h, 0, 1)]
    entered = _Run(_state(board, rules=ALL_RULES - {"reversible"})).enter(False, -1, 0, False)
    assert entered is not None and len(entered[0]) == 22


def test_rule_11_forces_a_link_onto_an_anchored_run_or_of_an_anchored_group_before_the_deal() -> None:
    # Wasp under when-stuck, before the deal: column 2's face-up cards read KH down to 6H
    # over a face-down card, so none of them can ever join another card's group. 5H (with
    # 4D on it) lies at row 1 of column 1, where rule 10 does not reach: rule 11 links it
    # onto 6H without branching, and then rule 10 links 3H (at row 0 of column 4, with KD
    # and 3D) onto 4H, now alone in column 1. The QD run is not anchored: KD lies on 3H.
    columns = "4H5H4D/2dKHQHJHTH9H8H7H6H/QDJDTD9D8D7D6D5D/3HKD3D/-/-/-"
    five_h, three_h = card_from_text("5H"), card_from_text("3H")
    four_d, five_d, six_h = card_from_text("4D"), card_from_text("5D"), card_from_text("6H")

    def forced(text: str, rules: frozenset[str] = ALL_RULES) -> list[tuple[int, int, int]]:
        run = _Run(_state(board_from_text(text), rules=rules))
        assert run.enter(False, -1, 0, False) is not None
        return run.line()

    assert forced(f"wasp when-stuck {columns} ad2hah CS") == [(five_h, 0, 1), (three_h, 3, 0)]
    assert forced(f"wasp when-stuck {columns} ad2hah CS", ALL_RULES - {"anchored"}) == []
    # Not under the any-time rule (a deal may come at any position).
    assert forced(f"wasp any-time {columns} ad2hah CS") == []
    state = _state(board_from_text(f"wasp when-stuck {columns} ad2hah CS"))
    assert state.anchored_run(six_h) and not state.anchored_run(five_d)
    # Not when a card that is not of the run lies face up under it: 2D could carry the run
    # onto 3D (and here does, by forced links that start elsewhere).
    assert (five_h, 0, 1) not in forced(
        "wasp when-stuck 4H5H4D/kd2DKHQHJHTH9H8H7H6H/QDJDTD9D8D7D6D5D/3H3D/-/-/- ad2hah CS"
    )
    # A run is anchored too where the card above it lies face down (KD, column 2: it can
    # move only once turned up, first in its column), or in the reserve: QD down to 5D then
    # takes 4D, and after the links above 4H (with 3H, 2D and 3D) goes onto 5H, 3D onto 4D
    # and 2D onto 3D.
    for anchored in (
        "4H5H4D/kdKHQHJHTH9H8H7H6H/QDJDTD9D8D7D6D5D/3H2D3D/-/-/- ad2hah CS",
        "4H5H4D/2hKHQHJHTH9H8H7H6H/QDJDTD9D8D7D6D5D/3H2D3D/-/-/- adkdah CS",
    ):
        assert forced(f"wasp when-stuck {anchored}") == [
            (five_h, 0, 1),
            (three_h, 3, 0),
            (four_d, 1, 2),
            (card_from_text("4H"), 0, 1),
            (card_from_text("3D"), 1, 2),
            (card_from_text("2D"), 1, 2),
        ]
        state = _state(board_from_text(f"wasp when-stuck {anchored}"))
        assert state.anchored_run(six_h) and state.anchored_run(five_d)
        assert not state.anchored_run(card_from_text("3D"))
    # The other end: 4D's group reads down to 2D, whose predecessor is in the reserve, so no
    # other card can ever join it; it goes onto 5D although neither run is anchored (KH
    # lies on 9H, QD on 3H), and QD then goes onto KD, left alone at row 0. Not when 2D
    # lies elsewhere.
    group = "4H5H/9HKHQHJHTH8H7H6H/3HQDJDTD9D8D7D6D5D/KD4D3D2D/-/-/-"
    queen_d = card_from_text("QD")
    assert forced(f"wasp when-stuck {group} ad2hah CS") == [(four_d, 3, 2), (queen_d, 2, 3)]
    assert forced(f"wasp when-stuck {group} ad2hah CS", ALL_RULES - {"anchored"}) == []
    assert forced("wasp when-stuck 4H5H/9HKHQHJHTH8H7H6H/3HQDJDTD9D8D7D6D5D/KD2D4D3D/-/-/- ad2hah CS") == []
    state = _state(board_from_text(f"wasp when-stuck {group} ad2hah CS"))
    assert state.anchored_group(four_d, 3) and not state.anchored_group(card_from_text("3H"), 2)
    # Or to the Ace (the hearts follow, onto runs anchored by KH).
    ace = "4H5H/KHQHJHTH8H7H6H/9HQDJDTD9D8D7D6D5D/KD4D3D2DAD/-/-/- 3h2hah CS"
    assert forced(f"wasp when-stuck {ace}")[:2] == [(four_d, 3, 2), (queen_d, 2, 3)]


def test_a_king_on_a_complete_run_of_the_suit_below_is_not_a_rooted_run() -> None:
    # The King of diamonds lies on the complete hearts run (King of hearts at row 0), so the
    # card numbers run on without a break across the suits; the column is not rooted, and the
    # forced link is the complete tail of diamonds onto the Queen, not the Queen onto the King.
    board = board_from_text(
        "scorpion any-time KHQHJHTH9H8H7H6H5H4H3H2HAHKD/QD/JDTD9D8D7D6D5D4D3D2DAD/-/-/-/- - SC"
    )
    assert _state(board).first_link() == (card_from_text("JD"), 2, 1)


def test_rule_9_forces_the_link_of_a_face_up_card_at_row_0_after_the_deal_only() -> None:
    # 5H lies face up at row 0 of column 1 (4D on it) and 6H tops column 2: rule 9 links
    # it (with 4D) without branching. No other card at row 0 can link, and rule 2 forces
    # nothing here (column 2 has a face-down card under its run, so it is not rooted).
    columns = "5H4D/kdQHJHTH9H8H7H6H/KHQDJDTD9D8D7D6D5D/4H3D2D3H{rest}/-/-/-"
    after = board_from_text(f"wasp when-stuck {columns.format(rest='AD2HAH')} - CS")
    state = _state(after)
    five_h = card_from_text("5H")
    assert state.first_link(rule2=True, rule9=False) is None
    assert state.first_link(rule2=False, rule9=True) == (five_h, 0, 1)
    run = _Run(state)
    assert run.enter(False, -1, 0, False) is not None
    assert run.line() == [(five_h, 0, 1)]
    run = _Run(_state(after, rules=ALL_RULES - {"bottoms"}))
    assert run.enter(False, -1, 0, False) is not None
    assert run.line() == []
    # Face down at row 0, 5H is not forced; nor before the deal (three cards in reserve),
    # but by rule 10 (its own test, above).
    hidden = board_from_text(f"wasp when-stuck {columns.replace('5H', '5h').format(rest='AD2HAH')} - CS")
    assert _state(hidden).first_link(rule2=False, rule9=True) is None
    before = board_from_text(f"wasp when-stuck {columns.format(rest='')} ad2hah CS")
    assert _state(before).first_link(rule2=False, rule9=True) == (five_h, 0, 1)
    run = _Run(_state(before, rules=ALL_RULES - {"reversible", "anchored"}))
    assert run.enter(False, -1, 0, False) is not None
    assert run.line() == []
    # The first look for a win under when-stuck (EARLY) forces it before the deal too: a
    # line it finds is a win whatever it left out. Not under the any-time rule.
    board = board_from_text(f"wasp when-stuck {columns.format(rest='')} ad2hah CS")
    run = _Run(_state(board, rules=ALL_RULES | {EARLY}))
    assert run.enter(False, -1, 0, False) is not None
    assert run.line() == [(five_h, 0, 1)]
    board = board_from_text(f"wasp any-time {columns.format(rest='')} ad2hah CS")
    run = _Run(_state(board, rules=ALL_RULES | {EARLY}))
    assert run.enter(False, -1, 0, False) is not None
    assert run.line() == []
