"""The (b, r)-batch action space of Jun et al. (2016), Section 1.

``A = {a in {0, ..., r}^n : sum(a) <= b}``: a pull-count vector per step, at most ``r``
pulls of any one arm and at most ``b`` pulls in all.

* :class:`BatchPulls`: the action space of ``TopK-Batch-v0``;
* :class:`BatchedBatchPulls`: ``num_envs`` rows of it, the action space of the vector
  env (``gymnasium.vector.utils.batch_space`` of a :class:`BatchPulls`, registered here);
* :func:`count_masks`: the per-dimension action masks that sb3-contrib's
  ``MaskablePPO`` reads, for any number of rows;
* :class:`MaskedDiscrete`: a ``Discrete`` whose :meth:`~MaskedDiscrete.sample` draws
  only the choices its environment marks valid (``TopK-PullByPull-v0``).
"""

from __future__ import annotations

from copy import deepcopy
from typing import Any

import numpy as np
from gymnasium.spaces import Box, Discrete, MultiDiscrete
from gymnasium.vector.utils import batch_space

__all__ = ["BatchPulls", "BatchedBatchPulls", "MaskedDiscrete", "count_masks"]


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
            raise ValueError(f"repeat_limit={repeat_limit} must not exceed batch_size={batch_size}")
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

    def masks(self, cap: int | None, answering: bool = False) -> np.ndarray:
        """The action mask of one state in sb3-contrib's layout: :func:`count_masks` of one row.

        ``cap`` is the most pulls a sampling step may hold now (``None``: the episode
        is over, nothing is valid); ``answering``: the answer step.
        """
        caps = np.array([-1 if cap is None else cap], dtype=np.int64)
        return count_masks(self.n_arms, self.repeat_limit, caps, np.array([answering]))[0]

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


def count_masks(
    n_arms: int, repeat_limit: int, caps: np.ndarray, answering: np.ndarray | None = None
) -> np.ndarray:
    """Per-dimension action masks of pull-count vectors, in sb3-contrib's flat layout.

    Row ``i`` allows arm ``j`` the counts ``c <= caps[i]`` (a sampling step: ``caps[i]
    = min(r, b, pulls left)``; ``-1`` allows nothing) or, where ``answering[i]``, the
    counts 0 and 1 (an answer marks arms with 1; larger entries mark them too but are
    the same answer, so they are masked). Entry ``j * (r + 1) + c`` is arm ``j``'s count
    ``c``: the concatenated per-dimension masks that ``MaskablePPO`` reads for a
    ``MultiDiscrete([r + 1] * n_arms)`` (``sum(nvec)`` entries per row).

    Per-dimension masks cannot express the sum rule ``sum(a) <= b``: a vector whose
    every entry is allowed may still ask for more than ``b`` pulls (or than the budget
    has left). What they give exactly is each coordinate's projection of the valid set:
    ``c`` is allowed for arm ``j`` iff some valid action has ``a_j = c``.

    Returns:
        bool array of shape ``(len(caps), n_arms * (repeat_limit + 1))``.
    """
    limit = np.asarray(caps, dtype=np.int64)
    if answering is not None:
        limit = np.where(answering, np.minimum(1, repeat_limit), limit)
    per_arm = np.arange(repeat_limit + 1)[None, :] <= limit[:, None]
    rows = limit.shape[0]
    return np.broadcast_to(per_arm[:, None, :], (rows, n_arms, repeat_limit + 1)).reshape(rows, -1)


class BatchedBatchPulls(Box):
    """``num_envs`` rows of a :class:`BatchPulls`: the action space of the vector env.

    A ``Box(0, r, (num_envs, n_arms), int64)`` (what Gymnasium makes of a batched
    ``MultiDiscrete``, so vector utilities that iterate over its rows work) whose
    :meth:`contains` also checks every row's sum against ``b`` and whose :meth:`sample`
    draws each row as :meth:`BatchPulls.sample` does. Per-row knobs, set by the vector
    env (arrays it updates in place, so samples follow its state):

    * ``sample_limit``: int array ``(num_envs,)``, the pulls each env's budget has left;
    * ``answer_rows``: bool array ``(num_envs,)``, the envs at their answer step, whose
      rows are answers (``answer_k`` entries equal to 1).

    Without them (the batched space of a ``SyncVectorEnv``, which knows no env's
    state), rows respect ``b`` and ``r`` but not the budget left nor the answer step.

    Args:
        single: the single env's space.
        num_envs: number of rows.
        seed: seed of the space's generator.
    """

    def __init__(
        self,
        single: BatchPulls,
        num_envs: int,
        seed: int | np.random.Generator | None = None,
    ) -> None:
        super().__init__(
            0, single.repeat_limit, shape=(num_envs, single.n_arms), dtype=np.int64, seed=seed
        )
        self.num_envs = int(num_envs)
        self.n_arms = single.n_arms
        self.batch_size = single.batch_size
        self.repeat_limit = single.repeat_limit
        self.max_pulls = single.max_pulls
        self.sample_limit: np.ndarray | None = None
        self.answer_rows: np.ndarray | None = None
        self.answer_k: int | None = None

    def contains(self, x: Any) -> bool:
        """Whether every row of ``x`` is in ``A``: entries in ``{0..r}``, row sums at most ``b``."""
        if not super().contains(x):
            return False
        return self.batch_size is None or bool(np.all(np.sum(x, axis=1) <= self.batch_size))

    def sample(self, mask: Any = None, probability: Any = None) -> np.ndarray:
        """One :meth:`BatchPulls.sample` per row, drawn with whole-array operations."""
        if mask is not None or probability is not None:
            raise NotImplementedError(
                "BatchedBatchPulls.sample does not take a mask or probability"
            )
        rng = self.np_random
        m, n = self.num_envs, self.n_arms
        cap = np.full(m, self.max_pulls, dtype=np.int64)
        if self.sample_limit is not None:
            np.minimum(cap, self.sample_limit, out=cap)
        totals = np.where(cap >= 1, rng.integers(1, np.maximum(cap, 1) + 1), 0)
        arms = rng.integers(n, size=int(totals.sum()))
        flat = np.repeat(np.arange(m) * n, totals) + arms
        counts = np.bincount(flat, minlength=m * n).reshape(m, n)
        action = np.minimum(counts, self.repeat_limit).astype(np.int64)
        if self.answer_rows is not None and self.answer_k is not None and self.answer_rows.any():
            rows = np.flatnonzero(self.answer_rows)
            keys = rng.random((rows.shape[0], n))
            chosen = np.argpartition(keys, self.answer_k - 1, axis=1)[:, : self.answer_k]
            answer = np.zeros((rows.shape[0], n), dtype=np.int64)
            np.put_along_axis(answer, chosen, 1, axis=1)
            action[rows] = answer
        return action

    def __repr__(self) -> str:
        """A string that names the rows, n, b and r."""
        return (
            f"BatchedBatchPulls(num_envs={self.num_envs}, n_arms={self.n_arms}, "
            f"batch_size={self.batch_size}, repeat_limit={self.repeat_limit})"
        )

    def __eq__(self, other: object) -> bool:
        """Equal when the rows, n, b and r are equal."""
        return (
            isinstance(other, BatchedBatchPulls)
            and self.num_envs == other.num_envs
            and self.n_arms == other.n_arms
            and self.batch_size == other.batch_size
            and self.repeat_limit == other.repeat_limit
        )

    __hash__ = None  # type: ignore[assignment]


@batch_space.register(BatchPulls)
def _batch_batch_pulls(space: BatchPulls, n: int = 1) -> BatchedBatchPulls:
    """``gymnasium.vector.utils.batch_space`` of a :class:`BatchPulls`."""
    return BatchedBatchPulls(space, n, seed=deepcopy(space.np_random))


class MaskedDiscrete(Discrete):
    """``Discrete(n)`` whose :meth:`sample` draws only the choices marked valid now.

    A genuine :class:`~gymnasium.spaces.Discrete` (``contains`` and batching are
    Discrete's; sb3-contrib builds its masked categorical head for it). The environment
    keeps ``valid`` (an ``int8`` array of length ``n``, 1 = valid, updated in place)
    equal to its :meth:`action_masks`, so that ``action_space.sample()`` plays a
    random valid episode, as :class:`BatchPulls` does. An explicit ``mask`` wins;
    ``valid=None`` (or no valid choice) samples as ``Discrete`` does.
    """

    def __init__(self, n: int, seed: int | np.random.Generator | None = None) -> None:
        super().__init__(n, seed=seed)
        self.valid: np.ndarray | None = None

    def sample(self, mask: Any = None, probability: Any = None) -> np.int64:
        """A uniform valid choice (``mask``/``probability`` as for ``Discrete``)."""
        if mask is None and probability is None and self.valid is not None and self.valid.any():
            mask = self.valid
        return super().sample(mask=mask, probability=probability)

    def __repr__(self) -> str:
        """``MaskedDiscrete(n)``."""
        return f"MaskedDiscrete({self.n})"
