"""Batch scheduling shared by every scripted agent: Jun et al.'s RoundRobin.

RoundRobin (Jun, Jamieson, Nowak, Zhu 2016, Algorithm 1) fills one batch of at most
``b`` pulls, at most ``r`` per arm, each pull going to the arm of ``A`` with the fewest
pulls counting those already in the batch. Line 5 of the paper reads ``a_l <= r``; it
must be ``a_l < r`` (with ``<=`` an arm could take ``r + 1`` pulls), which is what the
cap below does.

The one implementation is compiled, :func:`agents.engine.round_robin` (water filling in
O(|A| log(max count)), ties uniformly at random); :func:`round_robin` is its NumPy
front end.
"""

from __future__ import annotations

import numpy as np

from agents import engine

__all__ = ["round_robin"]

_LOWEST = np.random.default_rng(0)  # never drawn from: lowest_first needs no randomness


def round_robin(
    counts: np.ndarray,
    caps: np.ndarray,
    total: int,
    rng: np.random.Generator | None,
) -> np.ndarray:
    """Allocate ``min(total, sum(caps))`` pulls over arms to keep their counts level.

    Args:
        counts: current pull counts ``T_l`` of the candidate arms.
        caps: most pulls each arm may get in this batch (``min(r, demand)``), >= 0.
        total: pulls available in this batch (``b``, or less near the budget's end).
        rng: breaks ties between arms at the same level; ``None``: lowest index first.

    Returns:
        int64 array ``a`` with ``0 <= a <= caps`` and ``sum(a) = min(total, sum(caps))``,
        equal to Jun et al.'s Algorithm 1 up to the order of tied arms.
    """
    counts = np.ascontiguousarray(counts, dtype=np.int64)
    caps = np.ascontiguousarray(caps, dtype=np.int64)
    if counts.shape != caps.shape or counts.ndim != 1:
        raise ValueError(f"counts {counts.shape} and caps {caps.shape} must be 1-D of one length")
    alloc = np.zeros_like(caps)
    if counts.shape[0] == 0:
        return alloc
    if (caps < 0).any():
        raise ValueError(f"caps {caps.tolist()} must be >= 0")
    engine.round_robin(
        counts, caps, int(total), _LOWEST if rng is None else rng, alloc, rng is None
    )
    return alloc
