"""The (b, r)-batch action space of Jun et al. (2016), Section 1.

``A = {a in {0, ..., r}^n : sum(a) <= b}``: a pull-count vector per step, at most ``r``
pulls of any one arm and at most ``b`` pulls in all.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.spaces import MultiDiscrete

__all__ = ["BatchPulls"]


class BatchPulls(MultiDiscrete):
    """``MultiDiscrete([r + 1] * n)`` restricted to vectors whose sum is at most ``b``.

    It is a :class:`~gymnasium.spaces.MultiDiscrete` (so stable-baselines3 builds its
    usual policy heads for it) whose :meth:`contains` also checks the sum and whose
    :meth:`sample` draws only members of ``A``.

    Two knobs narrow what :meth:`sample` draws, never what :meth:`contains` accepts;
    the environment sets them so that random agents stay valid:

    * ``sample_limit``: the most pulls a sample may hold in all (the budget left);
    * ``answer_k``: when set, :meth:`sample` draws an answer (``answer_k`` entries equal
      to 1, the rest 0) instead of a batch.

    Args:
        n_arms: number of arms ``n``.
        batch_size: ``b``, the most pulls per step; ``None`` means no limit.
        repeat_limit: ``r``, the most pulls of one arm per step.
        seed: seed of the space's own generator (``np_random``).
    """

    def __init__(
        self,
        n_arms: int,
        batch_size: int | None,
        repeat_limit: int,
        seed: int | np.random.Generator | None = None,
    ) -> None:
        if repeat_limit < 1:
            raise ValueError(f"repeat_limit={repeat_limit} must be >= 1")
        if batch_size is not None and repeat_limit > batch_size:
            raise ValueError(
                f"repeat_limit={repeat_limit} must not exceed batch_size={batch_size}"
            )
        super().__init__(np.full(n_arms, repeat_limit + 1, dtype=np.int64), seed=seed)
        self.n_arms = int(n_arms)
        self.batch_size = None if batch_size is None else int(batch_size)
        self.repeat_limit = int(repeat_limit)
        self.sample_limit: int | None = None
        self.answer_k: int | None = None

    @property
    def max_pulls(self) -> int:
        """The most pulls one member of ``A`` can hold: ``min(b, n r)``."""
        full = self.n_arms * self.repeat_limit
        return full if self.batch_size is None else min(self.batch_size, full)

    def contains(self, x: Any) -> bool:
        """Whether ``x`` is in ``A`` (entries in ``{0..r}`` and sum at most ``b``)."""
        if not super().contains(x):
            return False
        return self.batch_size is None or int(np.sum(x)) <= self.batch_size

    def sample(self, mask: Any = None, probability: Any = None) -> np.ndarray:
        """Draw a member of ``A`` with at least one pull (or an answer, see above).

        The total is uniform on ``1..min(b, n r, sample_limit)``; the pulls go to
        uniformly drawn arms, each arm's count capped at ``r``.
        """
        if mask is not None or probability is not None:
            raise NotImplementedError("BatchPulls.sample does not take a mask or probability")
        rng = self.np_random
        n = self.n_arms
        if self.answer_k is not None:
            action = np.zeros(n, dtype=np.int64)
            action[rng.choice(n, size=self.answer_k, replace=False)] = 1
            return action
        cap = self.max_pulls
        if self.sample_limit is not None:
            cap = min(cap, self.sample_limit)
        if cap < 1:
            return np.zeros(n, dtype=np.int64)
        total = int(rng.integers(1, cap + 1))
        counts = np.bincount(rng.integers(n, size=total), minlength=n)
        return np.minimum(counts, self.repeat_limit).astype(np.int64)

    def __repr__(self) -> str:
        """A string that names n, b and r."""
        return (
            f"BatchPulls(n_arms={self.n_arms}, batch_size={self.batch_size}, "
            f"repeat_limit={self.repeat_limit})"
        )

    def __eq__(self, other: object) -> bool:
        """Equal when n, b and r are equal."""
        return (
            isinstance(other, BatchPulls)
            and self.n_arms == other.n_arms
            and self.batch_size == other.batch_size
            and self.repeat_limit == other.repeat_limit
        )

    __hash__ = None  # type: ignore[assignment]
