"""The solver's search in C (``protocol/solver/_fastsearch.c``): :func:`protocol.solver.search.search`,
taking the position's parts instead of a ``Search`` and the rules as bits."""

from collections.abc import Callable, Sequence

def search(
    cols: Sequence[Sequence[int]],
    down: Sequence[int],
    stock: Sequence[int],
    cells: Sequence[int],
    found: int,
    wasp: bool,
    any_time: bool,
    rules: int,
    limit: int,
    seconds: float,
    timed: bool,
    clock: Callable[[], float] | None,
    memory: int,
    /,
) -> tuple[int, list[tuple[int, int, int]], int, int]: ...
def check_hashes(on: bool, /) -> None: ...
