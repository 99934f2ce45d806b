"""numba's kernel caches are dropped when the package sources change (bandit_envs.kernel_cache)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import bandit_envs  # noqa: F401  (runs the check at import)
from bandit_envs import kernel_cache


def _tree(root: Path) -> list[Path]:
    """Two packages with sources, numba caches and a bytecode file."""
    (root / "bandit_envs" / "__pycache__").mkdir(parents=True)
    (root / "agents" / "sub" / "__pycache__").mkdir(parents=True)
    (root / "bandit_envs" / "kernels.py").write_text("X = 1\n")
    (root / "agents" / "sub" / "algo.py").write_text("Y = 2\n")
    return [root / "bandit_envs", root / "agents"]


def _caches(dirs: list[Path]) -> list[Path]:
    files = [
        dirs[0] / "__pycache__" / "kernels.k-1.py311.nbi",
        dirs[0] / "__pycache__" / "kernels.k-1.py311.1.nbc",
        dirs[1] / "sub" / "__pycache__" / "algo.run-9.py311.nbi",
    ]
    for path in files:
        path.write_bytes(b"cached")
    return files


def test_caches_go_when_any_source_changes_and_stay_otherwise(tmp_path) -> None:
    dirs = _tree(tmp_path)
    pyc = dirs[0] / "__pycache__" / "kernels.cpython-311.pyc"
    pyc.write_bytes(b"bytecode")
    caches = _caches(dirs)
    assert kernel_cache.refresh(dirs)  # no stamp yet: the caches' sources are unknown
    assert not any(p.exists() for p in caches) and pyc.exists()
    stamp = dirs[0] / "__pycache__" / kernel_cache.STAMP
    assert stamp.read_text().strip() == kernel_cache.sources_hash(dirs)
    caches = _caches(dirs)
    assert not kernel_cache.refresh(dirs)  # same sources: kept
    assert all(p.exists() for p in caches)
    (dirs[1] / "sub" / "algo.py").write_text("Y = 3\n")  # a callee elsewhere changes
    assert kernel_cache.refresh(dirs)
    assert not any(p.exists() for p in caches)
    assert not kernel_cache.refresh(dirs)


def test_the_hash_covers_names_and_contents(tmp_path) -> None:
    dirs = _tree(tmp_path)
    before = kernel_cache.sources_hash(dirs)
    (dirs[0] / "kernels.py").rename(dirs[0] / "renamed.py")
    assert kernel_cache.sources_hash(dirs) != before
    (dirs[0] / "renamed.py").rename(dirs[0] / "kernels.py")
    assert kernel_cache.sources_hash(dirs) == before
    (dirs[0] / "kernels.py").write_text("X = 2\n")
    assert kernel_cache.sources_hash(dirs) != before


def test_missing_directories_are_ignored(tmp_path) -> None:
    assert not kernel_cache.refresh([tmp_path / "nowhere"])


def test_the_installed_packages_are_stamped_at_import() -> None:
    dirs = kernel_cache.package_dirs()
    assert [d.name for d in dirs] == ["bandit_envs", "agents"]
    if not os.access(dirs[0], os.W_OK):
        pytest.skip(f"{dirs[0]} is read-only: numba keeps its caches elsewhere")
    stamp = dirs[0] / "__pycache__" / kernel_cache.STAMP
    assert stamp.read_text().strip() == kernel_cache.sources_hash(dirs)
