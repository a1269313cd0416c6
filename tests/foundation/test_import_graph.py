"""The package's imports form no circle, and the library never imports its test fixtures.

Every ``import`` statement counts, also those inside functions: a lazy import hides a circle
from the interpreter, not from the design. Only ``if TYPE_CHECKING:`` imports, which never
run, are left out.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import medrealmm

ROOT = Path(medrealmm.__file__).parent
PACKAGE = "medrealmm"
FIXTURES = f"{PACKAGE}.testing"


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def modules() -> dict[str, Path]:
    return {_module_name(path): path for path in sorted(ROOT.rglob("*.py"))}


def _type_checking_only(node: ast.AST) -> bool:
    if not isinstance(node, ast.If):
        return False
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _statements(tree: ast.AST) -> Iterator[ast.AST]:
    for node in ast.iter_child_nodes(tree):
        yield node
        if _type_checking_only(node):
            yield from (n for orelse in node.orelse for n in [orelse, *_statements(orelse)])
        else:
            yield from _statements(node)


def _imported(module: str, path: Path) -> Iterator[str]:
    """Every medrealmm module ``module`` imports; ``from pkg import sub`` names ``pkg.sub``."""
    is_package = path.name == "__init__.py"
    for node in _statements(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".")
                anchor = anchor[: len(anchor) - node.level + (1 if is_package else 0)]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                yield candidate if candidate in modules() else base


@cache
def graph() -> dict[str, set[str]]:
    known = modules()
    return {
        name: {target for target in _imported(name, path) if target in known and target != name}
        for name, path in known.items()
    }


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """One example circle per strongly connected component larger than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(edges.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def _area(module: str) -> str:
    """``medrealmm.mccp.extract`` -> ``medrealmm.mccp``; top-level modules stand alone."""
    return ".".join(module.split(".")[:2])


def test_no_module_imports_form_a_circle() -> None:
    within_areas = {
        name: {t for t in targets if _area(t) == _area(name) and t != _area(name)}
        for name, targets in graph().items()
    }
    assert _cycles(within_areas) == []


def test_no_two_areas_import_each_other() -> None:
    areas: dict[str, set[str]] = {}
    for name, targets in graph().items():
        if name == PACKAGE:  # the top-level API re-exports every area; nothing imports it
            continue
        areas.setdefault(_area(name), set()).update(
            _area(t) for t in targets if _area(t) != _area(name)
        )
    assert _cycles(areas) == []


def test_the_library_imports_neither_its_facade_nor_its_fixtures() -> None:
    offenders = sorted(
        f"{name} -> {target}"
        for name, targets in graph().items()
        if not name.startswith(FIXTURES)
        for target in targets
        if target.startswith(FIXTURES) or (target == PACKAGE and name != PACKAGE)
    )
    assert offenders == []


def test_the_walk_sees_the_imports() -> None:
    """Guards the walker itself: known edges, relative and lazy ones included."""
    edges = graph()
    assert "medrealmm.llm.types" in edges["medrealmm.llm.client"]
    assert "medrealmm.llm.offline" in edges["medrealmm.llm"]
    assert "medrealmm.mccp" in edges["medrealmm.cli.mccp"]  # imported inside a function
    assert "medrealmm.review.refining" not in edges["medrealmm.review.context"]  # typing only
