"""numba's on-disk kernel caches, dropped when the package sources change.

numba keys a cached kernel on the source file the kernel is written in, not on the
modules it calls: after an update that changes a shared kernel (an engine routine, a
sampler) the kernels of other modules keep machine code compiled against the old one,
and that stale code can crash the interpreter. So, when ``bandit_envs`` is first imported
(``agents`` imports it first too), :func:`refresh` hashes the sources of both packages
and, if the hash differs from the one recorded beside the caches, deletes every numba
cache file (``*.nbi``, ``*.nbc``) of both packages; the kernels compile again on first
use. Hashing the sources costs about 10 ms. Where the package directories are not
writable, numba keeps its caches elsewhere and nothing is deleted.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

__all__ = ["CACHE_SUFFIXES", "STAMP", "package_dirs", "refresh", "sources_hash"]

#: The files numba writes for a cached kernel (index and compiled code).
CACHE_SUFFIXES = (".nbi", ".nbc")
#: The file, in the first package's ``__pycache__``, holding the hash of the sources the
#: caches were compiled from.
STAMP = "topk-kernel-sources.sha256"

_done = False


def package_dirs() -> list[Path]:
    """The directories of ``bandit_envs`` and ``agents`` (installed side by side)."""
    here = Path(__file__).resolve().parent
    return [here, here.parent / "agents"]


def sources_hash(dirs: list[Path]) -> str:
    """SHA-256 of every ``.py`` file under ``dirs`` (relative paths and contents)."""
    digest = hashlib.sha256()
    for root in dirs:
        for path in sorted(root.rglob("*.py")):
            digest.update(f"{root.name}/{path.relative_to(root).as_posix()}\0".encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def refresh(dirs: list[Path] | None = None) -> bool:
    """Delete the kernel caches under ``dirs`` if their sources changed; True if it did.

    ``dirs`` defaults to :func:`package_dirs`. The new hash is recorded in
    ``dirs[0]/__pycache__/`` :data:`STAMP`. Errors of the file system (a read-only
    install) leave everything as it is.
    """
    dirs = [Path(d) for d in (package_dirs() if dirs is None else dirs) if Path(d).is_dir()]
    if not dirs:
        return False
    try:
        new = sources_hash(dirs)
        stamp = dirs[0] / "__pycache__" / STAMP
        if stamp.is_file() and stamp.read_text().strip() == new:
            return False
        for root in dirs:
            for cache in root.rglob("__pycache__"):
                for path in cache.iterdir():
                    if path.suffix in CACHE_SUFFIXES:
                        path.unlink(missing_ok=True)
        stamp.parent.mkdir(parents=True, exist_ok=True)
        partial = stamp.with_name(f"{STAMP}.{os.getpid()}")
        partial.write_text(new + "\n")
        partial.replace(stamp)  # atomic: another process reads the old or the new hash
    except OSError:
        return False
    return True


def refresh_once() -> None:
    """:func:`refresh` for this installation, once per process."""
    global _done
    if not _done:
        _done = True
        refresh()
