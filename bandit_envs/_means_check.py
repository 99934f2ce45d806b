"""The validation of ``(means, k)`` that :mod:`bandit_envs.hardness` and
:mod:`bandit_envs.lower_bound` share (a module of its own: neither imports the other
for it)."""

from __future__ import annotations

import operator

import numpy as np

__all__ = ["check_means_k"]


def check_means_k(means: object, k: object) -> tuple[np.ndarray, int]:
    """Validate ``means`` and ``k``; return ``(means as float64 array, k as int)``.

    Raises:
        ValueError: ``means`` is not a 1-D sequence of at least 2 finite numbers, or
            ``k`` is not an integer with ``1 <= k < n_arms`` (the message names the value).
    """
    arr = np.asarray(means, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError(f"means must be a 1-D sequence of numbers, got shape {arr.shape}")
    if arr.size < 2:
        raise ValueError(
            f"means must hold at least 2 arms for top-k identification, got {arr.size}"
        )
    if not np.all(np.isfinite(arr)):
        bad = arr[~np.isfinite(arr)][0]
        raise ValueError(f"means must be finite, got {bad}")
    if isinstance(k, bool):
        raise ValueError(f"k must be an integer, got {k!r}")
    try:
        k_int = operator.index(k)  # type: ignore[arg-type]
    except TypeError:
        raise ValueError(f"k must be an integer, got {k!r}") from None
    if not 1 <= k_int < arr.size:
        raise ValueError(f"k must satisfy 1 <= k < n_arms (= {arr.size}), got k = {k_int}")
    return arr, k_int
