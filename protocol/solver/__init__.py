"""The solver: decides with full information whether a deal or position can be won.

The public API lives in :mod:`protocol.solver.solver` and is re-exported here. The search
it runs is :mod:`protocol.solver.search` (plain Python, written in it and in
:mod:`~protocol.solver.position`, :mod:`~protocol.solver.moves` and
:mod:`~protocol.solver.prune`, compiled by mypyc when installed), and the same search
written in C, ``protocol/solver/_fastsearch.c``, which the solver prefers when it was built.
``docs/solver.md`` describes both and their proofs.
"""

from .solver import *  # noqa: F403  (the solver's API is the package's)
from .solver import __all__ as __all__
