"""The terminal client's drawing: a click on any drawn card finds that card again."""

from __future__ import annotations

from typing import Any

import pytest

from client.tui.render import render_board, spot_at
from protocol.game import Board, player_view


def cursor_cells(view: dict[str, Any], spot: tuple[int, int], width: int) -> tuple[int, list[int]]:
    """Return the line and the cells where ``render_board`` draws the cursor on ``spot``."""
    text = render_board(view, width=width, cursor=spot)
    lines = text.plain.split("\n")
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    spans = [s for s in text.spans if "underline" in str(s.style)]
    assert len(spans) == 1, spans
    start, end = spans[0].start, spans[0].end
    line = next(i for i in range(len(lines)) if offsets[i] <= start < offsets[i + 1])
    return line, list(range(start - offsets[line], end - offsets[line]))


def long_view() -> dict[str, Any]:
    """A Wasp position with one long column, so that narrow drawings pack the cards closer."""
    view = player_view(Board.new("wasp", 7)).as_dict()
    columns = [list(col) for col in view["columns"]]
    columns[1] = columns[1] + [card for col in columns[2:] for card in col][:18]
    return {**view, "columns": columns}


VIEWS = [
    *(player_view(Board.new(variant, 424242)).as_dict() for variant in ("scorpion", "wasp")),
    player_view(Board.new("three-blind-mice", 31337)).as_dict(),
    long_view(),
]


@pytest.mark.parametrize("width", [40, 60, 78])
@pytest.mark.parametrize("view", VIEWS, ids=["scorpion", "wasp", "three-blind-mice", "long"])
def test_every_drawn_card_is_found_where_it_is_drawn(view: dict[str, Any], width: int) -> None:
    columns = [list(col) for col in view["columns"]] + [[card] for card in view.get("cells") or []]
    for column, cards in enumerate(columns):
        for row, card in enumerate(cards):
            if card is None and column >= len(view["columns"]):
                continue  # an empty reserve cell draws no card
            line, cells = cursor_cells(view, (column, row), width)
            assert line == column
            for x in cells:
                assert spot_at(view, x, line, width) == (column, row), (column, row, x)
        # A column's number is the column, not a card; so is the space past its last card.
        assert spot_at(view, 0, column, width) == (column, None)
        assert spot_at(view, 3 * 40, column, width) == (column, None)
    below = len(columns)
    assert spot_at(view, 5, below, width) is None
