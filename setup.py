"""Build hook: compile the solver's search (``protocol/search.py``) to a C extension.

mypyc turns the type-annotated module into C, about five times faster than the interpreter
on the solver's workloads. The extension is optional: where no C compiler is at hand, or
mypyc cannot be imported, the package installs with the same module as plain Python.
Everything else about the package is declared in ``pyproject.toml``.
"""

from __future__ import annotations

import os
import sys

from setuptools import Extension, setup


def _extensions() -> list[Extension]:
    if os.environ.get("SCORPION_PURE_PYTHON"):
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:
        print("setup.py: mypyc is not available; the solver runs as plain Python", file=sys.stderr)
        return []
    try:
        # The search imports only the standard library: mypy need not follow the package's
        # other modules (whose dependencies the isolated build environment lacks).
        extensions: list[Extension] = mypycify(
            ["--follow-imports=skip", "protocol/search.py"], opt_level="3"
        )
    except (Exception, SystemExit) as error:  # mypy reports type errors by exiting
        print(f"setup.py: mypyc failed ({error}); the solver runs as plain Python", file=sys.stderr)
        return []
    for extension in extensions:
        extension.optional = True  # no compiler: a warning, and the plain module
    return extensions


setup(ext_modules=_extensions())
