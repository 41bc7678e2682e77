"""The solver: decides with full information whether a deal or position can be won.

The public API lives in :mod:`protocol.solver.solver` and is re-exported here. The search
it runs is :mod:`protocol.solver.search` (plain Python, compiled by mypyc when installed),
and the same search written in C, ``protocol/solver/_fastsearch.c``, which the solver
prefers when it was built. ``docs/solver.md`` describes both and their proofs.
"""

from .solver import (
    NATIVE,
    Budget,
    Solution,
    Verdict,
    canonical_key,
    first_losing_move,
    is_winnable,
    percentile,
    pick_winnable,
    run_search,
    solve,
    solve_deal,
    wilson_interval,
    winning_move,
)

__all__ = [
    "NATIVE",
    "Budget",
    "Solution",
    "Verdict",
    "canonical_key",
    "first_losing_move",
    "is_winnable",
    "percentile",
    "pick_winnable",
    "run_search",
    "solve",
    "solve_deal",
    "wilson_interval",
    "winning_move",
]
