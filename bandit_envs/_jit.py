"""numba's on-disk cache, made safe for kernels that call kernels of other modules.

numba keys a cached function by its own source file only, but a compiled function
embeds the code of the jitted functions it calls: after an edit of
``agents/engine.py`` an agent module's cached episode loop would still run the old
engine. This module registers cache locators for the project's files whose source
stamp also covers every compiled source of the project (the files of ``bandit_envs``
and ``agents`` that use numba), so that an edit of any of them recompiles every
kernel once (about a minute on two cores).
Import it before any ``@numba.njit(cache=True)`` of the project runs (``bandit_envs``
and ``agents`` do).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from numba.core import caching

_ROOT = Path(__file__).resolve().parent.parent
_PACKAGES = (_ROOT / "bandit_envs", _ROOT / "agents")


def _project_digest() -> str:
    h = hashlib.sha256()
    for package in _PACKAGES:
        if not package.is_dir():
            continue
        for path in sorted(package.rglob("*.py")):
            source = path.read_bytes()
            if b"numba" not in source:
                continue  # no compiled code there
            h.update(str(path.relative_to(_ROOT)).encode())
            h.update(source)
    return h.hexdigest()


_DIGEST = _project_digest()


def _ours(py_file: str) -> bool:
    try:
        path = Path(py_file).resolve()
    except OSError:
        return False
    return any(package in path.parents for package in _PACKAGES)


class _ProjectStamp:
    """Mixin: the source stamp of a project file also covers the project's sources."""

    @classmethod
    def from_function(cls, py_func, py_file):  # noqa: ANN001, ANN206 (numba's signature)
        if not _ours(py_file):
            return None
        return super().from_function(py_func, py_file)

    def get_source_stamp(self):  # noqa: ANN201
        return (super().get_source_stamp(), _DIGEST)


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
