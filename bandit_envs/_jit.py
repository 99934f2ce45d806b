"""numba's on-disk cache, made safe for kernels that call kernels of other modules.

numba keys a cached function by its own source file only, but a compiled function
embeds the code of the jitted functions it calls: after an edit of
``agents/engine/scheduler.py`` an agent module's cached episode loop would still run the old
engine. This module registers cache locators for the project's files whose source
stamp also covers every compiled source the file can reach: the files of ``bandit_envs``
and ``agents`` that use numba among its project imports, followed transitively
(``import agents.engine``, ``from agents import engine``, ``from agents.engine import x``
and relative imports). An edit of the engine therefore recompiles every agent
(about a minute on two cores); an edit of one agent's module recompiles that agent only.
Import it before any ``@numba.njit(cache=True)`` of the project runs (``bandit_envs``
and ``agents`` do).
"""

from __future__ import annotations

import ast
import functools
import hashlib
from pathlib import Path

from numba.core import caching

_ROOT = Path(__file__).resolve().parent.parent
_PACKAGES = (_ROOT / "bandit_envs", _ROOT / "agents")
_TOP = frozenset(p.name for p in _PACKAGES)


def _module_file(dotted: str) -> Path | None:
    """The project file of module ``dotted`` (a package's ``__init__.py``), or None."""
    parts = dotted.split(".")
    if parts[0] not in _TOP:
        return None
    base = _ROOT.joinpath(*parts)
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _package_of(path: Path) -> str:
    rel = path.relative_to(_ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    else:
        parts.pop()  # a module's package
    return ".".join(parts)


@functools.cache
def _imports(path: Path) -> tuple[Path, ...]:
    """Project files imported by the file at ``path`` (one level)."""
    try:
        tree = ast.parse(path.read_bytes())
    except (OSError, SyntaxError):
        return ()
    found: list[Path] = []

    def add(dotted: str) -> None:
        target = _module_file(dotted)
        if target is not None:
            found.append(target)

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                pkg = _package_of(path).split(".")
                pkg = pkg[: len(pkg) - (node.level - 1)]
                module = ".".join(pkg + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            for alias in node.names:
                sub = _module_file(f"{module}.{alias.name}")
                if sub is not None:  # ``from package import module``
                    found.append(sub)
                else:
                    add(module)
    return tuple(sorted(set(found)))


@functools.cache
def _digest(path: Path) -> str:
    """Hash of the numba-using project sources reachable from ``path`` by imports."""
    seen: set[Path] = set()
    todo = [path]
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        todo.extend(_imports(current))
    h = hashlib.sha256()
    for source_path in sorted(seen):
        source = source_path.read_bytes()
        if b"numba" not in source and source_path != path:
            continue  # no compiled code there
        h.update(str(source_path.relative_to(_ROOT)).encode())
        h.update(source)
    return h.hexdigest()


def _ours(py_file: str) -> Path | None:
    try:
        path = Path(py_file).resolve()
    except OSError:
        return None
    return path if any(package in path.parents for package in _PACKAGES) else None


class _ProjectStamp:
    """Mixin: the source stamp of a project file also covers the sources it imports."""

    @classmethod
    def from_function(cls, py_func, py_file):  # noqa: ANN001, ANN206 (numba's signature)
        if _ours(py_file) is None:
            return None
        return super().from_function(py_func, py_file)

    def get_source_stamp(self):  # noqa: ANN201
        path = _ours(self._py_file)
        return (super().get_source_stamp(), _digest(path) if path else "")


class _UserProvided(_ProjectStamp, caching.UserProvidedCacheLocator):
    pass


class _InTree(_ProjectStamp, caching.InTreeCacheLocator):
    pass


class _UserWide(_ProjectStamp, caching.UserWideCacheLocator):
    pass


def install() -> None:
    """Put the project's locators first (idempotent)."""
    classes = caching.CacheImpl._locator_classes
    if _InTree not in classes:
        # numba's own order: NUMBA_CACHE_DIR if set, the package's __pycache__, the user's cache
        classes[0:0] = [_UserProvided, _InTree, _UserWide]


install()
