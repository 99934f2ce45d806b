"""The import graph of a package of this project, for the layout tests."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import agents

ROOT = Path(agents.__file__).resolve().parent


def package_modules(package: str) -> dict[str, Path]:
    """Dotted module name -> file of every module of ``package`` (``__init__`` is the package)."""
    root = Path(importlib.import_module(package).__file__).resolve().parent
    out = {}
    for path in root.rglob("*.py"):
        parts = path.relative_to(root.parent).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


MODULES = package_modules("agents")


def imports(path: Path, modules: dict[str, Path] = MODULES) -> set[str]:
    """The modules of ``modules`` that ``path`` imports, at any depth (function bodies too).

    ``from package import module`` imports ``module`` (not the package's own names).
    """
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                out.add(sub if sub in modules else node.module)
    return {m for m in out if m in modules}


def graph(modules: dict[str, Path] = MODULES) -> dict[str, set[str]]:
    """Module -> the modules of the same package it imports (``agents`` by default)."""
    return {name: imports(path, modules) - {name} for name, path in modules.items()}


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
