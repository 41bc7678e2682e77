"""The worked examples of the rules in docs/protocol.md (section 2.2), checked against the engine."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from protocol.game import Board, ReserveRule, move_from_text, move_text
from protocol.game.notation import board_from_text

DOC = Path(__file__).resolve().parents[3] / "docs" / "protocol.md"


def examples() -> list[dict[str, str]]:
    """Return each ``position`` block of the document as its fields (the first line is the position)."""
    blocks = re.findall(r"```position\n(.*?)\n```", DOC.read_text(encoding="utf-8"), flags=re.S)
    found = []
    for block in blocks:
        first, *rest = block.split("\n")
        fields = {"position": first}
        for line in rest:
            key, _, value = line.partition(":")
            fields[key.strip()] = value.strip()
        found.append(fields)
    return found


def test_the_document_has_worked_examples_of_every_rule() -> None:
    shown = examples()
    assert len(shown) >= 9
    variants = {e["position"].split()[0] for e in shown}
    assert variants == {"scorpion", "scorpion-ii", "wasp", "three-blind-mice"}
    assert {e["position"].split()[1] for e in shown} == {"any-time", "when-stuck"}
    assert {e.get("status") for e in shown} >= {"won", "stuck", "in_play"}


@pytest.mark.parametrize("example", examples(), ids=lambda e: e["position"][:40])
def test_a_worked_example_is_what_the_engine_does(example: dict[str, str]) -> None:
    board = board_from_text(example["position"])
    assert sorted(move_text(m) for m in board.legal_moves()) == sorted(example["legal"].split())
    if "play" in example:
        board.play(move_from_text(example["play"]))
        assert board.text() == example["after"]
    if "status" in example:
        assert board.status().value == example["status"]


def test_the_opening_example_is_the_deal_it_names() -> None:
    opening = next(e for e in examples() if e["position"].startswith("scorpion when-stuck 2h6s"))
    assert Board.new("scorpion", 22, ReserveRule.WHEN_STUCK).text() == opening["position"]
