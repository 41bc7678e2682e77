"""Perft: Board.legal_moves must count the same move trees as the naive generator did.

``perft.txt`` holds lines ``position ; depth ; count``, written by ``scripts/perft_fixture.py``
from the naive generator of ``test_properties.py``. Here the counts are recomputed with the
engine's own ``legal_moves``, ``push`` and ``pop``.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from protocol.game import VARIANTS, Board, board_from_text, board_to_text

HERE = Path(__file__).resolve().parent
FIXTURE = HERE / "perft.txt"
SCRIPT = HERE.parents[2] / "scripts" / "perft_fixture.py"


def read_fixture() -> list[tuple[str, int, int]]:
    entries = []
    for number, line in enumerate(FIXTURE.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = [field.strip() for field in line.split(";")]
        assert len(fields) == 3, f"perft.txt line {number} has {len(fields)} fields"
        entries.append((fields[0], int(fields[1]), int(fields[2])))
    return entries


ENTRIES = read_fixture()


def perft(board: Board, depth: int) -> int:
    moves = board.legal_moves()
    if depth == 1:
        return len(moves)
    total = 0
    for move in moves:
        board.push(move)
        total += perft(board, depth - 1)
        board.pop()
    return total


@pytest.mark.parametrize(("position", "depth", "count"), ENTRIES)
def test_legal_moves_perft_matches_the_fixture(position: str, depth: int, count: int) -> None:
    board = board_from_text(position)
    assert perft(board, depth) == count
    assert board_to_text(board) == position  # perft leaves the board as it found it
    assert board.move_stack == []


def test_fixture_covers_twenty_positions_every_variant_and_three_depths() -> None:
    positions: dict[str, list[int]] = {}
    for position, depth, _ in ENTRIES:
        positions.setdefault(position, []).append(depth)
    assert len(positions) >= 20
    assert all(depths == [1, 2, 3] for depths in positions.values())
    variants = {position.split(" ")[0] for position in positions}
    assert variants == set(VARIANTS)
    assert {position.split(" ")[1] for position in positions} == {"any-time", "when-stuck"}
    # Some positions have an empty column, some have dealt their reserve, some a played cell.
    assert any("/-/" in p or p.split(" ")[2].startswith("-/") for p in positions)
    assert any(p.split(" ")[0] != "three-blind-mice" and p.split(" ")[3] == "-" for p in positions)
    assert any(p.split(" ")[0] == "three-blind-mice" and "-" in p.split(" ")[3] for p in positions)
    # Counts are big enough to mean something.
    assert max(count for _, _, count in ENTRIES) > 1000


def test_fixture_positions_are_written_in_canonical_notation() -> None:
    for position, _, _ in ENTRIES:
        assert board_to_text(board_from_text(position)) == position


def test_fixture_is_what_the_script_generates() -> None:
    spec = importlib.util.spec_from_file_location("perft_fixture", SCRIPT)
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    assert script.render() == FIXTURE.read_text(encoding="utf-8")
