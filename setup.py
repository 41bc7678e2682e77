"""Build hook: the solver's search as C extensions.

Two extensions, both optional (where no C compiler is at hand the package installs
without them, and the solver runs ``protocol/solver/search.py`` as plain Python):

- ``protocol.solver._fastsearch``, the search written in C (``protocol/solver/_fastsearch.c``), which
  the solver runs when present: about ten times faster than the compiled module below.
- ``protocol/solver/search.py`` and the modules it is written in (``SEARCH_MODULES``) compiled
  together by mypyc, about five times faster than the interpreter: the reference the C
  search is tested against, and what the solver runs when only mypyc could build.

Everything else about the package is declared in ``pyproject.toml``.
"""

from __future__ import annotations

import os
import sys

from setuptools import Extension, setup

SEARCH_MODULES = [f"protocol/solver/{name}.py" for name in ("position", "moves", "prune", "search")]
"""The search's modules, which mypyc compiles as one group (their calls to each other stay in C)."""


def _extensions() -> list[Extension]:
    if os.environ.get("SCORPION_PURE_PYTHON"):
        return []
    fast = Extension(
        "protocol.solver._fastsearch",
        ["protocol/solver/_fastsearch.c"],
        extra_compile_args=["-O3"] if os.name == "posix" else [],
        optional=True,  # no compiler: a warning, and protocol.solver.search runs the search
    )
    return [fast, *_mypyc()]


def _mypyc() -> list[Extension]:
    try:
        from mypyc.build import mypycify
    except ImportError:
        print("setup.py: mypyc is not available; protocol.solver.search stays plain Python", file=sys.stderr)
        return []
    try:
        # The search imports only the standard library: mypy need not follow the package's
        # other modules (whose dependencies the isolated build environment lacks). The group's
        # shared library goes beside the modules (protocol/solver/search__mypyc, as when the
        # search was one module) rather than at the top level under a hash of their names.
        extensions: list[Extension] = mypycify(
            ["--follow-imports=skip", *SEARCH_MODULES], opt_level="3", group_name="protocol.solver.search"
        )
    except (Exception, SystemExit) as error:  # mypy reports type errors by exiting
        print(f"setup.py: mypyc failed ({error}); protocol.solver.search stays plain Python", file=sys.stderr)
        return []
    for extension in extensions:
        extension.optional = True  # no compiler: a warning, and the plain module
    return extensions


setup(ext_modules=_extensions())
