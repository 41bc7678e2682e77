"""The solver's search as installed (a C extension built by mypyc) against its Python source.

``pip install`` compiles ``protocol/solver/search.py`` and the modules it is written in with
mypyc (``setup.py``); the same files also run as plain Python where no compiler is at hand.
These tests check that the installed modules are the compiled ones (so the benchmarks
measure what users run), that the constants the search keeps for itself match the
engine's, and that the compiled and the plain search do exactly the same work: the same
verdicts, node counts and winning lines.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import random
import sys
from pathlib import Path
from types import ModuleType

import pytest

import protocol.solver.moves
import protocol.solver.position
import protocol.solver.prune
import protocol.solver.search as installed
from protocol.game import Board, board_from_text
from protocol.game import board as board_module
from protocol.game.board import NO_CARD
from protocol.game.move import CELL_BASE
from protocol.solver.solver import _state

SOURCE = Path(installed.__file__).with_name("search.py")
MODULES = (protocol.solver.position, protocol.solver.moves, protocol.solver.prune, installed)
"""The search's modules, which setup.py compiles together."""
PLAIN = "protocol._search_source"
"""The package the plain search's modules are loaded under."""


class _Sources(importlib.abc.MetaPathFinder):
    """Find the modules of the package ``PLAIN`` as the search's Python sources."""

    def find_spec(
        self, name: str, path: object = None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        if not name.startswith(PLAIN + "."):
            return None
        return importlib.util.spec_from_file_location(name, SOURCE.with_name(name[len(PLAIN) + 1 :] + ".py"))


def _plain() -> ModuleType:
    """Load ``protocol/solver/search.py`` and the modules it imports as plain Python, under names apart."""
    package = ModuleType(PLAIN)
    package.__path__ = []
    finder = _Sources()
    sys.modules[PLAIN] = package
    sys.meta_path.insert(0, finder)
    try:
        return importlib.import_module(PLAIN + ".search")
    finally:
        sys.meta_path.remove(finder)
        for name in [name for name in sys.modules if name == PLAIN or name.startswith(PLAIN + ".")]:
            del sys.modules[name]


def test_the_installed_search_is_the_compiled_extension() -> None:
    for module in MODULES:
        if os.environ.get("SCORPION_PURE_PYTHON"):
            assert module.__file__ is not None and module.__file__.endswith(".py"), (
                f"built without mypyc, yet {module.__name__} is an extension"
            )
        else:
            # pip install ran setup.py, which compiles the modules where a C compiler exists.
            assert module.__file__ is not None and not module.__file__.endswith(".py"), (
                f"{module.__name__} runs as plain Python: the package was installed without "
                "building the mypyc extension (see setup.py)"
            )
    assert SOURCE.is_file()


def test_the_search_keeps_the_engines_constants() -> None:
    assert installed.CELL_BASE == CELL_BASE
    assert installed.NO_CARD == NO_CARD
    # The runs the search collects are the engine's (it keeps its own copy so that it
    # imports nothing from the package and compiles alone).
    assert protocol.solver.position._RUNS == board_module._RUNS


def _run(module: ModuleType, board: Board, nodes: int) -> tuple[int, list[tuple[int, int, int]], int]:
    reference = _state(board)
    state = module.Search(
        board.columns,
        board.down,
        board.stock,
        board.cells,
        len(board.foundations),
        reference.wasp,
        reference.any_time,
        reference.rules,
    )
    result: tuple[int, list[tuple[int, int, int]], int] = module.search(state, nodes, None, None)
    return result


@pytest.mark.parametrize("variant", ["scorpion", "scorpion-ii", "wasp", "three-blind-mice"])
def test_the_compiled_and_the_plain_search_do_the_same_work(variant: str) -> None:
    plain = _plain()
    assert plain.__file__ == str(SOURCE)
    rng = random.Random(f"build {variant}")
    outcomes = set()
    for index in range(16):
        rule = ("any-time", "when-stuck")[index % 2]
        board = Board.new(variant, rng.randrange(32001, 10**20), rule)
        ours = _run(installed, board, 20_000)
        theirs = _run(plain, board, 20_000)
        assert ours == theirs, (variant, rule, board)
        outcomes.add(ours[0])
    # The deals cover more than one outcome, so the comparison is not of empty searches.
    assert len(outcomes) >= 2, outcomes


def test_the_compiled_and_the_plain_position_agree_on_keys_and_moves() -> None:
    plain = _plain()
    board = board_from_text(
        "scorpion any-time 5CKSQSJSTS9S8S7S6S5S4S3S2S/AS/-/KCQCJCTC9C8C7C6C/4C3C2CAC/-/- - DH"
    )
    ours = _state(board)
    theirs = plain.Search(board.columns, board.down, board.stock, board.cells, 0, False, True, ours.rules)
    assert ours.key() == theirs.key()
    assert ours.moves() == theirs.moves()
    assert ours.commuting(1 << 51, 39, 0) == theirs.commuting(1 << 51, 39, 0)
