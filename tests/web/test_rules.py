"""The page's own move rules (client/web/rules.js) agree with the engine's, position by position."""

from __future__ import annotations

import random
from typing import Any

from protocol.game import VARIANTS, Board, move_json, player_view

from ..server.conftest import NodeFactory
from .conftest import PageFactory

POSITIONS_PER_VARIANT = 150


def positions(variant: str, rng: random.Random) -> list[dict[str, Any]]:
    """Return positions met in random play, each with the engine's legal moves."""
    cases: list[dict[str, Any]] = []
    while len(cases) < POSITIONS_PER_VARIANT:
        board = Board.new(variant, rng.randrange(1, 10**9))
        for _ in range(rng.randrange(5, 120)):
            legal = board.legal_moves()
            card_moves = sorted(
                (m["card"], str(m["from"]), m["to"]) for m in map(move_json, legal) if "card" in m
            )
            cases.append(
                {
                    "view": player_view(board).as_dict(),
                    "moves": card_moves,
                    "deal_any_time": any(m.is_deal for m in legal),
                    "deal_when_stuck": bool(board.stock) and not card_moves,
                }
            )
            if not legal:
                break
            # deal rarely, so that positions stuck but for the reserve come up too
            cards = [m for m in legal if not m.is_deal]
            board.push(rng.choice(cards if cards and rng.random() < 0.97 else legal))
    return cases


JS_CHECK = """async (cases) => {
  const rules = await import('/rules.js');
  return cases.map(({view}) => ({
    moves: rules.cardMoves(view)
      .map(({source, to}) => rules.wireMove(view, source, to))
      .map(m => [m.card, String(m.from), m.to]),
    deal_any_time: rules.canDeal(view, 'any-time'),
    deal_when_stuck: rules.canDeal(view, 'when-stuck'),
  }));
}"""


def test_legal_targets_computed_in_the_page_match_the_engine(
    start_node: NodeFactory, open_page: PageFactory
) -> None:
    node = start_node()
    page = open_page(f"http://127.0.0.1:{node.port}/", "Rules")
    rng = random.Random(20240601)
    seen = {"cell": 0, "empty": 0, "when_stuck_deal": 0}
    for variant in VARIANTS:
        cases = positions(variant, rng)
        answers = page.evaluate(JS_CHECK, cases)
        for case, answer in zip(cases, answers, strict=True):
            answer["moves"] = sorted(tuple(m) for m in answer["moves"])
            seen["cell"] += any(m[1].startswith("R") for m in case["moves"])
            seen["empty"] += any(not col for col in case["view"]["columns"])
            seen["when_stuck_deal"] += case["deal_when_stuck"]
            expected = {
                "moves": case["moves"],
                "deal_any_time": case["deal_any_time"],
                "deal_when_stuck": case["deal_when_stuck"],
            }
            assert answer == expected, (variant, case["view"])
    assert all(seen.values()), f"the random positions miss a case: {seen}"
