"""The layering rules of ARCHITECTURE.md, enforced by reading every import."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FORBIDDEN = {
    "protocol": {"asyncio", "socket", "redis", "websockets", "server", "client", "selectors", "ssl"},
    "server": {"client"},
    "client": {"server"},
}


def imported_roots(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    roots: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", "") == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            roots.add(node.args[0].value.split(".")[0])
    return roots


def files_of(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_package_imports_only_what_its_layer_allows(package: str) -> None:
    offenders = []
    for path in files_of(package):
        bad = imported_roots(path) & FORBIDDEN[package]
        if bad:
            offenders.append(f"{path.relative_to(ROOT)} imports {sorted(bad)}")
    assert not offenders, "\n".join(offenders)


def test_layer_check_catches_a_forbidden_import(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text("import asyncio\nfrom redis.asyncio import Redis\nfrom .x import y\n")
    assert imported_roots(sample) == {"asyncio", "redis"}


def test_every_layer_has_source_files() -> None:
    for package in FORBIDDEN:
        assert files_of(package), f"{package}/ has no Python files"


# ---------------------------------------------------------------- import circles

TREE = ("protocol", "server", "client")


def module_name(path: Path, root: Path) -> str:
    """Return the dotted module name of a source file under ``root``."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def import_graph(root: Path, packages: tuple[str, ...] = TREE) -> dict[str, set[str]]:
    """Return, for every module of ``packages``, the modules of the tree it imports.

    Every import counts, those under ``TYPE_CHECKING`` and inside functions too: a circle
    hidden from the interpreter is still a circle to a reader.
    """
    paths = [p for package in packages for p in sorted((root / package).rglob("*.py"))]
    modules = {module_name(p, root): p for p in paths}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        targets: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = name.split(".") if is_package else name.split(".")[:-1]
                    base = base[: len(base) - (node.level - 1)]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                targets.add(source)
                targets.update(f"{source}.{alias.name}" for alias in node.names)
        # A module's own packages are imported before it in any case: no edge to them.
        graph[name] = {t for t in targets if t in modules and t != name and not name.startswith(t + ".")}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Return the import circles of a graph: its strongly connected parts of two or more."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            part = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                part.append(member)
                if member == node:
                    break
            if len(part) > 1:
                found.append(sorted(part))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_module_of_the_tree_is_part_of_an_import_circle() -> None:
    found = circles(import_graph(ROOT))
    assert not found, "import circles: " + "; ".join(" <-> ".join(part) for part in found)


def test_the_circle_check_catches_a_circle_hidden_behind_type_checking(tmp_path: Path) -> None:
    package = tmp_path / "server"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from .b import thing\n")
    (package / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from server.a import other\nthing = 1\n"
    )
    (package / "c.py").write_text("from . import a\n")
    graph = import_graph(tmp_path, ("server",))
    assert graph["server.c"] == {"server.a"}
    assert circles(graph) == [["server.a", "server.b"]]


# ---------------------------------------------------------------- the server's floors

SERVER_FILES = files_of("server")


def test_only_main_imports_the_server_object() -> None:
    graph = import_graph(ROOT, ("server",))
    importers = sorted(name for name, targets in graph.items() if "server.app" in targets)
    assert importers == ["server.main"]


def test_every_client_message_type_has_exactly_one_handler() -> None:
    from protocol.wire.message import CLIENT_TYPES, MESSAGES
    from server.handlers import HANDLERS

    served = {kind.TYPE for kind in HANDLERS}
    assert served == set(CLIENT_TYPES), {
        "without a handler": sorted(set(CLIENT_TYPES) - served),
        "not a client message": sorted(served - set(CLIENT_TYPES)),
    }
    assert all(MESSAGES[kind.TYPE] is kind for kind in HANDLERS)


def test_only_the_store_touches_redis() -> None:
    offenders = []
    for path in SERVER_FILES:
        relative = path.relative_to(ROOT)
        if relative.parts[:2] == ("server", "store"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr == "redis":
                offenders.append(f"{relative}:{node.lineno}")
    assert not offenders, "Redis used above the store: " + ", ".join(offenders)


# ---------------------------------------------------------------- the whole tree

SOURCE_FOLDERS = ("protocol", "server", "client", "tests", "bench", "scripts")


def python_files() -> list[Path]:
    """Every Python file of the project (the C search, ``_fastsearch.c``, is not one)."""
    return [p for folder in SOURCE_FOLDERS for p in sorted((ROOT / folder).rglob("*.py"))]


def test_no_python_file_of_the_tree_is_over_600_lines() -> None:
    long = {
        str(p.relative_to(ROOT)): n
        for p in python_files()
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > 600
    }
    assert not long, long


CLOCK_AND_CHANCE = {"time", "secrets", "uuid"}
"""Modules the core never imports: it reads no clock and draws nothing at random."""
CLOCK_CALLS = {"now", "utcnow", "today", "urandom", "time_ns", "monotonic", "perf_counter"}


def clock_and_chance(path: Path) -> list[str]:
    """Return where a file reads a clock or draws at random: an import of ``time``,
    ``secrets`` or ``uuid``, a call such as ``datetime.now()`` or ``os.urandom()``, or any
    use of ``random`` but a seeded generator (``random.Random(seed)``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name.split(".")[0] for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module.split(".")[0]]
            if names == ["random"]:
                names = [f"random.{alias.name}" for alias in node.names if alias.name != "Random"]
        else:
            names = []
        found += [f"{path.name}:{node.lineno} imports {name}" for name in names if name in CLOCK_AND_CHANCE]
        found += [f"{path.name}:{node.lineno} imports {name}" for name in names if name.startswith("random.")]
        if isinstance(node, ast.Attribute):
            if node.attr in CLOCK_CALLS:
                found.append(f"{path.name}:{node.lineno} calls {node.attr}")
            elif isinstance(node.value, ast.Name) and node.value.id == "random" and node.attr != "Random":
                found.append(f"{path.name}:{node.lineno} uses random.{node.attr}")
    return found


def test_the_core_reads_no_clock_and_draws_nothing_at_random() -> None:
    found = [where for path in files_of("protocol") for where in clock_and_chance(path)]
    assert not found, found


def test_the_clock_and_chance_check_catches_each_form(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import time\nimport random\nfrom secrets import token_hex\nimport datetime, os\n"
        "rng = random.Random(7)\nx = random.random()\nd = datetime.date.today()\nb = os.urandom(4)\n"
    )
    found = clock_and_chance(sample)
    assert [f.split(" ", 1)[1] for f in found] == [
        "imports time",
        "imports secrets",
        "uses random.random",
        "calls today",
        "calls urandom",
    ], found


def test_the_architecture_document_names_every_module() -> None:
    document = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    unnamed = [
        str(path.relative_to(ROOT))
        for package in TREE
        for path in files_of(package)
        if path.name != "__init__.py" and path.name not in document
    ]
    assert not unnamed, f"docs/architecture.md does not name: {unnamed}"
