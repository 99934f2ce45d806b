"""Batch scheduling shared by every scripted agent: Jun et al.'s RoundRobin.

RoundRobin (Jun, Jamieson, Nowak, Zhu 2016, Algorithm 1) fills one batch of at most
``b`` pulls, at most ``r`` per arm, each pull going to the arm of ``A`` with the fewest
pulls counting those already in the batch. Line 5 of the paper reads ``a_l <= r``; it
must be ``a_l < r`` (paper-notes), which is what the cap below does.

:func:`round_robin` computes the same allocation as the pull-by-pull loop in
O(|A| log(max count)) by water filling, which matters when ``b`` is in the thousands:
it finds the highest level ``h`` such that raising every arm to ``min(h, T_l + cap_l)``
fits in the batch, then gives the few pulls left, one each, to arms sitting exactly at
level ``h``. Ties (arms at the same level) are broken uniformly at random with the
caller's generator.
"""

from __future__ import annotations

import numpy as np

__all__ = ["round_robin"]


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
    counts = np.asarray(counts, dtype=np.int64)
    caps = np.asarray(caps, dtype=np.int64)
    supply = int(caps.sum())
    if total >= supply:
        return caps.copy()
    if total <= 0:
        return np.zeros_like(caps)
    if total == 1:
        # One pull: to an arm with the fewest pulls among those that may take one.
        open_ = np.flatnonzero(caps > 0)
        level = counts[open_]
        lowest = open_[level == level.min()]
        pick = lowest[0] if rng is None or lowest.shape[0] == 1 else lowest[rng.integers(lowest.shape[0])]
        alloc = np.zeros_like(caps)
        alloc[pick] = 1
        return alloc
    top = counts + caps
    lo = int(counts.min())  # filled(lo) == 0 <= total
    hi = int(top.max())  # filled(hi) == supply > total
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if int(np.clip(mid - counts, 0, caps).sum()) <= total:
            lo = mid
        else:
            hi = mid
    alloc = np.clip(lo - counts, 0, caps)
    short = total - int(alloc.sum())
    if short > 0:
        # Arms that sit at level lo and may take one more pull all move to lo + 1 at
        # level hi = lo + 1; there are more of them than pulls left.
        can = np.flatnonzero((counts + alloc == lo) & (alloc < caps))
        if rng is None:
            chosen = can[:short]
        else:
            chosen = rng.choice(can, size=short, replace=False)
        alloc[chosen] += 1
    return alloc
