"""Layers point down: the libraries never import the application (docs/architecture.md)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# package -> packages it must never import
FORBIDDEN = {"ingest": {"graph", "hopwise", "ui"}, "graph": {"hopwise", "ui"}, "hopwise": {"ui"}}


def imported_packages(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module.split(".")[0])
    return found


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_package_never_imports_a_layer_above(package: str) -> None:
    offenders = {
        str(path.relative_to(ROOT)): sorted(imported_packages(path) & FORBIDDEN[package])
        for path in sorted((ROOT / package).rglob("*.py"))
        if imported_packages(path) & FORBIDDEN[package]
    }
    assert offenders == {}


def module_imports(path: Path) -> list[tuple[str, list[str]]]:
    """(module, names) of every `from X import names` in the file, at any depth."""
    return [
        (node.module, [alias.name for alias in node.names])
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ImportFrom) and node.module and not node.level
    ]


def test_no_module_imports_a_private_name_of_another() -> None:
    own = ("ingest", "graph", "hopwise", "ui")
    offenders = [
        f"{path.relative_to(ROOT)}: {module}.{name}"
        for package in own
        for path in sorted((ROOT / package).rglob("*.py"))
        for module, names in module_imports(path)
        if module.split(".")[0] in own
        for name in names
        if name.startswith("_") and not name.startswith("__")
    ]
    assert offenders == []


def module_graph() -> dict[str, set[str]]:
    """Every module of the four packages -> the modules of them it imports, at module level or
    inside a function (an import moved into a function to dodge a cycle still is one), not
    under TYPE_CHECKING. `from pkg import submodule` is an import of the submodule, not of the
    package's own __init__."""
    modules: dict[str, Path] = {}
    for package in FORBIDDEN.keys() | {"ui"}:
        for path in (ROOT / package).rglob("*.py"):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            modules[name.removesuffix(".__init__")] = path
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        deps: set[str] = set()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        typing_only = {
            id(inner)
            for node in ast.walk(tree)
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
            for inner in ast.walk(node)
        }
        for node in ast.walk(tree):
            if id(node) in typing_only:
                continue
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                subs = [f"{node.module}.{a.name}" for a in node.names]
                found = [sub for sub in subs if sub in modules]
                deps.update(found)
                if len(found) < len(subs) and node.module in modules:
                    deps.add(node.module)
            elif isinstance(node, ast.Import):
                deps.update(alias.name for alias in node.names if alias.name in modules)
        graph[name] = deps - {name}
    return graph


def test_no_module_imports_itself_back_through_others() -> None:
    graph = module_graph()
    assert len(graph) > 100  # the walk found the codebase
    done: set[str] = set()

    def visit(module: str, path: tuple[str, ...]) -> None:
        assert module not in path, " -> ".join((*path, module))
        if module in done:
            return
        for child in sorted(graph[module]):
            visit(child, (*path, module))
        done.add(module)

    for module in sorted(graph):
        visit(module, ())


MAX_READER_LINES = 600  # issue 44: the offline reader stays in files one can read whole


def test_no_file_of_the_offline_reader_is_over_600_lines() -> None:
    long = {
        str(path.relative_to(ROOT)): lines
        for path in sorted((ROOT / "graph" / "offline").glob("*.py"))
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_READER_LINES
    }
    assert long == {}


UI_NEVER = {"ingest.pipeline", "ingest.vectors"}  # ingesting and embedding: the app does that
UI_NEVER_NAMES = {"MilvusStore", "OriginalStore", "ingest_bytes", "ingest_file", "ingest_paths"}


def test_the_ui_reads_and_changes_documents_only_through_the_app() -> None:
    """Listing, reading, ingesting and deleting documents and their originals go through
    hopwise.app.Hopwise (one facade, access checks included); ui/ imports no store or
    pipeline to do them itself."""
    offenders = [
        f"{path.relative_to(ROOT)}: {module} {names}"
        for path in sorted((ROOT / "ui").rglob("*.py"))
        for module, names in module_imports(path)
        if module in UI_NEVER or set(names) & UI_NEVER_NAMES
    ]
    assert offenders == []
