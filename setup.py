"""Build hook: the solver's search as C extensions.

Two extensions, both optional (where no C compiler is at hand the package installs
without them, and the solver runs ``protocol/solver/search.py`` as plain Python):

- ``protocol.solver._fastsearch``, the search written in C (``protocol/solver/_fastsearch.c``), which
  the solver runs when present: about ten times faster than the compiled module below.
- ``protocol/solver/search.py`` compiled by mypyc, about five times faster than the interpreter:
  the reference the C search is tested against, and what the solver runs when only mypyc
  could build.

Everything else about the package is declared in ``pyproject.toml``.
"""

from __future__ import annotations

import os
import sys

from setuptools import Extension, setup


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
        # other modules (whose dependencies the isolated build environment lacks).
        extensions: list[Extension] = mypycify(
            ["--follow-imports=skip", "protocol/solver/search.py"], opt_level="3"
        )
    except (Exception, SystemExit) as error:  # mypy reports type errors by exiting
        print(f"setup.py: mypyc failed ({error}); protocol.solver.search stays plain Python", file=sys.stderr)
        return []
    for extension in extensions:
        extension.optional = True  # no compiler: a warning, and the plain module
    return extensions


setup(ext_modules=_extensions())
