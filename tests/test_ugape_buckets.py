"""UGapE's SELECT-ARM on pull-count buckets (agents/lucb/ugape.py) equals the full computation.

Gabillon, Ghavamzadeh, Lazaric (NIPS 2012), Algorithm 3 (SELECT-ARM): ``B_k``, ``J(t)``,
``u_t``, ``l_t``. The compiled kernel computes them on buckets of arms sharing a pull
count (O(D) per step) and falls back to the two quickselects over all arms when the
bucket order cannot decide a tie. Checked here:

* ``prm[P_FULL] = 1`` plays every step by the full computation and raises if the bucket
  computation (when it claims to be exact) differs in ``B_J(t)``, ``l_t``, ``u_t``, the
  widths or ``J(t)``; those episodes equal the default ones (the fallback branch of the
  kernel: its status and answer);
* a tie made by rounding (two means one ulp apart, equal ``U`` and equal ``B``) is
  refused by the bucket computation, and the full one breaks it by the tie keys.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import agents
import bandit_envs
from agents.lucb import ugape as ug
from agents.lucb.ugape import UGapEb, UGapEc


class _FullEc(UGapEc):
    def params(self) -> np.ndarray:
        prm = super().params()
        prm[ug.P_FULL] = 1.0
        return prm


class _FullEb(UGapEb):
    def params(self) -> np.ndarray:
        prm = super().params()
        prm[ug.P_FULL] = 1.0
        return prm


def _row(res: agents.EpisodeResult) -> dict:
    return res.as_row() | {"wall_time": 0}


def _instance(kind: str, n: int, k: int):
    rng = np.random.default_rng(n + k)
    if kind == "categorical":
        probs = rng.dirichlet(np.ones(3), size=n)
        return bandit_envs.instances.from_categorical(probs, np.array([0.0, 0.5, 1.0]), k=k)
    if kind == "two-level":  # many arms sharing (mean, count): ties of U, L and B
        means = np.full(n, 0.5)
        means[:k] = 0.6
        return bandit_envs.instances.from_means(means, k=k)
    means = rng.uniform(0.2, 0.8, size=n)
    return bandit_envs.instances.from_means(means, k=k, distribution="gaussian", sigma=0.5)


@pytest.mark.parametrize(
    "cls, full, kind, n, k, extra",
    [
        (UGapEb, _FullEb, "two-level", 40, 4, {"setting": "fixed_budget", "budget": 1200}),
        (UGapEb, _FullEb, "gaussian", 30, 5, {"setting": "fixed_budget", "budget": 900}),
        (UGapEc, _FullEc, "two-level", 40, 10, {"setting": "fixed_budget", "budget": 1200}),
        (UGapEc, _FullEc, "categorical", 20, 3, {"setting": "fixed_budget", "budget": 600}),
        (
            UGapEc,
            _FullEc,
            "gaussian",
            12,
            2,
            {"setting": "fixed_confidence", "max_batches": 800, "batch_size": 2, "repeat_limit": 1},
        ),
    ],
)
def test_bucket_select_equals_the_full_select(cls, full, kind, n, k, extra):
    env = gym.make("TopK-Batch-v0", instance=_instance(kind, n, k), answer="agent", **extra)
    for seed in (1, 2, 3):
        fast = agents.run_episode(env, cls(seed=seed), seed=seed)
        counts = env.unwrapped._counts.copy()
        ref = agents.run_episode(env, full(seed=seed), seed=seed)  # raises on a difference
        assert _row(fast) == _row(ref)
        assert np.array_equal(counts, env.unwrapped._counts)
        assert fast.pulls > 2 * n


def test_rounding_tie_falls_back_to_the_full_select():
    # two arms with one pull, means one ulp apart: U = 1.5 and B = 2.0 for both (rounding),
    # so J(t) (m = 1) is the arm of the smaller key, which the bucket order (mean) can't see
    means = np.array([0.5, np.nextafter(0.5, 1.0)])
    counts = np.ones(2, dtype=np.int64)
    for keys, j in (((0.2, 0.7), 0), ((0.7, 0.2), 1)):
        tb = np.array(keys)
        I, F = ug._build(counts, means, tb, 1)
        assert means[0] + 1.0 == means[1] + 1.0
        res = ug._select(I, F, means, 1.0, 1)
        full = ug._select_full(I, F, means, counts, 1.0, 1)
        assert full[0] == 2.0 and full[1] == j  # l_t: the only arm of J(t)
        assert list(np.flatnonzero(I[ug.FJ, :2])) == [j]
        assert not res[5] or res[:5] == full  # exact only if it agrees
        if j == 0:  # the bucket order puts the larger mean in J: refused
            assert not res[5]
