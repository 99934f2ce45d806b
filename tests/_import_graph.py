"""The import graph of the ``agents`` package, for the layout tests."""

from __future__ import annotations

import ast
from pathlib import Path

import agents

ROOT = Path(agents.__file__).resolve().parent


def module_name(path: Path) -> str:
    """The dotted name of the module at ``path`` (a package's ``__init__`` is the package)."""
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in ROOT.rglob("*.py")}


def imports(path: Path) -> set[str]:
    """The ``agents`` modules ``path`` imports, at any depth (function bodies too).

    ``from package import module`` imports ``module`` (not the package's own names).
    """
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                out.add(sub if sub in MODULES else node.module)
    return {m for m in out if m in MODULES}


def graph() -> dict[str, set[str]]:
    """Module -> the ``agents`` modules it imports."""
    return {name: imports(path) - {name} for name, path in MODULES.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in edges:
        if v not in index:
            visit(v)
    return out
